// IPv4 ranges as the API writes them (`10.244.0.0/16`): parse, format, order, containment, and the pod bridge of a pod CIDR.

export interface Ipv4Range {
  /** The first address, as an unsigned 32-bit number. */
  base: number;
  bits: number;
}

/** `10.244.0.0/16` -> {base, bits}; undefined for anything else (host bits set included). */
export function parseIpv4Cidr(text: string): Ipv4Range | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/.exec(text.trim());
  if (!m) return undefined;
  const octets = m.slice(1, 5).map(Number);
  const bits = Number(m[5]);
  if (octets.some((o) => o > 255) || bits > 32) return undefined;
  const base = octets.reduce((a, o) => a * 256 + o, 0);
  if (base % 2 ** (32 - bits) !== 0) return undefined;
  return { base, bits };
}

export function formatIpv4Cidr(range: Ipv4Range): string {
  const b = range.base;
  return `${Math.floor(b / 2 ** 24) % 256}.${Math.floor(b / 2 ** 16) % 256}.${Math.floor(b / 2 ** 8) % 256}.${b % 256}/${range.bits}`;
}

/** How many addresses the range spans. */
export function ipv4RangeSize(range: Ipv4Range): number {
  return 2 ** (32 - range.bits);
}

/** Orders ranges by address (then size); unparsable ones last. */
export function compareCidrs(a: string, b: string): number {
  const ra = parseIpv4Cidr(a);
  const rb = parseIpv4Cidr(b);
  if (!ra || !rb) return (ra ? -1 : rb ? 1 : 0) || a.localeCompare(b);
  return ra.base - rb.base || ra.bits - rb.bits;
}

/** True when `inner` lies wholly inside `outer`. */
export function cidrContains(outer: string, inner: string): boolean {
  const o = parseIpv4Cidr(outer);
  const i = parseIpv4Cidr(inner);
  return o !== undefined && i !== undefined && i.bits >= o.bits && i.base >= o.base && i.base + ipv4RangeSize(i) <= o.base + ipv4RangeSize(o);
}

/** A pod CIDR's network and its first address, the pod bridge's gateway (what the runtime, the proxy and the node DNS agree on). */
export function podNetworkConfig(podCIDR: string): { subnet: string; gateway: string } {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/.exec(podCIDR.trim());
  const octets = m ? m.slice(1, 5).map(Number) : [];
  const bits = m ? Number(m[5]) : -1;
  if (!m || octets.some((o) => o > 255) || bits < 8 || bits > 30)
    throw new Error(`invalid podCIDR "${podCIDR}": expected an IPv4 subnet such as 10.244.1.0/24 (prefix 8 to 30)`);
  const ip = octets.reduce((n, o) => n * 256 + o, 0);
  const size = 2 ** (32 - bits);
  const network = ip - (ip % size);
  const dotted = (n: number) => [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join('.');
  return { subnet: `${dotted(network)}/${bits}`, gateway: dotted(network + 1) };
}
