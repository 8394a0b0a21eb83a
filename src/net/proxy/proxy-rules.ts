// The service proxy's rule set, kube-proxy iptables-mode style: services, endpoints and the node in, iptables-restore text for our own chains out. Pure.
import { createHash } from 'node:crypto';
import type { Endpoints } from '../../core/api/endpoints.js';
import type { Service, ServicePort } from '../../core/api/service.js';

/** Entry chain of the nat table (from PREROUTING and OUTPUT) and of the filter table (from INPUT, FORWARD and OUTPUT, new connections). */
export const SERVICES_CHAIN = 'MINIK8S-SERVICES';
/** Reached from the end of MINIK8S-SERVICES for destinations that are this machine's own addresses. */
export const NODEPORTS_CHAIN = 'MINIK8S-NODEPORTS';
/** Jumped to from nat POSTROUTING: masquerades what MARK-MASQ marked. */
export const POSTROUTING_CHAIN = 'MINIK8S-POSTROUTING';
export const MARK_MASQ_CHAIN = 'MINIK8S-MARK-MASQ';
/** Jumped to from filter FORWARD: lets marked service traffic and its replies past a DROP policy (Docker's). */
export const FORWARD_CHAIN = 'MINIK8S-FORWARD';
export const SVC_PREFIX = 'MINIK8S-SVC-';
export const SEP_PREFIX = 'MINIK8S-SEP-';
/** The bit MARK-MASQ sets and POSTROUTING looks for (kube-proxy's). */
export const MASQ_MARK = '0x4000';
/** Kubernetes' default ClientIP stickiness: three hours. */
export const DEFAULT_AFFINITY_SECONDS = 10_800;

export type Table = 'nat' | 'filter';

/** A jump from a built-in chain into ours; the applier inserts missing ones at position 1. */
export interface ChainJump {
  table: Table;
  chain: string;
  /** The matches before `-j target`, as iptables-save prints them. */
  matches: string;
  target: string;
}

/** In the order they should end up first in their built-in chains. */
export const JUMPS: readonly ChainJump[] = [
  { table: 'nat', chain: 'PREROUTING', matches: '-m comment --comment "minik8s service portals"', target: SERVICES_CHAIN },
  { table: 'nat', chain: 'OUTPUT', matches: '-m comment --comment "minik8s service portals"', target: SERVICES_CHAIN },
  { table: 'nat', chain: 'POSTROUTING', matches: '-m comment --comment "minik8s postrouting rules"', target: POSTROUTING_CHAIN },
  { table: 'filter', chain: 'INPUT', matches: '-m conntrack --ctstate NEW -m comment --comment "minik8s service portals"', target: SERVICES_CHAIN },
  { table: 'filter', chain: 'FORWARD', matches: '-m conntrack --ctstate NEW -m comment --comment "minik8s service portals"', target: SERVICES_CHAIN },
  { table: 'filter', chain: 'FORWARD', matches: '-m comment --comment "minik8s forwarding rules"', target: FORWARD_CHAIN },
  { table: 'filter', chain: 'OUTPUT', matches: '-m conntrack --ctstate NEW -m comment --comment "minik8s service portals"', target: SERVICES_CHAIN },
];

/** An endpoint the node supplies itself for a service (node-local DNS behind kube-dns), instead of the Endpoints object's. */
export interface LocalServiceEndpoint {
  ip: string;
  port: number;
  /** Only service ports of this protocol use it; absent: every port. */
  protocol?: 'TCP' | 'UDP' | 'SCTP';
}

export interface ProxyRulesInput {
  services: readonly Service[];
  endpoints: readonly Endpoints[];
  /** All pods' addresses: traffic to a ClusterIP from outside it is masqueraded, so that replies come back through this node. */
  clusterCIDR: string;
  /** "namespace/name" -> endpoints on this node that replace the service's own (kube-system/kube-dns -> this node's DNS server). */
  localServiceEndpoints?: Readonly<Record<string, readonly LocalServiceEndpoint[]>>;
  /** Our chains present now, per table: those of ours (SVC/SEP) no longer wanted are deleted. */
  existingChains?: { nat?: readonly string[]; filter?: readonly string[] };
}

