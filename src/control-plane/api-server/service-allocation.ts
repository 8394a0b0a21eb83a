// Pure decisions for Service cluster IPs and node ports: ranges, reserved addresses, what a create or update claims and frees, and the 422s for requests that cannot be granted.
import { usesNodePorts, type Service } from '../../core/api/service.js';
import type { FieldProblem } from '../../core/api/validate.js';
import { formatIpv4Cidr, parseIpv4Cidr, type Ipv4Range } from '../../core/api/ipv4.js';

export const DEFAULT_SERVICE_CIDR = '10.96.0.0/16';
export const DEFAULT_NODE_PORT_RANGE = { min: 30000, max: 32767 } as const;

/** The cluster DNS service (see the DNS contract): it alone may have the range's tenth address. */
export const DNS_SERVICE = { namespace: 'kube-system', name: 'kube-dns' } as const;
/** The API server's own service: the range's first address is kept for it, as Kubernetes does. */
export const API_SERVICE = { namespace: 'default', name: 'kubernetes' } as const;

export interface NodePortRange {
  min: number;
  max: number;
}

export interface ServiceRanges {
  serviceCIDR: string;
  nodePorts: NodePortRange;
}

/** Who holds an allocation record. */
export interface Holder {
  namespace: string;
  name: string;
  uid: string;
}

/** Every recorded allocation: cluster IPs and node ports, each with its holder. */
export interface HeldAllocations {
  ips: ReadonlyMap<string, Holder>;
  ports: ReadonlyMap<number, Holder>;
}

export interface AllocationPlan {
  /** The service with what was allocated filled in. */
  service: Service;
  /** Records to create (newly held). */
  claimIPs: string[];
  claimPorts: number[];
  /** Records to delete (held by this service, no longer used). */
  releaseIPs: string[];
  releasePorts: number[];
}

export type PlanResult = { plan: AllocationPlan; problems?: undefined } | { problems: FieldProblem[]; plan?: undefined };

function ipToNumber(ip: string): number | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(ip);
  if (!m) return undefined;
  const octets = m.slice(1, 5).map(Number);
  if (octets.some((o) => o > 255)) return undefined;
  return octets.reduce((a, o) => a * 256 + o, 0);
}

function numberToIp(n: number): string {
  return `${Math.floor(n / 2 ** 24) % 256}.${Math.floor(n / 2 ** 16) % 256}.${Math.floor(n / 2 ** 8) % 256}.${n % 256}`;
}

function sizeOf(range: Ipv4Range): number {
  return 2 ** (32 - range.bits);
}

/** The service CIDR, checked: IPv4, /8 to /28 (room for the two reserved addresses). Undefined if not. */
export function parseServiceCIDR(text: string): Ipv4Range | undefined {
  const range = parseIpv4Cidr(text);
  return range && range.bits >= 8 && range.bits <= 28 ? range : undefined;
}

/** `30000-32767` -> {min, max}; undefined unless 1 <= min <= max <= 65535. */
export function parseNodePortRange(text: string): NodePortRange | undefined {
  const m = /^(\d{1,5})-(\d{1,5})$/.exec(text.trim());
  if (!m) return undefined;
  const min = Number(m[1]);
  const max = Number(m[2]);
  return min >= 1 && min <= max && max <= 65535 ? { min, max } : undefined;
}

/** The address kept for the cluster DNS service: the tenth of the range (10.96.0.10 for 10.96.0.0/16). */
export function dnsServiceIP(serviceCIDR: string): string {
  return numberToIp(parseServiceCIDR(serviceCIDR)!.base + 10);
}

/** The address kept for `default/kubernetes`: the first of the range. */
export function apiServiceIP(serviceCIDR: string): string {
  return numberToIp(parseServiceCIDR(serviceCIDR)!.base + 1);
}

/** Which service alone may hold `ip`, if it is one of the reserved addresses. */
function reservedFor(ip: string, serviceCIDR: string): { namespace: string; name: string } | undefined {
  if (ip === dnsServiceIP(serviceCIDR)) return DNS_SERVICE;
  if (ip === apiServiceIP(serviceCIDR)) return API_SERVICE;
  return undefined;
}

/** True for an address of the range that can be given out (not its network or broadcast address). */
export function ipInRange(ip: string, serviceCIDR: string): boolean {
  const range = parseServiceCIDR(serviceCIDR)!;
  const n = ipToNumber(ip);
  return n !== undefined && n > range.base && n < range.base + sizeOf(range) - 1;
}

function is(service: Service, who: { namespace: string; name: string }): boolean {
  return service.metadata.namespace === who.namespace && service.metadata.name === who.name;
}

