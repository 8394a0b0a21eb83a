// Benchmark of the Deployment and ReplicaSet controllers on fake nodes: time to available and to a finished rolling update, and the API requests each took (from /metrics); prints one JSON object (progress goes to stderr).
//
// It starts a real master (its own etcd) and one worker hosting BENCH_NODES fake nodes
// (`--fake-nodes`: pods go Running and Ready at once, no containers), waits for them to be Ready,
// warms the path up with a small Deployment (made, rolled, deleted), then measures in one run:
// - create: a Deployment of BENCH_REPLICAS replicas (maxSurge and maxUnavailable left at their
//   25% defaults) from the POST until its status shows every replica updated, ready and available
//   for the current generation;
// - rollout: the template's image changed, until the rollout is complete as `rollout status` sees
//   it (observedGeneration current, every replica updated, ready and available) with the old
//   ReplicaSet at 0 (spec and status); also when the last old pod is gone, the most pods there
//   were at once (maxSurge bounds it) and the fewest Ready (maxUnavailable bounds it);
// - the floor, after the measured part with the same nodes: the same number of pods created
//   directly through the API (BENCH_CONCURRENCY clients) until all are Running and Ready, then
//   replaced directly (as many new pods created and the old ones deleted) until the new are Ready
//   and the old gone: the least any path can do for the same outcome.
// For each phase: the API requests made, by client (each controller, the scheduler, the kubelets,
// the benchmark itself) and by verb and resource, from /metrics before and after (counted until
// the watched objects have been quiet for BENCH_SETTLE_MS, so late writes count too); writes per
// pod; the store writes (etcd revisions) the phase made; and CPU seconds per process. Ratios set
// the controller path against the floor, in time and in writes.
//
// Sizes: --nodes N --replicas N --concurrency N (or BENCH_NODES, 10; BENCH_REPLICAS, 100;
// BENCH_CONCURRENCY, 16); BENCH_HEARTBEAT_S, the fake nodes' heartbeat (10); BENCH_WARMUP
// replicas of the warm-up Deployment (10, 0 skips it); BENCH_SETTLE_MS (1000); BENCH_FLOOR=0
// skips the floor; BENCH_TRACE=1 (or 2) logs the Deployment and ReplicaSet changes.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Etcd3 } from 'etcd3';
import { managedEtcdClientOptions } from '../src/control-plane/etcd/etcd-pki.js';
import { parseRequestMetrics, requestDeltas, WRITE_VERBS, type RequestCount } from '../src/control-plane/api-server/request-metrics.js';
import type { Deployment, DeploymentStatus } from '../src/core/api/deployment.js';
import type { KubeObject } from '../src/core/api/meta.js';
import type { Node } from '../src/core/api/node.js';
import type { Pod } from '../src/core/api/pod.js';
import type { ReplicaSet } from '../src/core/api/replicaset.js';
import { BINARY, freePort, startMaster, type MasterProcess } from '../test/helpers/master.js';

function flag(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  if (i >= 0) return process.argv[i + 1];
  return process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
}

function sizeOf(name: string, env: string, fallback: number, min = 1): number {
  const text = flag(name) ?? process.env[env];
  const n = text === undefined ? fallback : Number(text);
  if (!Number.isInteger(n) || n < min) {
    process.stderr.write(`bench failed: --${name} (${env}) must be a whole number of at least ${min}, not "${text}"\n`);
    process.exit(2);
  }
  return n;
}

const NODES = sizeOf('nodes', 'BENCH_NODES', 10);
const REPLICAS = sizeOf('replicas', 'BENCH_REPLICAS', 100);
const CONCURRENCY = sizeOf('concurrency', 'BENCH_CONCURRENCY', 16);
const HEARTBEAT_S = sizeOf('heartbeat', 'BENCH_HEARTBEAT_S', 10);
const WARMUP = sizeOf('warmup', 'BENCH_WARMUP', 10, 0);
const SETTLE_MS = sizeOf('settle', 'BENCH_SETTLE_MS', 1000);
const FLOOR = process.env.BENCH_FLOOR !== '0';
/** BENCH_TRACE=1: every Deployment and ReplicaSet event of the watched namespaces on stderr, to see where a phase waits; 2 adds each status in full. */
const TRACE = Number(process.env.BENCH_TRACE ?? 0);
const PREFIX = 'bench-ctl';
const NS = 'bench-deploy';
const DIRECT_NS = 'bench-direct';
const WARM_NS = 'bench-warm';
/** How long one phase may take before the run is called failed. */
const PHASE_TIMEOUT_MS = Math.max(180_000, REPLICAS * 1000);

