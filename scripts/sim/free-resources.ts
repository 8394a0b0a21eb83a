// Finding what a new cluster may use without clashing with what runs here: free TCP ports, a free /24 for a bridge, a free pod range.
import { createServer } from 'node:net';
import Docker from 'dockerode';
import { sh } from './host-commands.js';

/** A TCP port free on 127.0.0.1 right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** A free port followed by a free one (etcd's peer port is client + 1). */
export async function etcdPorts(): Promise<number> {
  for (;;) {
    const p = await freePort();
    const ok = await new Promise<boolean>((resolve) => {
      const s = createServer();
      s.once('error', () => resolve(false));
      s.listen(p + 1, '127.0.0.1', () => s.close(() => resolve(true)));
    });
    if (ok) return p;
  }
}

function ipToNumber(ip: string): number {
  return ip.split('.').reduce((acc, o) => acc * 256 + Number(o), 0);
}

/** [first, end) of a.b.c.d/N (a bare address is a /32). */
function range(cidr: string): [number, number] {
  const [ip, bits = '32'] = cidr.split('/');
  const size = 2 ** (32 - Number(bits));
  const base = Math.floor(ipToNumber(ip!) / size) * size;
  return [base, base + size];
}

/** Do two IPv4 ranges written a.b.c.d/N overlap? */
export function overlaps(a: string, b: string): boolean {
  const [a0, a1] = range(a);
  const [b0, b1] = range(b);
  return a0 < b1 && b0 < a1;
}

/**
 * A 10.X.0.0/16 (X in 200..250) that no Docker network of the host's engine uses, picked at
 * random among the free ones so that masters started side by side rarely share one: workers make
 * Docker networks for their /24 of it. Without a reachable Docker engine any of them will do.
 */
export async function freeClusterCIDR(): Promise<string> {
  let used: string[] = [];
  try {
    const networks = await new Docker().listNetworks();
    used = networks.flatMap((n) => (n.IPAM?.Config ?? []).map((c) => c.Subnet ?? '')).filter((c) => /^\d+\.\d+\.\d+\.\d+\/\d+$/.test(c));
  } catch {
    // No Docker here: nothing to collide with.
  }
  const free: string[] = [];
  for (let x = 200; x <= 250; x++) {
    const cidr = `10.${x}.0.0/16`;
    if (!used.some((u) => overlaps(u, cidr))) free.push(cidr);
  }
  if (free.length === 0) throw new Error('no free 10.200-250.0.0/16 pod range: every one overlaps a Docker network');
  return free[Math.floor(Math.random() * free.length)]!;
}

/** Every IPv4 address and range this host's interfaces and routes (all tables) mention. */
async function hostRanges(): Promise<string[]> {
  const text = `${await sh('ip', ['-4', '-o', 'addr', 'show'])}\n${await sh('ip', ['-4', 'route', 'show', 'table', 'all'])}`;
  return (
    [...text.matchAll(/\b(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})(\/\d{1,2})?\b/g)]
      .map((m) => `${m[1]}${m[2] ?? '/32'}`)
      // A default route written out (0.0.0.0/0) overlaps everything: it says nothing about which ranges are taken.
      .filter((c) => !c.endsWith('/0'))
  );
}

/** `count` distinct 10.123.X.0/24 (as `10.123.X`) that no interface or route of this host uses, picked at random. */
export async function freeSubnets(count: number, prefix = '10.123'): Promise<string[]> {
  const used = await hostRanges();
  const free: string[] = [];
  for (let x = 1; x <= 254; x++) {
    const subnet = `${prefix}.${x}`;
    if (!used.some((u) => overlaps(u, `${subnet}.0/24`))) free.push(subnet);
  }
  if (free.length < count) throw new Error(`fewer than ${count} free ${prefix}.X.0/24 ranges on this host`);
  for (let i = free.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [free[i], free[j]] = [free[j]!, free[i]!];
  }
  return free.slice(0, count);
}
