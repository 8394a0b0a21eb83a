// Benchmark of what node Leases save: 1,000 fake nodes heartbeating the old way (the whole Node status every 10 s) and then with Leases (status only on change), API writes per second by resource and etcd bytes written, in one run; prints one JSON object (progress on stderr).
//
// It starts a real master (plain HTTP, its own etcd, a cluster CIDR with a /24 per node) and hosts
// the fake nodes in this process (src/node/fake-nodes), first with `leases: false`, then, with the
// same nodes and credentials, with Leases. Each phase lets one heartbeat interval pass after the
// nodes registered (the Leases' creation and the registration writes fall there), then measures
// for BENCH_SECONDS: the master's request counters (GET /metrics, writes by group/resource/
// subresource) and, from an etcd watch on the whole keyspace, the keys and bytes put.
//
// Sizes: --nodes N (BENCH_NODES, default 1000), --seconds N (BENCH_SECONDS, default 60),
// --heartbeat N (BENCH_HEARTBEAT_S, default 10). Exits 1 only if the run itself failed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Etcd3 } from 'etcd3';
import { managedEtcdClientOptions } from '../src/control-plane/etcd/etcd-pki.js';
import { parseRequestMetrics, WRITE_VERBS } from '../src/control-plane/api-server/request-metrics.js';
import { FakeNodeHost, fakeNodeNames } from '../src/node/fake-nodes/fake-nodes.js';
import { DEFAULT_FAKE_NODE_CAPACITY } from '../src/node/worker-config.js';
import { startMaster, type MasterProcess } from '../test/helpers/master.js';

function setting(name: string, env: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const text = i >= 0 ? process.argv[i + 1] : process.env[env];
  const n = text === undefined ? fallback : Number(text);
  if (!Number.isInteger(n) || n < 1) {
    process.stderr.write(`bench failed: --${name} (${env}) must be a positive whole number, not "${text}"\n`);
    process.exit(2);
  }
  return n;
}

const NODES = setting('nodes', 'BENCH_NODES', 1000);
const SECONDS = setting('seconds', 'BENCH_SECONDS', 60);
const HEARTBEAT_S = setting('heartbeat', 'BENCH_HEARTBEAT_S', 10);
const CLUSTER_CIDR = process.env.BENCH_CLUSTER_CIDR ?? '10.128.0.0/9';
const startedAt = performance.now();
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const round2 = (n: number) => Math.round(n * 100) / 100;

function log(message: string): void {
  process.stderr.write(`[node-heartbeats ${((performance.now() - startedAt) / 1000).toFixed(1)}s] ${message}\n`);
}

/** Write requests by `group/resource[/subresource]`, from the master's counters. */
async function writeCounts(server: string, token: string): Promise<Map<string, number>> {
  const res = await fetch(`${server}/metrics`, { headers: { authorization: `Bearer ${token}` } });
  if (!res.ok) throw new Error(`GET /metrics: ${res.status} ${await res.text()}`);
  const counts = new Map<string, number>();
  for (const c of parseRequestMetrics(await res.text())) {
    if (!WRITE_VERBS.has(c.verb)) continue;
    const key = `${c.group ? `${c.group}/` : ''}${c.resource}${c.subresource ? `/${c.subresource}` : ''}`;
    counts.set(key, (counts.get(key) ?? 0) + c.value);
  }
  return counts;
}

interface PhaseResult {
  /** API writes per second, all and by resource. */
  apiWritesPerSecond: number;
  apiWritesPerSecondByResource: Record<string, number>;
  etcdPutsPerSecond: number;
  /** Keys and values put, per second. */
  etcdBytesPerSecond: number;
  /** The mean size of one put: what a heartbeat costs etcd. */
  etcdBytesPerPut: number;
}

