// Benchmark of the Job controller: a Job of 200 completions with parallelism 20 on fake nodes, completions per second and API writes per completion against Kubernetes' write pattern; prints one JSON object (progress on stderr).
//
// It starts a real master (plain HTTP, its own etcd, scheduler and job controller) and hosts fake
// nodes in this process (src/node/fake-nodes) whose pods exit 0 a moment after they run (the
// host's `completion` option, as kwok's stages). Writes are counted from the master's request
// counters (GET /metrics) by client and resource, from the Job's create to its Complete condition.
//
// The floor is what Kubernetes' job controller writes, counted the same way: per completion one
// pod create and one Job status update, plus the scheduler's binding and the kubelet's pod status
// writes, which are the same for both and taken as measured. Kubernetes (with finalizer tracking)
// also writes a finalizer removal per pod, so its real count is above this floor.
//
// Sizes: --completions N (BENCH_COMPLETIONS, default 200), --parallelism N (BENCH_PARALLELISM,
// default 20), --nodes N (BENCH_NODES, default 10), --run-ms N (BENCH_RUN_MS, default 200: how
// long each pod runs). Exits 1 only if the run itself failed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

const COMPLETIONS = setting('completions', 'BENCH_COMPLETIONS', 200);
const PARALLELISM = setting('parallelism', 'BENCH_PARALLELISM', 20);
const NODES = setting('nodes', 'BENCH_NODES', 10);
const RUN_MS = setting('run-ms', 'BENCH_RUN_MS', 200);
const NS = 'bench-job';
const startedAt = performance.now();
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const round2 = (n: number) => Math.round(n * 100) / 100;

/** What the bench reads of the answers. */
interface BenchJob {
  status?: { succeeded?: number; conditions?: { type: string; status: string }[] };
}

function log(message: string): void {
  process.stderr.write(`[job ${((performance.now() - startedAt) / 1000).toFixed(1)}s] ${message}\n`);
}

/** Write requests by `client resource[/subresource]`, from the master's counters. */
async function writeCounts(server: string, token: string): Promise<Map<string, number>> {
  const res = await fetch(`${server}/metrics`, { headers: { authorization: `Bearer ${token}` } });
  if (!res.ok) throw new Error(`GET /metrics: ${res.status} ${await res.text()}`);
  const counts = new Map<string, number>();
  for (const c of parseRequestMetrics(await res.text())) {
    if (!WRITE_VERBS.has(c.verb)) continue;
    // Every fake node writes as its own user: one bucket for all of them.
    const client = c.client.startsWith('system:node:') ? 'kubelets' : c.client;
    const key = `${client} ${c.resource}${c.subresource ? `/${c.subresource}` : ''}`;
    counts.set(key, (counts.get(key) ?? 0) + c.value);
  }
  return counts;
}

async function main(): Promise<void> {
  const workerDir = mkdtempSync(join(tmpdir(), 'minik8s-bench-job-worker-'));
  let master: MasterProcess | undefined;
  const stop = new AbortController();
  let hostRun: Promise<void> | undefined;
  try {
    master = await startMaster({ tls: false, registry: false });
    const { url: server, token, joinToken } = master;
    const api = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${server}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
      return res.json() as Promise<BenchJob>;
    };
    const host = new FakeNodeHost({
      server,
      joinToken,
      names: fakeNodeNames('job', NODES),
      nodeIP: '127.0.0.1',
      capacity: DEFAULT_FAKE_NODE_CAPACITY,
      labels: {},
      taints: [],
      kubeletPort: 10250,
      dataDir: workerDir,
      completion: () => ({ afterMs: RUN_MS, exitCode: 0 }),
      log: (m) => {
        if (/failed|refused/.test(m)) log(m);
      },
    });
    hostRun = host.start(stop.signal);
    let failure: unknown;
    hostRun.catch((err) => {
      failure = err;
    });
    while (host.nodeNames.length < NODES) {
      if (failure) throw failure;
      await sleep(200);
    }
    log(`master on ${server}, ${NODES} fake nodes registered; Job of ${COMPLETIONS} completions, parallelism ${PARALLELISM}, pods run ${RUN_MS} ms`);
    await api('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    // Let the registrations' writes settle before counting.
    await sleep(2000);

    const before = await writeCounts(server, token);
    const t0 = performance.now();
    await api('POST', `/apis/batch/v1/namespaces/${NS}/jobs`, {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'bench' },
      spec: {
        completions: COMPLETIONS,
        parallelism: PARALLELISM,
        template: { spec: { restartPolicy: 'Never', containers: [{ name: 'work', image: 'busybox:1.35' }] } },
      },
    });
    const deadline = Date.now() + 600_000;
    let job: BenchJob = {};
    for (;;) {
      if (failure) throw failure;
      job = await api('GET', `/apis/batch/v1/namespaces/${NS}/jobs/bench`);
      if ((job.status?.conditions ?? []).some((c) => c.type === 'Complete' && c.status === 'True')) break;
      if (Date.now() > deadline) throw new Error(`the Job did not complete in 10 minutes: ${JSON.stringify(job.status)}`);
      await sleep(100);
    }
    const seconds = (performance.now() - t0) / 1000;
    // The last status writes of the pods land around the Complete write: a moment for them to arrive.
    await sleep(1500);
    const after = await writeCounts(server, token);

    const byClient: Record<string, number> = {};
    let total = 0;
    for (const [key, n] of after) {
      const delta = n - (before.get(key) ?? 0);
      if (delta <= 0) continue;
      byClient[key] = delta;
      total += delta;
    }
    const sum = (pred: (key: string) => boolean) => Object.entries(byClient).reduce((s, [k, n]) => s + (pred(k) ? n : 0), 0);
    const eventWrites = sum((k) => k.endsWith(' events'));
    const jobControllerWrites = sum((k) => k.startsWith('job-controller ') && !k.endsWith(' events'));
    const kubeletPodStatus = sum((k) => k.startsWith('kubelets pods/status'));
    const bindings = sum((k) => k.endsWith('pods/binding'));
    // Node Leases are heartbeats, not Job work; the Job's own create is in both counts.
    const leaseWrites = sum((k) => k.endsWith(' leases'));
    const measured = total - eventWrites - leaseWrites;
    const floor = 1 + COMPLETIONS * 2 + kubeletPodStatus + bindings;
    process.stdout.write(
      `${JSON.stringify(
        {
          bench: 'job',
          completions: COMPLETIONS,
          parallelism: PARALLELISM,
          fakeNodes: NODES,
          podRunMs: RUN_MS,
          seconds: round2(seconds),
          completionsPerSecond: round2(COMPLETIONS / seconds),
          succeeded: job.status?.succeeded,
          apiWrites: measured,
          apiWritesPerCompletion: round2(measured / COMPLETIONS),
          jobControllerWritesPerCompletion: round2(jobControllerWrites / COMPLETIONS),
          kubernetesFloorPerCompletion: round2(floor / COMPLETIONS),
          ratioToFloor: round2(measured / floor),
          eventWrites,
          writesByClientAndResource: byClient,
          notes: [
            'writes exclude Events (both controllers emit them) and node Lease renewals; counted from the master request counters between the Job create and 1.5 s after its Complete condition',
            'floor: the Job create, then per completion 1 pod create + 1 Job status update (Kubernetes job controller) + the scheduler binding and kubelet pod status writes as measured here',
          ],
        },
        null,
        2,
      )}\n`,
    );
  } finally {
    stop.abort();
    await hostRun?.catch(() => {});
    await master?.stop();
    rmSync(workerDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