const startedAt = performance.now();
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const round2 = (n: number) => Math.round(n * 100) / 100;
const seconds = (ms: number) => round2(ms / 1000);

function log(message: string): void {
  process.stderr.write(`[controllers ${((performance.now() - startedAt) / 1000).toFixed(1)}s] ${message}\n`);
}

// ---- CPU -----------------------------------------------------------------------------------------

/** CPU time (user + system) a process has used, in seconds; /proc/PID/stat counts clock ticks (100 a second). */
function cpuSeconds(pid: number | undefined): number | undefined {
  if (!pid) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

/** Busy CPU seconds of the whole machine (all but idle and iowait): what other work took shows as the rest. */
function machineBusySeconds(): number | undefined {
  try {
    const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    return (f.reduce((a, b) => a + b, 0) - f[3]! - (f[4] ?? 0)) / 100;
  } catch {
    return undefined;
  }
}

type CpuKey = 'master' | 'etcd' | 'worker' | 'bench' | 'machine';

function cpuMeter(pids: { master?: number; etcd?: number; worker?: number }) {
  const sample = (): Record<CpuKey, number | undefined> => ({
    master: cpuSeconds(pids.master),
    etcd: cpuSeconds(pids.etcd),
    worker: cpuSeconds(pids.worker),
    bench: (process.cpuUsage().user + process.cpuUsage().system) / 1e6,
    machine: machineBusySeconds(),
  });
  const before = sample();
  return () => {
    const after = sample();
    const d = (k: CpuKey) => (before[k] !== undefined && after[k] !== undefined ? round2(after[k]! - before[k]!) : null);
    const ours = (['master', 'etcd', 'worker', 'bench'] as const).map((k) => d(k) ?? 0).reduce((a, b) => a + b, 0);
    const machine = d('machine');
    return {
      cores: cpus().length,
      masterS: d('master'),
      etcdS: d('etcd'),
      workerS: d('worker'),
      benchS: d('bench'),
      machineBusyS: machine,
      otherProcessesS: machine === null ? null : round2(Math.max(0, machine - ours)),
    };
  };
}

// ---- HTTP ----------------------------------------------------------------------------------------

const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY * 2 });

interface Api {
  call(method: string, path: string, body?: unknown, contentType?: string): Promise<{ status: number; body: string }>;
  json<T>(method: string, path: string, body?: unknown, contentType?: string): Promise<T>;
  watch(path: string, resourceVersion: string, onEvent: (type: string, object: KubeObject) => void): Promise<() => void>;
}

