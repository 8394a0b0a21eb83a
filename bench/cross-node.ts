// Benchmark of pod-to-pod request latency across the VXLAN overlay against the same request within one node; prints one JSON object (progress goes to stderr).
//
// It builds a simulated two-machine cluster (test/helpers/netns-node.ts: a master on a host
// bridge, each worker in its own network namespace with its own dockerd, the overlay on), runs
// an nginx pod on machine 1 and a client pod on each machine, and from each client sends
// BENCH_REQUESTS sequential GETs (Python's http.client, 5 s timeout each) to the nginx pod's IP:
// once opening a connection per request (keep-alive off: TCP handshake plus request) and once
// over one kept-alive connection (a request alone). The two clients' runs are interleaved in
// BENCH_ROUNDS rounds, so that load from elsewhere on the machine falls on both alike. The
// same-node client is the floor; the figures are p50/p99/mean per request and the ratios.
// Everything made is removed at the end, also on failure or Ctrl-C (the cluster's reaper).
import { spawnSync } from 'node:child_process';
import { cpus } from 'node:os';
import type { Pod } from '../src/core/api/pod.js';
import { waitFor } from '../src/core/wait-for.js';
import { BINARY } from '../test/helpers/master.js';
import { createNetnsCluster, netnsSkipReason, type NetnsCluster, type NetnsWorker } from '../test/helpers/netns-node.js';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 2000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 200);
const NS = `bench-cross-node-${process.pid}`;

const startedAt = performance.now();
function log(message: string): void {
  process.stderr.write(`[cross-node ${((performance.now() - startedAt) / 1000).toFixed(1)}s] ${message}\n`);
}

/** Sends N GETs to HOST:80, one after another; prints {"us": [latency per request in µs], "errors": count}. */
const CLIENT = [
  'import sys, time, json, http.client',
  'host, n, keep = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"',
  'lat, errors, conn = [], 0, None',
  'for i in range(n):',
  '  t = time.perf_counter()',
  '  try:',
  '    if conn is None: conn = http.client.HTTPConnection(host, 80, timeout=5)',
  '    conn.request("GET", "/")',
  '    r = conn.getresponse(); r.read()',
  '    if not keep: conn.close(); conn = None',
  '    lat.append(round((time.perf_counter() - t) * 1e6))',
  '  except Exception:',
  '    errors += 1',
  '    if conn is not None: conn.close()',
  '    conn = None',
  'print(json.dumps({"us": lat, "errors": errors}))',
].join('\n');

