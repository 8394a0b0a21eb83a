// The VXLAN overlay's desired state from the Node objects (flannel's scheme), and the ip/bridge commands that move the observed state there. Pure.
import type { Node } from '../../core/api/node.js';
import { cidrContains, formatIpv4Cidr, parseIpv4Cidr } from '../../core/api/ipv4.js';
import type { NetCommand } from '../net-command.js';

/** The MAC of a node's VXLAN device, which the node writes on its own Node (as flannel's backend-data). */
export const VTEP_MAC_ANNOTATION = 'minik8s.io/vtep-mac';
/** The address VXLAN packets for the node's pods are sent to (flannel's public-ip). */
export const PUBLIC_IP_ANNOTATION = 'minik8s.io/public-ip';

/** A peer's pod range is reached through its VTEP, the .0 address of that range, which sits on the peer's VXLAN device. */
export interface OverlayRoute {
  dst: string;
  via: string;
}
export interface OverlayNeighbour {
  ip: string;
  mac: string;
}
/** Frames for a VTEP's MAC go, in UDP, to the node's public address. */
export interface OverlayFdbEntry {
  mac: string;
  dst: string;
}

export interface OverlayState {
  routes: OverlayRoute[];
  neighbours: OverlayNeighbour[];
  fdb: OverlayFdbEntry[];
}

/** What the kernel shows on the device, less what it manages itself. */
export interface ObservedOverlay {
  /** Routes on the device; `via` absent for routes without a gateway. */
  routes: { dst: string; via?: string; onlink: boolean }[];
  neighbours: { ip: string; mac?: string; permanent: boolean }[];
  fdb: { mac: string; dst?: string }[];
}

export interface OverlaySelf {
  name: string;
  podCIDR: string;
  /** Where this node's VXLAN packets leave from: peers on this very address share our network namespace. */
  publicIP: string;
}

export interface SkippedNode {
  name: string;
  reason: string;
}

const MAC = /^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/;
const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

function isIPv4(text: string): boolean {
  const m = IPV4.exec(text);
  return m?.slice(1).every((o) => Number(o) <= 255) ?? false;
}

/** The VTEP address of a pod range: its first (network) address, as flannel gives its VXLAN device. */
export function vtepAddress(podCIDR: string): string {
  const range = parseIpv4Cidr(podCIDR);
  if (!range) throw new Error(`invalid pod CIDR "${podCIDR}": expected an aligned IPv4 range such as 10.244.1.0/24`);
  return formatIpv4Cidr({ base: range.base, bits: 32 }).replace(/\/32$/, '');
}

function overlaps(a: string, b: string): boolean {
  return cidrContains(a, b) || cidrContains(b, a);
}

/**
 * The routes, neighbours and FDB entries this node needs: one of each for every other node that
 * has a pod CIDR and has published its VTEP. Nodes that cannot be reached this way are skipped
 * with the reason (a node that runs without the overlay, or one on this very network namespace).
 */
