// Host routes from the master to nodes' pod ranges via the nodes' addresses (flannel's host-gw scheme), so the activator reaches pods: pure plan, thin apply.
import { cidrContains } from '../core/api/ipv4.js';
import { formatNetCommand, type NetCommand, type NetRunner } from './net-command.js';

/**
 * The routing protocol number our routes carry (`ip route ... proto 117`): how we tell our own
 * routes from everyone else's (the kernel's connected routes, a worker overlay's), so that we
 * replace and remove only those. 117 is unassigned in Linux's rtnetlink protocol list.
 */
export const POD_ROUTE_PROTO = '117';

export interface NodeRouteFacts {
  name: string;
  podCIDR?: string;
  internalIP?: string;
  ready: boolean;
}

/** A route of the main table, as `ip -j route show` lists it. */
export interface RouteEntry {
  dst: string;
  gateway?: string;
  dev?: string;
  ours: boolean;
}

/** How this machine reaches a node's address (`ip -j route get`). */
export interface Reachability {
  /** The address is one of this machine's own: the node is this machine, its pods are on a local bridge. */
  local: boolean;
  /** On a directly connected network (no gateway in between): the node can forward for us. */
  direct: boolean;
}

export interface PodRoutePlan {
  add: { cidr: string; via: string; node: string }[];
  remove: string[];
}

/** Parses `ip -j route show` output; a bare address is a /32. */
export function parseRoutes(json: string): RouteEntry[] {
  const list = JSON.parse(json || '[]') as { dst?: string; gateway?: string; dev?: string; protocol?: string }[];
  return list
    .filter((r) => typeof r.dst === 'string' && /^\d+\.\d+\.\d+\.\d+(\/\d+)?$/.test(r.dst))
    .map((r) => ({ dst: r.dst!.includes('/') ? r.dst! : `${r.dst}/32`, gateway: r.gateway, dev: r.dev, ours: r.protocol === POD_ROUTE_PROTO }));
}

/** Parses `ip -j route get ADDRESS` output. */
export function parseRouteGet(json: string): Reachability {
  const r = (JSON.parse(json || '[]') as { type?: string; gateway?: string }[])[0] ?? {};
  if (r.type === 'local') return { local: true, direct: false };
  return { local: false, direct: r.gateway === undefined && (r.type === undefined || r.type === 'unicast') };
}

/**
 * For every Ready node with a pod range inside the cluster's, at an address on a directly
 * connected network that is not this machine's own: a route to its range via that address,
 * unless someone else already routes that range (this machine's own bridge, a worker overlay
 * on this machine). Our routes for ranges no longer wanted (node gone, not Ready, moved) go.
 */
export function planPodRoutes(o: {
  nodes: readonly NodeRouteFacts[];
  clusterCIDR: string;
  routes: readonly RouteEntry[];
  reach: ReadonlyMap<string, Reachability>;
}): PodRoutePlan {
  const existing = new Map(o.routes.map((r) => [r.dst, r]));
  const wanted = new Map<string, { via: string; node: string }>();
  for (const n of o.nodes) {
    if (!n.ready || !n.podCIDR || !n.internalIP || !cidrContains(o.clusterCIDR, n.podCIDR)) continue;
    const reach = o.reach.get(n.internalIP);
    if (!reach || reach.local || !reach.direct) continue;
    const current = existing.get(n.podCIDR);
    if (current && !current.ours) continue;
    wanted.set(n.podCIDR, { via: n.internalIP, node: n.name });
  }
  const plan: PodRoutePlan = { add: [], remove: [] };
  for (const [cidr, w] of [...wanted].sort(([a], [b]) => a.localeCompare(b))) {
    if (existing.get(cidr)?.gateway !== w.via) plan.add.push({ cidr, via: w.via, node: w.node });
  }
  for (const r of o.routes) {
    if (r.ours && cidrContains(o.clusterCIDR, r.dst) && !wanted.has(r.dst)) plan.remove.push(r.dst);
  }
  plan.remove.sort();
  return plan;
}

export function podRouteCommands(plan: PodRoutePlan): NetCommand[] {
  return [
    ...plan.remove.map((cidr): NetCommand => ({ tool: 'ip', args: ['route', 'del', cidr, 'proto', POD_ROUTE_PROTO] })),
    ...plan.add.map((a): NetCommand => ({ tool: 'ip', args: ['route', 'replace', a.cidr, 'via', a.via, 'proto', POD_ROUTE_PROTO] })),
  ];
}

/** Reads the routes and the nodes' reachability, plans, and applies; returns the commands run. */
export async function syncPodRoutes(o: { nodes: readonly NodeRouteFacts[]; clusterCIDR: string; run: NetRunner }): Promise<string[]> {
  const routes = parseRoutes(await o.run({ tool: 'ip', args: ['-j', 'route', 'show', 'table', 'main'] }));
  const reach = new Map<string, Reachability>();
  for (const n of o.nodes) {
    if (!n.ready || !n.internalIP || reach.has(n.internalIP)) continue;
    try {
      reach.set(n.internalIP, parseRouteGet(await o.run({ tool: 'ip', args: ['-j', 'route', 'get', n.internalIP] })));
    } catch {
      // Unreachable from here (no route at all): no pod route through it either.
    }
  }
  const commands = podRouteCommands(planPodRoutes({ nodes: o.nodes, clusterCIDR: o.clusterCIDR, routes, reach }));
  for (const c of commands) await o.run(c);
  return commands.map(formatNetCommand);
}

/** Removes every route of ours inside the cluster's range (at shutdown). */
export async function removePodRoutes(o: { clusterCIDR: string; run: NetRunner }): Promise<string[]> {
  const routes = parseRoutes(await o.run({ tool: 'ip', args: ['-j', 'route', 'show', 'table', 'main'] }));
  const commands = podRouteCommands({ add: [], remove: routes.filter((r) => r.ours && cidrContains(o.clusterCIDR, r.dst)).map((r) => r.dst) });
  for (const c of commands) await o.run(c).catch(() => {});
  return commands.map(formatNetCommand);
}