interface Figures {
  requests: number;
  errors: number;
  p50Ms: number;
  p99Ms: number;
  meanMs: number;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

function figures(samplesUs: number[], errors: number): Figures {
  const sorted = [...samplesUs].sort((a, b) => a - b);
  const ms = (us: number) => Math.round(us) / 1000;
  return {
    requests: samplesUs.length,
    errors,
    p50Ms: ms(percentile(sorted, 50)),
    p99Ms: ms(percentile(sorted, 99)),
    meanMs: ms(samplesUs.reduce((a, b) => a + b, 0) / Math.max(1, samplesUs.length)),
  };
}

const round2 = (n: number) => Math.round(n * 100) / 100;

async function main(): Promise<void> {
  const skip = netnsSkipReason();
  if (skip) throw new Error(`cannot simulate machines here: ${skip}`);
  let cluster: NetnsCluster | undefined;
  const stop = () => {
    log('interrupted: removing everything');
    void (cluster?.destroy() ?? Promise.resolve()).finally(() => process.exit(130));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    log('building a two-machine cluster (a master on a bridge, two workers in network namespaces, each with its own dockerd)');
    cluster = await createNetnsCluster({ machines: ['b1', 'b2'], tls: false, log });
    const c = cluster;
    const [w1, w2] = c.workers as [NetnsWorker, NetnsWorker];
    const api = async (method: string, path: string, body?: unknown): Promise<unknown> => {
      const res = await fetch(`${c.master.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${c.master.token}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(30_000),
      });
      const json = (await res.json()) as { message?: string } | null;
      if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${json?.message}`);
      return json;
    };
    const makePod = (name: string, w: NetnsWorker, container: Record<string, unknown>) =>
      api('POST', `/api/v1/namespaces/${NS}/pods`, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, namespace: NS },
        spec: { nodeName: w.nodeName, containers: [container] },
      });
    await api('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    await Promise.all([
      makePod('server', w1, { name: 'nginx', image: 'nginx:1.22', readinessProbe: { tcpSocket: { port: 80 }, periodSeconds: 1 } }),
      makePod('client-same-node', w1, { name: 'client', image: 'python:3.11', command: ['sleep', '36000'] }),
      makePod('client-other-node', w2, { name: 'client', image: 'python:3.11', command: ['sleep', '36000'] }),
    ]);
    const ready = (name: string) =>
      waitFor(
        async () => {
          const pod = (await api('GET', `/api/v1/namespaces/${NS}/pods/${name}`)) as Pod;
          return pod.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True') ? pod : undefined;
        },
        { timeoutMs: 300_000, intervalMs: 250, description: `pod ${name} to be ready` },
      );
    const [server] = await Promise.all([ready('server'), ready('client-same-node'), ready('client-other-node')]);
    const serverIP = server.status!.podIP!;
    log(`pods ready: nginx at ${serverIP} on ${w1.nodeName}; clients on ${w1.nodeName} and ${w2.nodeName}`);

    const run = (client: string, n: number, keepAlive: boolean): { us: number[]; errors: number } => {
      const r = spawnSync(process.execPath, [BINARY, 'exec', '-n', NS, client, '--', 'python3', '-c', CLIENT, serverIP, String(n), keepAlive ? '1' : '0'], {
        env: c.master.env,
        encoding: 'utf8',
        timeout: 10 * 60_000,
        maxBuffer: 64 * 1024 * 1024,
      });
      if (r.status !== 0) throw new Error(`exec in ${client} exited ${r.status ?? r.signal}: ${r.stderr}`);
      return JSON.parse(r.stdout) as { us: number[]; errors: number };
    };

    const modes = [
      { key: 'keepAliveOff', keepAlive: false },
      { key: 'keepAliveOn', keepAlive: true },
    ] as const;
    const result: Record<string, unknown> = {};
    for (const mode of modes) {
      // Warm both paths: ARP/neighbour entries, conntrack, Python's imports, nginx's workers.
      run('client-same-node', WARMUP, mode.keepAlive);
      run('client-other-node', WARMUP, mode.keepAlive);
      const same = { us: [] as number[], errors: 0 };
      const other = { us: [] as number[], errors: 0 };
      const perRound = Math.ceil(REQUESTS / ROUNDS);
      for (let i = 0; i < ROUNDS; i++) {
        for (const [client, into] of (i % 2 === 0
          ? [
              ['client-same-node', same],
              ['client-other-node', other],
            ]
          : [
              ['client-other-node', other],
              ['client-same-node', same],
            ]) as [string, typeof same][]) {
          const r = run(client, perRound, mode.keepAlive);
          into.us.push(...r.us);
          into.errors += r.errors;
        }
        log(`${mode.key}: round ${i + 1}/${ROUNDS} done`);
      }
      const sameNode = figures(same.us, same.errors);
      const crossNode = figures(other.us, other.errors);
      result[mode.key] = {
        sameNode,
        crossNode,
        ratio: {
          p50: round2(crossNode.p50Ms / sameNode.p50Ms),
          p99: round2(crossNode.p99Ms / sameNode.p99Ms),
          mean: round2(crossNode.meanMs / sameNode.meanMs),
        },
      };
    }

    process.stdout.write(
      `${JSON.stringify(
        {
          benchmark: 'cross-node',
          what: 'HTTP GET latency from a pod to an nginx pod by pod IP: on another node across the VXLAN overlay, against a pod on the same node (the floor)',
          requestsPerCase: REQUESTS,
          rounds: ROUNDS,
          warmupPerCase: WARMUP,
          client: 'python3 http.client in a python:3.11 pod, sequential requests, 5 s timeout each',
          server: 'nginx:1.22 pod',
          overlay:
            'Linux VXLAN device (VNI 1, UDP 8472, nolearning), static route + neighbour + FDB entry per peer; machines are network namespaces on one host bridge',
          ...result,
          machine: { cores: cpus().length, cpu: cpus()[0]?.model },
        },
        null,
        2,
      )}\n`,
    );
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    log('removing the cluster');
    await cluster?.destroy();
  }
}

await main().catch((err) => {
  process.stderr.write(`cross-node: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
