// Benchmark of the API server against plain etcd in the same run; prints JSON figures and ratios.
//
// It starts a real master (its own managed etcd) as a child process, then measures from this
// process: pod creates over HTTP with 16 concurrent clients, plain etcd puts of the same
// bodies with 16 concurrent clients on the same etcd (the floor), list latency at 10,000 pods,
// and watch delivery latency to 100 concurrent watchers.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Etcd3 } from 'etcd3';
import { managedEtcdClientOptions } from '../src/control-plane/etcd/etcd-pki.js';

const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const CREATES = Number(process.env.BENCH_CREATES ?? 5000);
const LIST_SIZE = Number(process.env.BENCH_LIST_SIZE ?? 10_000);
const WATCHERS = Number(process.env.BENCH_WATCHERS ?? 100);
const WATCH_EVENTS = Number(process.env.BENCH_WATCH_EVENTS ?? 200);

const binary = fileURLToPath(new URL('../bin/minik8s.js', import.meta.url));

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return sorted[Math.max(0, i)]!;
}

function summary(latencies: number[], elapsedMs: number) {
  const sorted = [...latencies].sort((a, b) => a - b);
  const round = (n: number) => Math.round(n * 100) / 100;
  return {
    count: sorted.length,
    perSecond: Math.round((sorted.length / elapsedMs) * 1000),
    p50Ms: round(percentile(sorted, 50)),
    p99Ms: round(percentile(sorted, 99)),
    elapsedMs: Math.round(elapsedMs),
  };
}

const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY * 2 });

function call(base: URL, token: string, method: string, path: string, body?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: base.hostname,
        port: base.port,
        method,
        path,
        agent,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...(body ? { 'content-length': Buffer.byteLength(body) } : {}) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

function podBody(name: string, annotations: Record<string, string> = {}): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { app: 'bench', tier: 'load' }, annotations },
    spec: {
      containers: [
        {
          name: 'app',
          image: 'busybox:1.36',
          command: ['httpd', '-f', '-p', '8080'],
          ports: [{ containerPort: 8080 }],
          resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '200m', memory: '128Mi' } },
        },
      ],
    },
  });
}