export interface TableRules {
  /** Every chain we declare (and so flush and rewrite), sorted: fixed ones first, then SVC and SEP chains. */
  chains: string[];
  rules: string[];
  /** Stale chains of ours: declared (flushed) and deleted. */
  deleteChains: string[];
}

export interface ProxyRules {
  nat: TableRules;
  filter: TableRules;
  stats: { services: number; servicePorts: number; endpoints: number; withoutEndpoints: number; staleChains: number };
}

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** RFC 4648 base32 (Go's base32.StdEncoding without padding: we only keep a prefix). */
function base32(bytes: Uint8Array): string {
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const b of bytes) {
    buffer = (buffer << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(buffer >>> (bits - 5)) & 31];
      bits -= 5;
    }
    buffer &= (1 << bits) - 1;
  }
  if (bits > 0) out += BASE32[(buffer << (5 - bits)) & 31];
  return out;
}

/** kube-proxy's chain-name hash: the first 16 base32 characters of a SHA-256, so that prefix + hash fits iptables' 28 characters. */
export function chainHash(text: string): string {
  return base32(createHash('sha256').update(text).digest()).slice(0, 16);
}

/** `ns/name:port`, or `ns/name` for an unnamed port: kube-proxy's ServicePortName, used in comments and hashes. */
export function servicePortName(namespace: string, name: string, port: string | undefined): string {
  return `${namespace}/${name}${port ? `:${port}` : ''}`;
}

export function serviceChainName(spn: string, protocol: string): string {
  return SVC_PREFIX + chainHash(spn + protocol);
}

export function endpointChainName(spn: string, protocol: string, endpoint: string): string {
  return SEP_PREFIX + chainHash(spn + protocol + endpoint);
}

/** The probability of picking endpoint i of n given the earlier ones were not picked: 1/(n-i), with ten decimals as kube-proxy prints it. */
export function formatProbability(i: number, n: number): string {
  return (1 / (n - i)).toFixed(10);
}

/** Dotted quad -> number, for sorting endpoints by address. */
function ipValue(ip: string): number {
  const parts = ip.split('.').map(Number);
  return parts.length === 4 && parts.every((p) => p >= 0 && p <= 255) ? parts.reduce((a, p) => a * 256 + p, 0) : Number.MAX_SAFE_INTEGER;
}

function byAddress(a: { ip: string; port: number }, b: { ip: string; port: number }): number {
  return ipValue(a.ip) - ipValue(b.ip) || a.ip.localeCompare(b.ip) || a.port - b.port;
}

function key(o: { metadata: { namespace?: string; name?: string } }): string {
  return `${o.metadata.namespace ?? 'default'}/${o.metadata.name}`;
}

/** The ready endpoints of one service port: addresses of the subsets whose port has the service port's name and protocol. */
function readyEndpoints(ep: Endpoints | undefined, port: ServicePort): { ip: string; port: number }[] {
  const found = new Map<string, { ip: string; port: number }>();
  for (const subset of ep?.subsets ?? []) {
    const p = (subset.ports ?? []).find((sp) => (sp.name ?? '') === (port.name ?? '') && (sp.protocol ?? 'TCP') === port.protocol);
    if (!p) continue;
    for (const a of subset.addresses ?? []) found.set(`${a.ip}:${p.port}`, { ip: a.ip, port: p.port });
  }
  return [...found.values()].sort(byAddress);
}

function quote(text: string): string {
  return `"${text.replaceAll('"', '')}"`;
}

/**
 * The complete rule set of our chains. Every chain is declared, so one `iptables-restore
 * --noflush` rewrites each of them whole and touches nothing else; the output is sorted, so
 * that equal inputs give equal text and the applier can skip a restore that changes nothing.
 */