/**
 * A free address: the reserved one for the service it is kept for, else the first free one
 * from a random place in the range (as Kubernetes does: concurrent creates rarely collide,
 * and a freed address is not handed straight to the next service).
 */
export function pickClusterIP(service: Service, serviceCIDR: string, taken: (ip: string) => boolean, random: () => number): string | undefined {
  for (const who of [DNS_SERVICE, API_SERVICE]) {
    if (!is(service, who)) continue;
    const ip = who === DNS_SERVICE ? dnsServiceIP(serviceCIDR) : apiServiceIP(serviceCIDR);
    if (!taken(ip)) return ip;
  }
  const range = parseServiceCIDR(serviceCIDR)!;
  const usable = sizeOf(range) - 2;
  const start = Math.floor(random() * usable);
  for (let i = 0; i < usable; i++) {
    const ip = numberToIp(range.base + 1 + ((start + i) % usable));
    if (reservedFor(ip, serviceCIDR) || taken(ip)) continue;
    return ip;
  }
  return undefined;
}

/** A free node port from a random place in the range. */
export function pickNodePort(range: NodePortRange, taken: (port: number) => boolean, random: () => number): number | undefined {
  const count = range.max - range.min + 1;
  const start = Math.floor(random() * count);
  for (let i = 0; i < count; i++) {
    const port = range.min + ((start + i) % count);
    if (!taken(port)) return port;
  }
  return undefined;
}

/**
 * Fills what an update left out with what the stored service holds, before validation, as
 * Kubernetes does: the cluster IP, and each port's node port (matched by port name) while the
 * service keeps node ports. Turning a NodePort service into ClusterIP drops the node ports it held
 * and its external traffic policy.
 */
export function carryOverAllocations(existing: Service, body: Record<string, unknown>): Record<string, unknown> {
  const spec = body.spec;
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) return body;
  const next: Record<string, unknown> = { ...(spec as Record<string, unknown>) };
  const old = existing.spec;
  if ((next.clusterIP === undefined || next.clusterIP === '') && old.clusterIP) {
    next.clusterIP = old.clusterIP;
    if (next.clusterIPs === undefined || (Array.isArray(next.clusterIPs) && next.clusterIPs.length === 0)) next.clusterIPs = old.clusterIPs ?? [old.clusterIP];
  }
  for (const key of ['ipFamilies', 'ipFamilyPolicy'] as const) {
    if (next[key] === undefined && old[key] !== undefined) next[key] = old[key];
  }
  const type = next.type ?? 'ClusterIP';
  if (Array.isArray(next.ports) && usesNodePorts(old)) {
    const held = new Map(old.ports.filter((p) => p.nodePort).map((p) => [p.name ?? '', p.nodePort!]));
    const heldValues = new Set(held.values());
    const ports = (next.ports as unknown[]).map((p) => (typeof p === 'object' && p !== null && !Array.isArray(p) ? { ...(p as Record<string, unknown>) } : p));
    if (type === 'ClusterIP') {
      // As Kubernetes drops type-dependent fields the update did not change.
      if (next.externalTrafficPolicy === old.externalTrafficPolicy) delete next.externalTrafficPolicy;
      for (const p of ports) {
        if (typeof p === 'object' && p !== null && heldValues.has((p as { nodePort?: number }).nodePort!)) delete (p as { nodePort?: number }).nodePort;
      }
    } else if (type === 'NodePort' || type === 'LoadBalancer') {
      const used = new Set(ports.map((p) => (p as { nodePort?: unknown } | null)?.nodePort).filter((n) => typeof n === 'number' && n !== 0));
      for (const p of ports) {
        if (typeof p !== 'object' || p === null) continue;
        const port = p as { name?: unknown; nodePort?: unknown };
        if (port.nodePort !== undefined && port.nodePort !== 0) continue;
        const kept = held.get(typeof port.name === 'string' ? port.name : '');
        if (kept !== undefined && !used.has(kept)) {
          port.nodePort = kept;
          used.add(kept);
        }
      }
    }
    next.ports = ports;
  }
  return { ...body, spec: next };
}

export interface PlanInput {
  /** The service to store (validated; for an update, after carryOverAllocations). */
  service: Service;
  /** The stored service, for an update. */
  previous?: Service;
  held: HeldAllocations;
  ranges: ServiceRanges;
  /** In [0, 1): where the search for a free value starts. */
  random: () => number;
}

/**
 * What a create or update of `service` claims and frees, or the problems that refuse it.
 * Records held by this very service (same uid) are its own, not a conflict.
 */