function api(url: string, token: string): Api {
  const base = new URL(url);
  const call: Api['call'] = (method, path, body, contentType = 'application/json') => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const req = request(
        {
          host: base.hostname,
          port: base.port,
          method,
          path,
          agent,
          headers: { authorization: `Bearer ${token}`, 'content-type': contentType, ...(payload ? { 'content-length': Buffer.byteLength(payload) } : {}) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  };
  return {
    call,
    async json(method, path, body, contentType) {
      const res = await call(method, path, body, contentType);
      if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${res.body.slice(0, 500)}`);
      return JSON.parse(res.body);
    },
    watch(path, resourceVersion, onEvent) {
      return new Promise((resolve, reject) => {
        const req = request(
          {
            host: base.hostname,
            port: base.port,
            path: `${path}?watch=1&resourceVersion=${resourceVersion}`,
            headers: { authorization: `Bearer ${token}` },
          },
          (res) => {
            if (res.statusCode !== 200) return reject(new Error(`watch ${path} answered ${res.statusCode}`));
            let buffer = '';
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => {
              buffer += chunk;
              for (let i = buffer.indexOf('\n'); i >= 0; i = buffer.indexOf('\n')) {
                const line = buffer.slice(0, i);
                buffer = buffer.slice(i + 1);
                if (!line.trim()) continue;
                const event = JSON.parse(line) as { type: string; object: KubeObject };
                if (event.type !== 'BOOKMARK') onEvent(event.type, event.object);
              }
            });
            res.on('error', () => {});
            resolve(() => req.destroy());
          },
        );
        req.on('error', reject);
        req.end();
      });
    },
  };
}

/** Runs `total` jobs through `concurrency` workers. */
async function drive(total: number, concurrency: number, job: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, total) }, async () => {
      for (;;) {
        const i = next++;
        if (i >= total) return;
        await job(i);
      }
    }),
  );
}

/** Polls `check` every 20 ms until it holds; throws with `what` after the deadline, or at once when `failed` says why. */
async function until(what: string, check: () => boolean, failed: () => string | undefined, timeoutMs = PHASE_TIMEOUT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastLog = performance.now();
  for (;;) {
    if (check()) return;
    const why = failed();
    if (why) throw new Error(`while waiting for ${what}: ${why}`);
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    if (performance.now() - lastLog > 10_000) {
      lastLog = performance.now();
      log(`still waiting for ${what}`);
    }
    await sleep(20);
  }
}

// ---- Objects -------------------------------------------------------------------------------------

const CONTAINER = (image: string) => ({ name: 'app', image, command: ['sleep', '3600'], resources: { requests: { cpu: '100m', memory: '64Mi' } } });

function deploymentBody(name: string, replicas: number, image: string) {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [CONTAINER(image)] } },
    },
  };
}

function podBody(name: string, image: string) {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { app: 'direct' } }, spec: { containers: [CONTAINER(image)] } };
}

const IMAGE_1 = 'busybox:1.35';
const IMAGE_2 = 'busybox:1.36';

interface PodView {
  uid?: string;
  image?: string;
  phase?: string;
  ready: boolean;
  terminating: boolean;
}

/** Pods of one namespace as a watch shows them, with when each was first seen and first Running and Ready. */
class PodWatch {
  readonly pods = new Map<string, PodView>();
  readonly firstSeen = new Map<string, number>();
  readonly firstReady = new Map<string, number>();
  lastEventAt = performance.now();
  maxAlive = 0;
  minReady = Infinity;
  #tracking = false;

  onEvent(type: string, pod: Pod): void {
    const name = pod.metadata.name as string;
    const now = performance.now();
    this.lastEventAt = now;
    if (type === 'DELETED') this.pods.delete(name);
    else {
      const ready = pod.status?.phase === 'Running' && !!pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
      this.pods.set(name, {
        uid: pod.metadata.uid,
        image: pod.spec?.containers?.[0]?.image,
        phase: pod.status?.phase,
        ready,
        terminating: !!pod.metadata.deletionTimestamp,
      });
      if (!this.firstSeen.has(name)) this.firstSeen.set(name, now);
      if (ready && !this.firstReady.has(name)) this.firstReady.set(name, now);
    }
    if (this.#tracking) {
      this.maxAlive = Math.max(this.maxAlive, this.alive().length);
      this.minReady = Math.min(this.minReady, this.alive().filter((p) => p.ready).length);
    }
  }

  /** Start recording the most pods alive and the fewest Ready from now on. */
  track(): void {
    this.#tracking = true;
    this.maxAlive = this.alive().length;
    this.minReady = this.alive().filter((p) => p.ready).length;
  }

  alive(): PodView[] {
    return [...this.pods.values()].filter((p) => !p.terminating);
  }
}

// ---- Accounting ----------------------------------------------------------------------------------

/** Node heartbeats (a kubelet's writes to its Node) come with time, not with work: set apart. */
const isHeartbeat = (c: RequestCount) => c.group === '' && c.resource === 'nodes';
const clientGroup = (client: string) => (client.startsWith('system:node:') ? 'kubelets' : client === 'admin' ? 'bench' : client);
/** `patch replicasets.apps/status`, with the code when it is not a success (`patch replicasets.apps 409`). */
const requestName = (c: RequestCount) =>
  `${c.verb} ${c.group ? `${c.resource}.${c.group}` : c.resource}${c.subresource ? `/${c.subresource}` : ''}${c.code.startsWith('2') ? '' : ` ${c.code}`}`;

interface ClientFigures {
  requests: number;
  writes: number;
  /** Writes refused with 409 Conflict: lost races (a stale cache, a concurrent writer), each retried. */
  conflicts: number;
  /** Writes other than node heartbeats. */
  writesPerPod: number;
  byRequest: Record<string, number>;
}

/** Requests of a phase by client group, writes per pod (`pods` made by the phase), heartbeats apart. */
function account(deltas: readonly RequestCount[], pods: number) {
  const clients: Record<string, ClientFigures> = {};
  let requests = 0;
  let writes = 0;
  let heartbeatWrites = 0;
  let conflicts = 0;
  for (const c of deltas) {
    const group = clientGroup(c.client);
    clients[group] ??= { requests: 0, writes: 0, conflicts: 0, writesPerPod: 0, byRequest: {} };
    const figures = clients[group];
    figures.requests += c.value;
    requests += c.value;
    const name = requestName(c);
    figures.byRequest[name] = (figures.byRequest[name] ?? 0) + c.value;
    if (!WRITE_VERBS.has(c.verb)) continue;
    if (isHeartbeat(c)) {
      heartbeatWrites += c.value;
      continue;
    }
    figures.writes += c.value;
    writes += c.value;
    if (c.code === '409') {
      figures.conflicts += c.value;
      conflicts += c.value;
    }
  }
  for (const f of Object.values(clients)) {
    f.writesPerPod = round2(f.writes / pods);
    f.byRequest = Object.fromEntries(Object.entries(f.byRequest).sort(([a], [b]) => a.localeCompare(b)));
  }
  const controllerWrites = (clients['deployment-controller']?.writes ?? 0) + (clients['replicaset-controller']?.writes ?? 0);
  return {
    requests,
    writes,
    conflicts,
    heartbeatWrites,
    writesPerPod: {
      controllers: round2(controllerWrites / pods),
      all: round2(writes / pods),
    },
    byClient: Object.fromEntries(Object.entries(clients).sort(([a], [b]) => a.localeCompare(b))),
  };
}

// ---- The run -------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const workerDir = mkdtempSync(join(tmpdir(), 'minik8s-bench-ctl-worker-'));
  let master: MasterProcess | undefined;
  let worker: ChildProcess | undefined;
  let workerOutput = '';
  let etcd: Etcd3 | undefined;
  const closers: (() => void)[] = [];
  const stopAll = async () => {
    for (const close of closers) close();
    if (worker && worker.exitCode === null && worker.signalCode === null) {
      const exited = new Promise((resolve) => worker!.once('exit', resolve));
      worker.kill('SIGTERM');
      const timer = setTimeout(() => worker!.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
    }
    await master?.stop();
  };
  process.once('SIGINT', () => void stopAll().then(() => process.exit(130)));
  try {
    master = await startMaster({ tls: false, registry: false });
    const k = api(master.url, master.token);
    log(`master ready on ${master.url}; starting ${NODES} fake nodes`);
    const nodesStart = performance.now();
    worker = spawn(
      process.execPath,
      [
        BINARY,
        '--role=worker',
        '--server',
        master.url,
        '--token',
        master.joinToken,
        '--fake-nodes',
        String(NODES),
        '--name',
        PREFIX,
        '--node-ip',
        '127.0.0.1',
        '--data-dir',
        workerDir,
        '--kubelet-port',
        String(await freePort()),
        '--fake-node-heartbeat',
        String(HEARTBEAT_S),
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const keep = (d: Buffer) => {
      workerOutput += d.toString('utf8');
      if (workerOutput.length > 200_000) workerOutput = workerOutput.slice(-100_000);
    };
    worker.stdout!.on('data', keep);
    worker.stderr!.on('data', keep);
    const died = () => {
      if (worker!.exitCode !== null || worker!.signalCode !== null) return `the fake-node worker exited:\n${workerOutput.slice(-3000)}`;
      if (master!.child.exitCode !== null || master!.child.signalCode !== null) return `the master exited:\n${master!.output().slice(-3000)}`;
      return undefined;
    };
    for (const deadline = Date.now() + 120_000; ; ) {
      const why = died();
      if (why) throw new Error(why);
      const nodes = await k.json<{ items: Node[] }>('GET', '/api/v1/nodes');
      const ready = nodes.items.filter(
        (n) => n.metadata.name!.startsWith(PREFIX) && n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
      ).length;
      if (ready >= NODES) break;
      if (Date.now() > deadline) throw new Error(`only ${ready} of ${NODES} fake nodes Ready in 120 s:\n${workerOutput.slice(-3000)}`);
      await sleep(200);
    }
    const nodesReadySeconds = seconds(performance.now() - nodesStart);
    log(`${NODES} fake nodes Ready in ${nodesReadySeconds} s`);
    for (const ns of [NS, DIRECT_NS, WARM_NS]) await k.json('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });

    etcd = new Etcd3(managedEtcdClientOptions(master.dataDir, master.etcdPort));
    const storeRevision = async () => Number((await etcd!.get('/minik8s-bench-revision').exec()).header.revision);
    const metrics = async () => {
      const res = await k.call('GET', '/metrics');
      if (res.status !== 200) throw new Error(`GET /metrics answered ${res.status}: ${res.body.slice(0, 300)}`);
      return parseRequestMetrics(res.body);
    };
    const pids = { master: master.child.pid, etcd: Number(readFileSync(join(master.dataDir, 'etcd.pid'), 'utf8').trim()) || undefined, worker: worker.pid };

    /** Opens watches on a namespace's Deployments, ReplicaSets and pods from now. */
    const watchNamespace = async (ns: string) => {
      const rv = (await k.json<{ metadata: { resourceVersion: string } }>('GET', `/api/v1/namespaces/${ns}/pods`)).metadata.resourceVersion;
      const pods = new PodWatch();
      const deployments = new Map<string, Deployment>();
      const replicaSets = new Map<string, ReplicaSet>();
      let lastOther = performance.now();
      const watched = { pods, deployments, replicaSets, lastEventAt: () => Math.max(pods.lastEventAt, lastOther) };
      const keepIn =
        <T extends Deployment | ReplicaSet>(map: Map<string, T>) =>
        (type: string, object: KubeObject) => {
          const obj = object as T;
          lastOther = performance.now();
          if (TRACE) {
            const s: DeploymentStatus = obj.status ?? {};
            log(
              `${obj.kind} ${obj.metadata.name} ${type} gen ${obj.metadata.generation} spec ${obj.spec.replicas} status r${s.replicas ?? 0} u${s.updatedReplicas ?? '-'} rd${s.readyReplicas ?? 0} av${s.availableReplicas ?? 0} og${s.observedGeneration ?? '-'}`,
            );
            if (TRACE >= 2) log(`  status ${JSON.stringify(s)}`);
          }
          if (type === 'DELETED') map.delete(obj.metadata.name!);
          else map.set(obj.metadata.name!, obj);
        };
      closers.push(await k.watch(`/api/v1/namespaces/${ns}/pods`, rv, (type, obj) => pods.onEvent(type, obj as Pod)));
      closers.push(await k.watch(`/apis/apps/v1/namespaces/${ns}/deployments`, rv, keepIn(deployments)));
      closers.push(await k.watch(`/apis/apps/v1/namespaces/${ns}/replicasets`, rv, keepIn(replicaSets)));
      return watched;
    };
    type Watched = Awaited<ReturnType<typeof watchNamespace>>;

    /** Waits until nothing watched has changed for SETTLE_MS, so the requests a phase caused are all in before they are read. */
    const settle = async (w: Watched) => {
      const deadline = Date.now() + 30_000;
      while (performance.now() - w.lastEventAt() < SETTLE_MS && Date.now() < deadline) await sleep(50);
    };

    /** Before and after a phase: requests, store revision and CPU; `pods` is what the phase made, for writes per pod. */
    const measure = async () => {
      const before = { metrics: await metrics(), revision: await storeRevision(), cpu: cpuMeter(pids) };
      return async (pods: number) => {
        const cpu = before.cpu();
        const deltas = requestDeltas(before.metrics, await metrics());
        return { ...account(deltas, pods), storeWrites: (await storeRevision()) - before.revision, cpu };
      };
    };
    type PhaseFigures = Awaited<ReturnType<Awaited<ReturnType<typeof measure>>>>;

    const deploymentDone = (w: Watched, name: string, replicas: number) => {
      const d = w.deployments.get(name);
      const s = d?.status;
      if (!d || !s || s.observedGeneration === undefined || d.metadata.generation === undefined) return false;
      return (
        s.observedGeneration >= d.metadata.generation &&
        s.replicas === replicas &&
        s.updatedReplicas === replicas &&
        s.readyReplicas === replicas &&
        s.availableReplicas === replicas
      );
    };
    /** Every ReplicaSet of the Deployment but the one of its current template at 0, in spec and status. */
    const oldReplicaSetsDrained = (w: Watched, image: string) =>
      [...w.replicaSets.values()]
        .filter((rs) => rs.spec.template.spec.containers[0].image !== image)
        .every((rs) => rs.spec.replicas === 0 && (rs.status?.replicas ?? 0) === 0);

    // Warm-up: the whole path once, small, then gone (namespace and all) before anything is measured.
    if (WARMUP > 0) {
      const w = await watchNamespace(WARM_NS);
      await k.json('POST', `/apis/apps/v1/namespaces/${WARM_NS}/deployments`, deploymentBody('warm', WARMUP, IMAGE_1));
      await until('the warm-up Deployment available', () => deploymentDone(w, 'warm', WARMUP), died);
      await k.json(
        'PATCH',
        `/apis/apps/v1/namespaces/${WARM_NS}/deployments/warm`,
        { spec: { template: { spec: { containers: [CONTAINER(IMAGE_2)] } } } },
        'application/merge-patch+json',
      );
      await until('the warm-up rollout', () => deploymentDone(w, 'warm', WARMUP) && oldReplicaSetsDrained(w, IMAGE_2) && w.pods.pods.size === WARMUP, died);
      await k.json('DELETE', `/api/v1/namespaces/${WARM_NS}`);
      for (const deadline = Date.now() + 120_000; (await k.call('GET', `/api/v1/namespaces/${WARM_NS}`)).status !== 404; ) {
        if (Date.now() > deadline) throw new Error('the warm-up namespace was not gone within 120 s');
        await sleep(200);
      }
      log(`warm-up: a Deployment of ${WARMUP} made, rolled and deleted`);
    }

    // Phase 1: a Deployment from nothing to every replica available.
    const w = await watchNamespace(NS);
    let measured = await measure();
    let t0 = performance.now();
    await k.json('POST', `/apis/apps/v1/namespaces/${NS}/deployments`, deploymentBody('web', REPLICAS, IMAGE_1));
    await until(`${REPLICAS} replicas available`, () => deploymentDone(w, 'web', REPLICAS), died);
    const availableMs = performance.now() - t0;
    const firstPods = [...w.pods.pods.keys()];
    const lastOf = (names: string[], times: Map<string, number>) => Math.max(...names.map((n) => times.get(n) ?? NaN));
    const createTimes = {
      allPodsCreatedSeconds: seconds(lastOf(firstPods, w.pods.firstSeen) - t0),
      allPodsReadySeconds: seconds(lastOf(firstPods, w.pods.firstReady) - t0),
    };
    await settle(w);
    const createFigures = await measured(REPLICAS);
    log(
      `create: ${REPLICAS} available in ${seconds(availableMs)} s, ${createFigures.writes} writes (${createFigures.writesPerPod.controllers} per pod by the controllers)`,
    );

    // Phase 2: a rolling update to a new image.
    const oldPods = new Set(w.pods.pods.keys());
    measured = await measure();
    w.pods.track();
    t0 = performance.now();
    await k.json(
      'PATCH',
      `/apis/apps/v1/namespaces/${NS}/deployments/web`,
      { spec: { template: { spec: { containers: [CONTAINER(IMAGE_2)] } } } },
      'application/merge-patch+json',
    );
    await until('the rollout complete', () => deploymentDone(w, 'web', REPLICAS) && oldReplicaSetsDrained(w, IMAGE_2), died);
    const rolloutMs = performance.now() - t0;
    await until('the old pods gone', () => ![...oldPods].some((n) => w.pods.pods.has(n)), died);
    const oldPodsGoneMs = performance.now() - t0;
    await settle(w);
    const newPods = [...w.pods.firstSeen.keys()].filter((n) => !oldPods.has(n));
    const rolloutFigures = await measured(REPLICAS);
    log(`rollout: complete in ${seconds(rolloutMs)} s, old pods gone in ${seconds(oldPodsGoneMs)} s, ${rolloutFigures.writes} writes`);
    const deployment = {
      create: { availableSeconds: seconds(availableMs), ...createTimes, podsCreated: firstPods.length, ...createFigures },
      rollout: {
        completeSeconds: seconds(rolloutMs),
        oldPodsGoneSeconds: seconds(oldPodsGoneMs),
        podsCreated: newPods.length,
        maxPods: w.pods.maxAlive,
        minReadyPods: w.pods.minReady,
        bounds: { maxPods: REPLICAS + Math.ceil(REPLICAS * 0.25), minReadyPods: REPLICAS - Math.floor(REPLICAS * 0.25) },
        ...rolloutFigures,
      },
    };

    // The floor: the same outcomes with no controller, pods created and deleted directly.
    let floor: { create: PhaseFigures & { readySeconds: number }; replace: PhaseFigures & { readySeconds: number; oldPodsGoneSeconds: number } } | undefined;
    if (FLOOR) {
      const f = await watchNamespace(DIRECT_NS);
      measured = await measure();
      t0 = performance.now();
      await drive(REPLICAS, CONCURRENCY, async (i) => {
        await k.json('POST', `/api/v1/namespaces/${DIRECT_NS}/pods`, podBody(`direct-${i}`, IMAGE_1));
      });
      await until(`${REPLICAS} direct pods Running and Ready`, () => f.pods.alive().filter((p) => p.ready).length === REPLICAS, died);
      const directCreateMs = performance.now() - t0;
      await settle(f);
      const directCreate = { readySeconds: seconds(directCreateMs), ...(await measured(REPLICAS)) };
      log(`floor create: ${REPLICAS} pods Ready in ${directCreate.readySeconds} s, ${directCreate.writes} writes`);

      measured = await measure();
      t0 = performance.now();
      await drive(REPLICAS * 2, CONCURRENCY, async (i) => {
        const n = i >> 1;
        if (i % 2 === 0) await k.json('POST', `/api/v1/namespaces/${DIRECT_NS}/pods`, podBody(`direct2-${n}`, IMAGE_2));
        else await k.json('DELETE', `/api/v1/namespaces/${DIRECT_NS}/pods/direct-${n}`);
      });
      const replaced = () => {
        const alive = f.pods.alive();
        return alive.length === REPLICAS && alive.every((p) => p.ready && p.image === IMAGE_2);
      };
      await until('the direct replacement Ready', replaced, died);
      const directReadyMs = performance.now() - t0;
      await until('the old direct pods gone', () => f.pods.pods.size === REPLICAS, died);
      const directGoneMs = performance.now() - t0;
      await settle(f);
      const directReplace = { readySeconds: seconds(directReadyMs), oldPodsGoneSeconds: seconds(directGoneMs), ...(await measured(REPLICAS)) };
      log(
        `floor replace: new pods Ready in ${directReplace.readySeconds} s, old gone in ${directReplace.oldPodsGoneSeconds} s, ${directReplace.writes} writes`,
      );
      floor = { create: directCreate, replace: directReplace };
    }

    const ratio = (a: number, b: number) => (b > 0 ? round2(a / b) : null);
    const result = {
      benchmark: 'controllers',
      nodes: NODES,
      replicas: REPLICAS,
      strategy: 'RollingUpdate, maxSurge 25%, maxUnavailable 25% (defaults)',
      heartbeatSeconds: HEARTBEAT_S,
      floorConcurrency: CONCURRENCY,
      setup: { nodesReadySeconds },
      deployment,
      floor: floor ?? null,
      ratio: floor
        ? {
            createSeconds: ratio(deployment.create.availableSeconds, floor.create.readySeconds),
            createWrites: ratio(deployment.create.writes, floor.create.writes),
            createStoreWrites: ratio(deployment.create.storeWrites, floor.create.storeWrites),
            rolloutSeconds: ratio(deployment.rollout.completeSeconds, floor.replace.readySeconds),
            rolloutOldPodsGoneSeconds: ratio(deployment.rollout.oldPodsGoneSeconds, floor.replace.oldPodsGoneSeconds),
            rolloutWrites: ratio(deployment.rollout.writes, floor.replace.writes),
            rolloutStoreWrites: ratio(deployment.rollout.storeWrites, floor.replace.storeWrites),
          }
        : null,
      notes: [
        'requests and writes come from apiserver_request_total deltas (GET /metrics) over each phase, until the watched objects were quiet for BENCH_SETTLE_MS; clients: each in-process controller by name, the scheduler, "kubelets" (every system:node:* user), "bench" (this benchmark, the admin)',
        "writes: create, update, patch, delete requests, refused ones included (conflicts: those answered 409, lost races against a newer object, which write nothing), node heartbeats (kubelets' writes to nodes) left out and counted in heartbeatWrites; storeWrites: the etcd revisions the phase made, heartbeats and events included",
        'writesPerPod: writes / replicas; controllers = the Deployment and ReplicaSet controllers together',
        `floor: ${REPLICAS} pods created directly by ${CONCURRENCY} clients until Running and Ready; then ${REPLICAS} new pods created and the old deleted directly, until the new are Ready and the old gone`,
        'cpu.otherProcessesS: CPU the rest of the machine used meanwhile; figures taken while it is high are not comparable',
      ],
    };
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } finally {
    etcd?.close();
    await stopAll();
    agent.destroy();
    rmSync(workerDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