export function desiredOverlay(input: { self: OverlaySelf; nodes: readonly Node[] }): { state: OverlayState; skipped: SkippedNode[] } {
  const { self } = input;
  const state: OverlayState = { routes: [], neighbours: [], fdb: [] };
  const skipped: SkippedNode[] = [];
  const taken: { name: string; cidr: string }[] = [{ name: self.name, cidr: self.podCIDR }];
  const macs = new Map<string, string>();
  // By name, so that which of two conflicting nodes wins does not depend on the informer's order.
  const peers = [...input.nodes].filter((n) => n.metadata.name !== self.name).sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));
  for (const node of peers) {
    const name = node.metadata.name ?? '';
    const skip = (reason: string) => skipped.push({ name, reason });
    const podCIDR = node.spec?.podCIDR;
    const mac = node.metadata.annotations?.[VTEP_MAC_ANNOTATION]?.toLowerCase();
    const publicIP = node.metadata.annotations?.[PUBLIC_IP_ANNOTATION];
    if (!podCIDR) {
      skip('it has no pod CIDR');
      continue;
    }
    if (!parseIpv4Cidr(podCIDR)) {
      skip(`its pod CIDR "${podCIDR}" is not an IPv4 range`);
      continue;
    }
    if (mac === undefined || publicIP === undefined) {
      skip(`it has published no VTEP (${VTEP_MAC_ANNOTATION}, ${PUBLIC_IP_ANNOTATION}): it runs without the overlay, or its overlay has not started`);
      continue;
    }
    if (!MAC.test(mac) || mac === '00:00:00:00:00:00' || (parseInt(mac.slice(0, 2), 16) & 1) === 1) {
      skip(`its VTEP MAC "${mac}" is not a unicast MAC address`);
      continue;
    }
    if (!isIPv4(publicIP) || publicIP.startsWith('127.') || publicIP === '0.0.0.0') {
      skip(`its public IP "${publicIP}" cannot be sent to from another machine`);
      continue;
    }
    if (publicIP === self.publicIP) {
      skip(`it shares this node's address ${publicIP}: both run in one network namespace, where one VXLAN device serves`);
      continue;
    }
    const clash = taken.find((t) => overlaps(t.cidr, podCIDR));
    if (clash) {
      skip(`its pod CIDR ${podCIDR} overlaps ${clash.name === self.name ? 'this node' : `node ${clash.name}`}'s ${clash.cidr}`);
      continue;
    }
    const sameMac = macs.get(mac);
    if (sameMac !== undefined) {
      skip(`its VTEP MAC ${mac} is node ${sameMac}'s too`);
      continue;
    }
    taken.push({ name, cidr: podCIDR });
    macs.set(mac, name);
    const vtep = vtepAddress(podCIDR);
    state.routes.push({ dst: podCIDR, via: vtep });
    state.neighbours.push({ ip: vtep, mac });
    state.fdb.push({ mac, dst: publicIP });
  }
  return { state, skipped };
}

/** True when a Node update changes what the overlay reads of it (its pod CIDR or VTEP); heartbeats do not. */
export function overlayFieldsChanged(old: Node, node: Node): boolean {
  const a = old.metadata.annotations ?? {};
  const b = node.metadata.annotations ?? {};
  return old.spec?.podCIDR !== node.spec?.podCIDR || a[VTEP_MAC_ANNOTATION] !== b[VTEP_MAC_ANNOTATION] || a[PUBLIC_IP_ANNOTATION] !== b[PUBLIC_IP_ANNOTATION];
}

// ---- Observed state, from the tools' JSON ---------------------------------------------------

function parseJsonArray(text: string, what: string): Record<string, unknown>[] {
  const trimmed = text.trim();
  // Older tools print nothing at all for an empty table.
  if (trimmed === '') return [];
  const parsed = JSON.parse(trimmed) as unknown;
  if (!Array.isArray(parsed)) throw new Error(`unexpected ${what} output: not a JSON array`);
  return parsed.filter((e): e is Record<string, unknown> => typeof e === 'object' && e !== null);
}

/** A bare address in a route's dst is a /32; `default` is 0.0.0.0/0. */
function routeDst(dst: string): string {
  if (dst === 'default') return '0.0.0.0/0';
  return dst.includes('/') ? dst : `${dst}/32`;
}

/** `ip -4 -j route show dev D`: the routes of the main table through the device, less the kernel's own. */
export function parseRoutes(text: string): ObservedOverlay['routes'] {
  return parseJsonArray(text, 'ip route')
    .filter((r) => r.protocol !== 'kernel' && typeof r.dst === 'string' && (r.type === undefined || r.type === 'unicast'))
    .map((r) => ({
      dst: routeDst(r.dst as string),
      ...(typeof r.gateway === 'string' ? { via: r.gateway } : {}),
      onlink: Array.isArray(r.flags) && r.flags.includes('onlink'),
    }));
}

/** `ip -4 -j neigh show dev D`. */
export function parseNeighbours(text: string): ObservedOverlay['neighbours'] {
  return parseJsonArray(text, 'ip neigh')
    .filter((n) => typeof n.dst === 'string')
    .map((n) => ({
      ip: n.dst as string,
      ...(typeof n.lladdr === 'string' ? { mac: n.lladdr.toLowerCase() } : {}),
      permanent: Array.isArray(n.state) && n.state.includes('PERMANENT'),
    }));
}