export function planServiceAllocation(input: PlanInput): PlanResult {
  const { previous, held, ranges, random } = input;
  const uid = input.service.metadata.uid;
  const ours = (h: Holder | undefined) => h !== undefined && h.uid === uid;
  const spec = { ...input.service.spec, ports: input.service.spec.ports.map((p) => ({ ...p })) };
  const problems: FieldProblem[] = [];
  const plan: AllocationPlan = { service: { ...input.service, spec }, claimIPs: [], claimPorts: [], releaseIPs: [], releasePorts: [] };
  const validRange = formatIpv4Cidr(parseServiceCIDR(ranges.serviceCIDR)!);

  // ---- cluster IP ----
  const requested = spec.clusterIP || spec.clusterIPs?.[0] || '';
  if (spec.clusterIP && spec.clusterIPs?.length && spec.clusterIPs[0] !== spec.clusterIP) {
    problems.push({
      path: ['spec', 'clusterIPs', 0],
      reason: 'FieldValueInvalid',
      value: spec.clusterIPs[0],
      detail: 'must match `clusterIP` when both are given',
    });
  }
  if (requested === 'None') {
    spec.clusterIP = 'None';
    spec.clusterIPs = ['None'];
  } else if (previous?.spec.clusterIP && requested === previous.spec.clusterIP) {
    // Kept by an update (validateUpdate refuses a change): its record is already there.
    if (!spec.clusterIPs?.length) spec.clusterIPs = [requested];
  } else if (requested) {
    const reserved = reservedFor(requested, ranges.serviceCIDR);
    const holder = held.ips.get(requested);
    if (!ipInRange(requested, ranges.serviceCIDR)) {
      problems.push({
        path: ['spec', 'clusterIP'],
        reason: 'FieldValueInvalid',
        value: requested,
        detail: `provided IP is not in the valid range. The range of valid IPs is ${validRange}`,
      });
    } else if (reserved && !is(input.service, reserved)) {
      problems.push({
        path: ['spec', 'clusterIP'],
        reason: 'FieldValueInvalid',
        value: requested,
        detail: `provided IP is reserved for the ${reserved.namespace}/${reserved.name} service`,
      });
    } else if (holder && !ours(holder)) {
      problems.push({ path: ['spec', 'clusterIP'], reason: 'FieldValueInvalid', value: requested, detail: 'provided IP is already allocated' });
    } else {
      if (!holder) plan.claimIPs.push(requested);
      spec.clusterIP = requested;
      spec.clusterIPs = [requested];
    }
  } else {
    const ip = pickClusterIP(input.service, ranges.serviceCIDR, (a) => held.ips.has(a), random);
    if (ip === undefined) {
      problems.push({ path: ['spec', 'clusterIP'], reason: 'FieldValueInvalid', value: '', detail: `no address is left in the service range ${validRange}` });
    } else {
      plan.claimIPs.push(ip);
      spec.clusterIP = ip;
      spec.clusterIPs = [ip];
    }
  }
  if (spec.clusterIP !== 'None' && !problems.length) {
    spec.ipFamilies ??= ['IPv4'];
    spec.ipFamilyPolicy ??= 'SingleStack';
  }

  // ---- node ports ----
  const before = new Set(previous && usesNodePorts(previous.spec) ? previous.spec.ports.map((p) => p.nodePort).filter((n): n is number => Boolean(n)) : []);
  const after = new Set<number>();
  if (usesNodePorts(spec)) {
    /** Ports given in this request, by protocol: one service may use a number once per protocol. */
    const seen = new Map<number, Set<string>>();
    spec.ports.forEach((p, i) => {
      if (!p.nodePort) return;
      const path = ['spec', 'ports', i, 'nodePort'];
      const protocols = seen.get(p.nodePort) ?? new Set<string>();
      if (protocols.has(p.protocol)) {
        problems.push({ path, reason: 'FieldValueDuplicate', value: p.nodePort });
        return;
      }
      seen.set(p.nodePort, protocols.add(p.protocol));
      if (before.has(p.nodePort)) {
        after.add(p.nodePort);
        return;
      }
      const holder = held.ports.get(p.nodePort);
      if (p.nodePort < ranges.nodePorts.min || p.nodePort > ranges.nodePorts.max) {
        problems.push({
          path,
          reason: 'FieldValueInvalid',
          value: p.nodePort,
          detail: `provided port is not in the valid range. The range of valid ports is ${ranges.nodePorts.min}-${ranges.nodePorts.max}`,
        });
      } else if (holder && !ours(holder)) {
        problems.push({ path, reason: 'FieldValueInvalid', value: p.nodePort, detail: 'provided port is already allocated' });
      } else {
        if (!holder && !after.has(p.nodePort)) plan.claimPorts.push(p.nodePort);
        after.add(p.nodePort);
      }
    });
    spec.ports.forEach((p, i) => {
      if (p.nodePort) return;
      const port = pickNodePort(ranges.nodePorts, (n) => held.ports.has(n) || after.has(n) || before.has(n), random);
      if (port === undefined) {
        problems.push({
          path: ['spec', 'ports', i, 'nodePort'],
          reason: 'FieldValueInvalid',
          value: 0,
          detail: `no node port is left in the range ${ranges.nodePorts.min}-${ranges.nodePorts.max}`,
        });
        return;
      }
      p.nodePort = port;
      plan.claimPorts.push(port);
      after.add(port);
    });
  }
  for (const port of before) {
    if (!after.has(port) && ours(held.ports.get(port))) plan.releasePorts.push(port);
  }
  return problems.length ? { problems } : { plan };
}