async function phase(options: {
  name: string;
  leases: boolean;
  server: string;
  token: string;
  joinToken: string;
  workerDir: string;
  etcd: Etcd3;
}): Promise<PhaseResult> {
  const names = fakeNodeNames('hb', NODES);
  const stop = new AbortController();
  const host = new FakeNodeHost({
    server: options.server,
    joinToken: options.joinToken,
    names,
    nodeIP: '127.0.0.1',
    capacity: DEFAULT_FAKE_NODE_CAPACITY,
    labels: {},
    taints: [],
    kubeletPort: 10250,
    dataDir: options.workerDir,
    heartbeatIntervalMs: HEARTBEAT_S * 1000,
    leases: options.leases,
    log: (m) => {
      if (/failed|refused/.test(m)) log(m);
    },
  });
  const running = host.start(stop.signal);
  let failure: unknown;
  running.catch((err) => {
    failure = err;
  });
  try {
    // Joins are slow on a loaded machine (each is a credential and a certificate signed by the master): about one a second was seen on two busy cores.
    const registeredBy = Date.now() + Math.max(180_000, NODES * 1500);
    while (host.nodeNames.length < NODES) {
      if (failure) throw failure;
      if (Date.now() > registeredBy) throw new Error(`${options.name}: only ${host.nodeNames.length} of ${NODES} fake nodes registered in time`);
      await sleep(500);
    }
    log(`${options.name}: ${NODES} nodes registered; one heartbeat interval before measuring`);
    await sleep(HEARTBEAT_S * 1000 + 2000);

    let puts = 0;
    let bytes = 0;
    const watcher = await options.etcd.watch().prefix('/').create();
    watcher.on('put', (kv) => {
      puts++;
      bytes += kv.key.length + kv.value.length;
    });
    const before = await writeCounts(options.server, options.token);
    const t0 = performance.now();
    await sleep(SECONDS * 1000);
    const after = await writeCounts(options.server, options.token);
    const elapsed = (performance.now() - t0) / 1000;
    await watcher.cancel();
    if (failure) throw failure;

    const byResource: Record<string, number> = {};
    let total = 0;
    for (const [key, n] of after) {
      const delta = n - (before.get(key) ?? 0);
      if (delta <= 0) continue;
      total += delta;
      byResource[key] = round2(delta / elapsed);
    }
    const result = {
      apiWritesPerSecond: round2(total / elapsed),
      apiWritesPerSecondByResource: byResource,
      etcdPutsPerSecond: round2(puts / elapsed),
      etcdBytesPerSecond: Math.round(bytes / elapsed),
      etcdBytesPerPut: puts ? Math.round(bytes / puts) : 0,
    };
    log(`${options.name}: ${JSON.stringify(result)}`);
    return result;
  } finally {
    stop.abort();
    await running.catch(() => {});
  }
}

async function main(): Promise<void> {
  const workerDir = mkdtempSync(join(tmpdir(), 'minik8s-bench-hb-worker-'));
  let master: MasterProcess | undefined;
  let etcd: Etcd3 | undefined;
  try {
    // Plain HTTP: what is measured is writes, not TLS. A wide cluster CIDR: a /24 per node.
    master = await startMaster({ tls: false, registry: false, clusterCIDR: CLUSTER_CIDR });
    const server = master.url;
    const { token, joinToken } = master;
    etcd = new Etcd3(managedEtcdClientOptions(master.dataDir, master.etcdPort));
    log(`master ready on ${server}; ${NODES} fake nodes, ${HEARTBEAT_S} s heartbeats, ${SECONDS} s per phase`);

    const common = { server, token, joinToken, workerDir, etcd };
    const old = await phase({ ...common, name: 'status every heartbeat (no Lease)', leases: false });
    const leases = await phase({ ...common, name: 'Leases (status on change)', leases: true });
    const ratio = (a: number, b: number) => (b > 0 ? round2(a / b) : null);
    const nodeStatusWrites = (r: PhaseResult) => r.apiWritesPerSecondByResource['nodes/status'] ?? 0;
    process.stdout.write(
      `${JSON.stringify(
        {
          bench: 'node-heartbeats',
          nodes: NODES,
          heartbeatSeconds: HEARTBEAT_S,
          measuredSeconds: SECONDS,
          statusEveryHeartbeat: old,
          leases,
          ratios: {
            apiWrites: ratio(old.apiWritesPerSecond, leases.apiWritesPerSecond),
            nodeStatusWrites: ratio(nodeStatusWrites(old), nodeStatusWrites(leases)),
            etcdBytes: ratio(old.etcdBytesPerSecond, leases.etcdBytesPerSecond),
            etcdBytesPerPut: ratio(old.etcdBytesPerPut, leases.etcdBytesPerPut),
          },
          notes: [
            'ratios are old / new: how many times more the status-every-heartbeat way costs',
            `with Leases an unchanged status is still written every 5 minutes: ${round2(NODES / 300)} status writes/s in the long run, none within a window that starts right after registration`,
            'etcd bytes: keys and values put, seen on an etcd watch of the whole keyspace',
          ],
        },
        null,
        2,
      )}\n`,
    );
  } finally {
    etcd?.close();
    await master?.stop();
    rmSync(workerDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