export function renderProxyRules(input: ProxyRulesInput): ProxyRules {
  const endpointsByKey = new Map(input.endpoints.map((e) => [key(e), e]));
  const services = input.services.filter((s) => s.spec.clusterIP && s.spec.clusterIP !== 'None').sort((a, b) => key(a).localeCompare(key(b)));

  const natServices: string[] = [];
  const natNodePorts: string[] = [];
  const natPerService: string[] = [];
  const svcChains: string[] = [];
  const sepChains: string[] = [];
  const filterServices: string[] = [];
  const stats = { services: services.length, servicePorts: 0, endpoints: 0, withoutEndpoints: 0, staleChains: 0 };

  for (const svc of services) {
    const ns = svc.metadata.namespace ?? 'default';
    const name = svc.metadata.name!;
    const clusterIP = svc.spec.clusterIP!;
    const local = input.localServiceEndpoints?.[`${ns}/${name}`];
    const affinity =
      svc.spec.sessionAffinity === 'ClientIP' ? (svc.spec.sessionAffinityConfig?.clientIP?.timeoutSeconds ?? DEFAULT_AFFINITY_SECONDS) : undefined;
    const ports = [...svc.spec.ports].sort((a, b) => (a.name ?? '').localeCompare(b.name ?? '') || a.port - b.port || a.protocol.localeCompare(b.protocol));
    for (const port of ports) {
      stats.servicePorts++;
      const spn = servicePortName(ns, name, port.name);
      const proto = port.protocol.toLowerCase();
      const match = `-p ${proto} -m comment --comment ${quote(`${spn} cluster IP`)} -m ${proto} --dport ${port.port}`;
      const nodePort = svc.spec.type !== 'ClusterIP' && port.nodePort ? port.nodePort : undefined;
      const eps = local
        ? local
            .filter((l) => !l.protocol || l.protocol === port.protocol)
            .map((l) => ({ ip: l.ip, port: l.port }))
            .sort(byAddress)
        : readyEndpoints(endpointsByKey.get(`${ns}/${name}`), port);

      if (eps.length === 0) {
        // Refused at once, as kube-proxy does, instead of a connection that hangs or leaves the node.
        stats.withoutEndpoints++;
        const reject = '-j REJECT --reject-with icmp-port-unreachable';
        const none = `-m comment --comment ${quote(`${spn} has no endpoints`)}`;
        filterServices.push(`-A ${SERVICES_CHAIN} -d ${clusterIP}/32 -p ${proto} ${none} -m ${proto} --dport ${port.port} ${reject}`);
        if (nodePort) filterServices.push(`-A ${SERVICES_CHAIN} -p ${proto} ${none} -m addrtype --dst-type LOCAL -m ${proto} --dport ${nodePort} ${reject}`);
        continue;
      }

      stats.endpoints += eps.length;
      const svcChain = serviceChainName(spn, port.protocol);
      svcChains.push(svcChain);
      natServices.push(`-A ${SERVICES_CHAIN} -d ${clusterIP}/32 ${match} -j ${svcChain}`);
      // Replies must come back through this node to be un-DNATed: masquerade senders outside the pod network
      // (the node's host, other machines). Node-local endpoints answer here anyway.
      if (!local) natPerService.push(`-A ${svcChain} ! -s ${input.clusterCIDR} -d ${clusterIP}/32 ${match} -j ${MARK_MASQ_CHAIN}`);
      if (nodePort) {
        const np = `-p ${proto} -m comment --comment ${quote(spn)} -m ${proto} --dport ${nodePort}`;
        natNodePorts.push(`-A ${NODEPORTS_CHAIN} ${np} -j ${MARK_MASQ_CHAIN}`, `-A ${NODEPORTS_CHAIN} ${np} -j ${svcChain}`);
      }
      const seps = eps.map((ep) => ({ ...ep, text: `${ep.ip}:${ep.port}`, chain: endpointChainName(spn, port.protocol, `${ep.ip}:${ep.port}`) }));
      const recent = (sep: string) => `-m recent --name ${sep} --mask 255.255.255.255 --rsource`;
      if (affinity !== undefined) {
        // A client seen within the timeout goes back to the endpoint it had.
        for (const sep of seps) {
          natPerService.push(
            `-A ${svcChain} -m comment --comment ${quote(`${spn} -> ${sep.text}`)} ${recent(sep.chain)} --rcheck --seconds ${affinity} --reap -j ${sep.chain}`,
          );
        }
      }
      seps.forEach((sep, i) => {
        const pick = i < seps.length - 1 ? ` -m statistic --mode random --probability ${formatProbability(i, seps.length)}` : '';
        natPerService.push(`-A ${svcChain} -m comment --comment ${quote(`${spn} -> ${sep.text}`)}${pick} -j ${sep.chain}`);
      });
      for (const sep of seps) {
        sepChains.push(sep.chain);
        // Hairpin: an endpoint reaching itself through the service must not see its own address as the source.
        natPerService.push(`-A ${sep.chain} -s ${sep.ip}/32 -m comment --comment ${quote(spn)} -j ${MARK_MASQ_CHAIN}`);
        const set = affinity !== undefined ? ` ${recent(sep.chain)} --set` : '';
        natPerService.push(`-A ${sep.chain} -p ${proto} -m comment --comment ${quote(spn)}${set} -m ${proto} -j DNAT --to-destination ${sep.text}`);
      }
    }
  }

  natServices.push(
    `-A ${SERVICES_CHAIN} ! -d 127.0.0.0/8 -m comment --comment "minik8s service nodeports; this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j ${NODEPORTS_CHAIN}`,
  );
  const natFixed = [SERVICES_CHAIN, NODEPORTS_CHAIN, POSTROUTING_CHAIN, MARK_MASQ_CHAIN];
  const natChains = [...natFixed, ...[...svcChains].sort(), ...[...new Set(sepChains)].sort()];
  const filterChains = [SERVICES_CHAIN, FORWARD_CHAIN];
  const stale = (existing: readonly string[] | undefined, wanted: readonly string[]) => {
    const keep = new Set(wanted);
    return [...new Set(existing ?? [])].filter((c) => (c.startsWith(SVC_PREFIX) || c.startsWith(SEP_PREFIX)) && !keep.has(c)).sort();
  };
  const nat: TableRules = {
    chains: natChains,
    rules: [
      ...natServices,
      ...natNodePorts,
      `-A ${POSTROUTING_CHAIN} -m mark ! --mark ${MASQ_MARK}/${MASQ_MARK} -j RETURN`,
      // Cleared before masquerading so that a packet encapsulated again (VXLAN) is not masqueraded twice.
      `-A ${POSTROUTING_CHAIN} -j MARK --xor-mark ${MASQ_MARK}`,
      `-A ${POSTROUTING_CHAIN} -m comment --comment "minik8s service traffic requiring SNAT" -j MASQUERADE`,
      `-A ${MARK_MASQ_CHAIN} -j MARK --or-mark ${MASQ_MARK}`,
      ...natPerService,
    ],
    deleteChains: stale(input.existingChains?.nat, natChains),
  };
  const filter: TableRules = {
    chains: filterChains,
    rules: [
      ...filterServices,
      `-A ${FORWARD_CHAIN} -m comment --comment "minik8s forwarding rules" -m mark --mark ${MASQ_MARK}/${MASQ_MARK} -j ACCEPT`,
      `-A ${FORWARD_CHAIN} -m comment --comment "minik8s forwarding conntrack rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT`,
    ],
    deleteChains: stale(input.existingChains?.filter, filterChains),
  };
  stats.staleChains = nat.deleteChains.length + filter.deleteChains.length;
  return { nat, filter, stats };
}

/**
 * One table's `iptables-restore --noflush` input: declaring a chain flushes it, so each of ours is
 * rewritten whole; stale ones are flushed, then deleted once nothing refers to them. `extra` lines
 * (the applier's missing jumps) go before COMMIT.
 */
export function restoreText(table: Table, rules: TableRules, extra: readonly string[] = []): string {
  return [
    `*${table}`,
    ...rules.chains.map((c) => `:${c} - [0:0]`),
    ...rules.deleteChains.map((c) => `:${c} - [0:0]`),
    ...rules.rules,
    ...rules.deleteChains.map((c) => `-X ${c}`),
    ...extra,
    'COMMIT',
    '',
  ].join('\n');
}