/** What a deleted service frees: the records it holds. */
export function releasesOf(service: Service, held: HeldAllocations): { ips: string[]; ports: number[] } {
  const uid = service.metadata.uid;
  const ips = [...new Set([service.spec.clusterIP, ...(service.spec.clusterIPs ?? [])])].filter(
    (ip): ip is string => Boolean(ip) && held.ips.get(ip!)?.uid === uid,
  );
  const ports = [...new Set(service.spec.ports.map((p) => p.nodePort).filter((n): n is number => Boolean(n)))].filter((n) => held.ports.get(n)?.uid === uid);
  return { ips, ports };
}

export interface RepairPlan {
  /** Records missing for what a service holds (a store written before allocation records). */
  claimIPs: { ip: string; holder: Holder }[];
  claimPorts: { port: number; holder: Holder }[];
  /** Records whose service is gone (only possible if someone wrote the store by hand). */
  releaseIPs: string[];
  releasePorts: number[];
  /** Problems to tell the admin about: two services on one value, values outside the ranges. */
  warnings: string[];
}

/**
 * Pure: what a master start does to make the records match the stored services, as Kubernetes'
 * repair controllers do. Transactions keep them in step while the master runs; this covers
 * stores from before the records and hand edits.
 */
export function planRepair(services: readonly Service[], held: HeldAllocations, ranges: ServiceRanges): RepairPlan {
  const plan: RepairPlan = { claimIPs: [], claimPorts: [], releaseIPs: [], releasePorts: [], warnings: [] };
  const uids = new Set(services.map((s) => s.metadata.uid));
  for (const [ip, h] of held.ips) if (!uids.has(h.uid)) plan.releaseIPs.push(ip);
  for (const [port, h] of held.ports) if (!uids.has(h.uid)) plan.releasePorts.push(port);
  const claimedIPs = new Map<string, Holder>();
  const claimedPorts = new Map<number, Holder>();
  for (const s of services) {
    const holder: Holder = { namespace: s.metadata.namespace ?? '', name: s.metadata.name ?? '', uid: s.metadata.uid ?? '' };
    const who = `service ${holder.namespace}/${holder.name}`;
    const ip = s.spec.clusterIP;
    if (ip && ip !== 'None') {
      const owner = held.ips.get(ip) ?? claimedIPs.get(ip);
      if (!ipInRange(ip, ranges.serviceCIDR)) plan.warnings.push(`${who} has cluster IP ${ip}, outside the service range ${ranges.serviceCIDR}`);
      else if (!owner) {
        plan.claimIPs.push({ ip, holder });
        claimedIPs.set(ip, holder);
      } else if (owner.uid !== holder.uid) plan.warnings.push(`${who} and service ${owner.namespace}/${owner.name} both have cluster IP ${ip}`);
    }
    if (!usesNodePorts(s.spec)) continue;
    for (const port of new Set(s.spec.ports.map((p) => p.nodePort).filter((n): n is number => Boolean(n)))) {
      const owner = held.ports.get(port) ?? claimedPorts.get(port);
      if (port < ranges.nodePorts.min || port > ranges.nodePorts.max)
        plan.warnings.push(`${who} has node port ${port}, outside the range ${ranges.nodePorts.min}-${ranges.nodePorts.max}`);
      if (!owner) {
        plan.claimPorts.push({ port, holder });
        claimedPorts.set(port, holder);
      } else if (owner.uid !== holder.uid) plan.warnings.push(`${who} and service ${owner.namespace}/${owner.name} both have node port ${port}`);
    }
  }
  return plan;
}
