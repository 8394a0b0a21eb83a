// The node's upstream resolvers, read from resolv.conf: where the cluster DNS forwards names that are not the cluster's.
import { isIP } from 'node:net';

export interface Upstream {
  address: string;
  port: number;
}

/** The `nameserver` lines of a resolv.conf, in order (glibc reads at most three; so do we). */
export function parseNameservers(text: string): string[] {
  const out: string[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.replace(/[#;].*$/, '').trim();
    const m = /^nameserver\s+(\S+)$/.exec(line);
    // A scoped IPv6 address (fe80::1%eth0) names an interface Node's sockets would need separately: skipped.
    if (m && isIP(m[1]!) !== 0 && !m[1]!.includes('%')) out.push(m[1]!);
  }
  return out.slice(0, 3);
}

/**
 * `10.0.0.2,10.0.0.3:5353`: resolvers given on the command line instead of resolv.conf.
 * Throws with the offending entry when one is not an IPv4 address with an optional port.
 */
export function parseUpstreamList(list: string): Upstream[] {
  return list
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry) => {
      const m = /^([^:]+)(?::(\d+))?$/.exec(entry);
      const port = m?.[2] === undefined ? 53 : Number(m[2]);
      if (!m || isIP(m[1]!) !== 4 || !Number.isInteger(port) || port < 1 || port > 65535) {
        throw new Error(`"${entry}" is not an IPv4 address with an optional port, such as 10.0.0.2 or 10.0.0.2:5353`);
      }
      return { address: m[1]!, port };
    });
}

/**
 * The upstreams to forward to: the nameservers, less those that would send the query back to us
 * (our own listening address, or the cluster DNS address when the node itself resolves through it).
 */
export function upstreamsFrom(nameservers: readonly string[], options: { exclude: readonly string[]; port?: number }): Upstream[] {
  const excluded = new Set(options.exclude);
  return nameservers.filter((ns) => !excluded.has(ns)).map((address) => ({ address, port: options.port ?? 53 }));
}