/** Runs `total` jobs through `concurrency` workers; returns per-job latencies (ms) and elapsed time. */
async function drive(total: number, concurrency: number, job: (i: number) => Promise<void>) {
  const latencies: number[] = [];
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (;;) {
        const i = next++;
        if (i >= total) return;
        const t0 = performance.now();
        await job(i);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  return { latencies, elapsedMs: performance.now() - start };
}

async function startMaster() {
  const dataDir = mkdtempSync(join(tmpdir(), 'minik8s-bench-'));
  const home = mkdtempSync(join(tmpdir(), 'minik8s-bench-home-'));
  const port = await freePort();
  let etcdPort = await freePort();
  while (etcdPort + 1 === port) etcdPort = await freePort();
  // BENCH_MASTER_NODE_ARGS passes flags to the master's node (e.g. --cpu-prof to profile it).
  const nodeArgs = (process.env.BENCH_MASTER_NODE_ARGS ?? '').split(' ').filter(Boolean);
  // No image registry: the API is what is measured, and port 5000 may be taken.
  const child = spawn(
    process.execPath,
    [
      ...nodeArgs,
      binary,
      '--role=master',
      // Plain HTTP: this bench measures the API's work, not TLS (bench/tls.ts compares the two).
      '--insecure-http',
      '--no-registry',
      '--data-dir',
      dataDir,
      '--address',
      '127.0.0.1',
      '--port',
      String(port),
      '--etcd-port',
      String(etcdPort),
      // Every listener on a free port, so the bench runs beside a cluster (whose activator has 8090).
      '--activator-port',
      String(await freePort()),
    ],
    {
      env: { ...process.env, HOME: home },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout!.on('data', (d) => {
    output += d;
  });
  child.stderr!.on('data', (d) => {
    output += d;
  });
  const base = new URL(`http://127.0.0.1:${port}`);
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`master exited: ${output}`);
    try {
      if ((await call(base, '', 'GET', '/readyz')).status === 200) break;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) throw new Error(`master not ready in 30 s: ${output}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const token = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
  return { child, base, token, etcdPort, dataDir, home };
}

async function stopMaster(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/** Opens one watch stream and records, per pod name, when its ADDED event arrived. */
function openWatcher(base: URL, token: string, path: string, onEvent: (name: string, at: number) => void): Promise<() => void> {
  return new Promise((resolve, reject) => {
    const req = request({ host: base.hostname, port: base.port, path, headers: { authorization: `Bearer ${token}` } }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`watch answered ${res.statusCode}`));
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        const at = performance.now();
        buffer += chunk;
        for (let i = buffer.indexOf('\n'); i >= 0; i = buffer.indexOf('\n')) {
          const line = buffer.slice(0, i);
          buffer = buffer.slice(i + 1);
          const event = JSON.parse(line) as { type: string; object: { metadata: { name: string } } };
          if (event.type === 'ADDED') onEvent(event.object.metadata.name, at);
        }
      });
      res.on('error', () => {});
      resolve(() => req.destroy());
    });
    req.on('error', () => {});
    req.end();
  });
}

async function main(): Promise<void> {
  const master = await startMaster();
  const etcd = new Etcd3(managedEtcdClientOptions(master.dataDir, master.etcdPort));
  try {
    const { base, token } = master;
    const ns = '/api/v1/namespaces/default/pods';

    // Warm up both paths (connections, JIT) before measuring.
    await drive(200, CONCURRENCY, async (i) => {
      await call(base, token, 'POST', ns, podBody(`warm-${i}`));
    });
    await drive(200, CONCURRENCY, async (i) => {
      await etcd.put(`/bench-floor/warm-${i}`).value(podBody(`warm-${i}`));
    });

    // Floor: plain etcd puts of the same bodies, same concurrency.
    const floor = await drive(CREATES, CONCURRENCY, async (i) => {
      await etcd.put(`/bench-floor/pod-${i}`).value(podBody(`pod-${i}`));
    });
    let failures = 0;
    const creates = await drive(CREATES, CONCURRENCY, async (i) => {
      const res = await call(base, token, 'POST', ns, podBody(`pod-${i}`));
      if (res.status !== 201) failures++;
    });
    await etcd.delete().prefix('/bench-floor/');

    // Fill up to LIST_SIZE pods, then time full lists.
    const have = CREATES + 200;
    if (have < LIST_SIZE) {
      await drive(LIST_SIZE - have, CONCURRENCY, async (i) => {
        await call(base, token, 'POST', ns, podBody(`fill-${i}`));
      });
    }
    const listLatencies: number[] = [];
    let listed = 0;
    for (let i = 0; i < 10; i++) {
      const t0 = performance.now();
      const res = await call(base, token, 'GET', ns);
      listLatencies.push(performance.now() - t0);
      listed = (JSON.parse(res.body) as { items: unknown[] }).items.length;
    }

    // Watch delivery: WATCHERS streams; creates at a steady pace; latency from send to arrival.
    const rvBody = JSON.parse((await call(base, token, 'GET', `${ns}?labelSelector=none%3Dnone`)).body) as { metadata: { resourceVersion: string } };
    const sentAt = new Map<string, number>();
    const delivery: number[] = [];
    const closers = await Promise.all(
      Array.from({ length: WATCHERS }, () =>
        openWatcher(base, token, `${ns}?watch=1&resourceVersion=${rvBody.metadata.resourceVersion}`, (name, at) => {
          const t0 = sentAt.get(name);
          if (t0 !== undefined) delivery.push(at - t0);
        }),
      ),
    );
    for (let i = 0; i < WATCH_EVENTS; i++) {
      const name = `watch-${i}`;
      sentAt.set(name, performance.now());
      await call(base, token, 'POST', ns, podBody(name));
      await new Promise((r) => setTimeout(r, 5));
    }
    const expected = WATCHERS * WATCH_EVENTS;
    const deadline = Date.now() + 10_000;
    while (delivery.length < expected && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    for (const close of closers) close();

    const api = summary(creates.latencies, creates.elapsedMs);
    const plain = summary(floor.latencies, floor.elapsedMs);
    const sortedList = [...listLatencies].sort((a, b) => a - b);
    const sortedDelivery = [...delivery].sort((a, b) => a - b);
    const result = {
      benchmark: 'api',
      concurrency: CONCURRENCY,
      creates: { ...api, failures },
      etcdPutFloor: plain,
      ratio: {
        createsPerSecond: Math.round((plain.perSecond / api.perSecond) * 100) / 100,
        timeVsFloor: Math.round((creates.elapsedMs / floor.elapsedMs) * 100) / 100,
        p99VsFloor: Math.round((api.p99Ms / plain.p99Ms) * 100) / 100,
      },
      list: { items: listed, p50Ms: Math.round(percentile(sortedList, 50)), maxMs: Math.round(sortedList.at(-1)!) },
      watch: {
        watchers: WATCHERS,
        events: WATCH_EVENTS,
        delivered: delivery.length,
        expected,
        p50Ms: Math.round(percentile(sortedDelivery, 50) * 100) / 100,
        p99Ms: Math.round(percentile(sortedDelivery, 99) * 100) / 100,
      },
      targets: {
        createsPerSecond: { want: '>= 1000', ok: api.perSecond >= 1000 },
        createP99Ms: { want: '< 25', ok: api.p99Ms < 25 },
        timeVsFloor: { want: '<= 2', ok: creates.elapsedMs / floor.elapsedMs <= 2 },
        listMs: { want: '< 300', ok: percentile(sortedList, 50) < 300 },
        watchP99Ms: { want: '< 50', ok: percentile(sortedDelivery, 99) < 50 },
      },
    };
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } finally {
    etcd.close();
    agent.destroy();
    await stopMaster(master.child);
    rmSync(master.dataDir, { recursive: true, force: true });
    rmSync(master.home, { recursive: true, force: true });
  }
}

main().catch((err) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