/** `bridge -j fdb show dev D`. */
export function parseFdb(text: string): ObservedOverlay['fdb'] {
  return parseJsonArray(text, 'bridge fdb')
    .filter((f) => typeof f.mac === 'string')
    .map((f) => ({
      mac: (f.mac as string).toLowerCase(),
      ...(typeof f.dst === 'string' ? { dst: f.dst } : {}),
    }));
}

// ---- The difference, as commands ------------------------------------------------------------

const byKey =
  <T>(key: (t: T) => string) =>
  (a: T, b: T) =>
    key(a).localeCompare(key(b));

/**
 * The commands that turn `observed` into `desired` on `device`, touching only what differs:
 * removals first (route, then neighbour, then FDB entry, so no route points at a half-gone peer),
 * then additions in the opposite order (the FDB entry and neighbour exist before traffic is routed).
 * Everything on the device that is not desired goes: the device is ours alone. Neighbours the
 * kernel made itself (not permanent) are left to age out.
 */
export function overlayCommands(device: string, desired: OverlayState, observed: ObservedOverlay): NetCommand[] {
  const removeRoutes: NetCommand[] = [];
  const removeNeighbours: NetCommand[] = [];
  const removeFdb: NetCommand[] = [];
  const addFdb: NetCommand[] = [];
  const addNeighbours: NetCommand[] = [];
  const addRoutes: NetCommand[] = [];

  const wantedRoutes = new Map(desired.routes.map((r) => [r.dst, r]));
  for (const r of [...observed.routes].sort(byKey((r) => r.dst))) {
    if (!wantedRoutes.has(r.dst)) removeRoutes.push({ tool: 'ip', args: ['route', 'del', r.dst, 'dev', device] });
  }
  for (const r of [...desired.routes].sort(byKey((r) => r.dst))) {
    const seen = observed.routes.filter((o) => o.dst === r.dst);
    if (seen.length === 1 && seen[0]!.via === r.via && seen[0]!.onlink) continue;
    addRoutes.push({ tool: 'ip', args: ['route', 'replace', r.dst, 'via', r.via, 'dev', device, 'onlink'] });
  }

  const wantedNeighbours = new Map(desired.neighbours.map((n) => [n.ip, n]));
  for (const n of [...observed.neighbours].sort(byKey((n) => n.ip))) {
    if (n.permanent && !wantedNeighbours.has(n.ip)) removeNeighbours.push({ tool: 'ip', args: ['neigh', 'del', n.ip, 'dev', device] });
  }
  for (const n of [...desired.neighbours].sort(byKey((n) => n.ip))) {
    const seen = observed.neighbours.find((o) => o.ip === n.ip);
    if (seen?.permanent && seen.mac === n.mac) continue;
    addNeighbours.push({ tool: 'ip', args: ['neigh', 'replace', n.ip, 'lladdr', n.mac, 'dev', device, 'nud', 'permanent'] });
  }

  // A MAC has one destination here: a second `append` for a unicast MAC would be ignored, so a moved peer's entry is replaced by delete and append.
  const wantedFdb = new Map(desired.fdb.map((f) => [f.mac, f]));
  for (const f of [...observed.fdb].sort(byKey((f) => `${f.mac} ${f.dst ?? ''}`))) {
    const wanted = wantedFdb.get(f.mac);
    if (wanted && wanted.dst === f.dst) continue;
    removeFdb.push({ tool: 'bridge', args: ['fdb', 'del', f.mac, 'dev', device, ...(f.dst ? ['dst', f.dst] : [])] });
  }
  for (const f of [...desired.fdb].sort(byKey((f) => f.mac))) {
    if (observed.fdb.some((o) => o.mac === f.mac && o.dst === f.dst)) continue;
    addFdb.push({ tool: 'bridge', args: ['fdb', 'append', f.mac, 'dev', device, 'dst', f.dst] });
  }

  return [...removeRoutes, ...removeNeighbours, ...removeFdb, ...addFdb, ...addNeighbours, ...addRoutes];
}
