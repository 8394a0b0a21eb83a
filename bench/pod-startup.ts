// Benchmark of pod startup on one real node against raw Docker in the same run; prints one JSON object (progress goes to stderr).
//
// It starts a real master (its own etcd and image registry, seeded with the base images) and a
// real worker joined to it with the master's join token, as child processes, then measures:
// - startup latency: BENCH_PODS pods (pause + busybox `sleep 3600`) created at a steady pace
//   (BENCH_PACE_MS apart: 1000 ms, 1 pod/s, by default; each create does not wait for earlier
//   pods), from the create call to the first watch event showing phase Running with the
//   container running, as clusterloader2's pod startup latency measures it;
// - the floor: the same two containers (same create bodies, from the kubelet's own config
//   builders, on a network made with the same options) created and started with dockerode at
//   the same pace, one after another, and one container alone; the throughput run's pairs
//   through 8 parallel workers (the kubelet's sync workers); ratios of the pods' figures to these;
// - throughput: BENCH_THROUGHPUT_PODS pods created at once on the one node, time until all run,
//   set against clusterloader2's single-node bar (100 pods at 5 pods/s, each Running within 5 s);
// - the worker's RSS idle, with BENCH_PODS pods running, and with the throughput pods running,
//   and the CPU seconds the worker, master and Docker used in the latency and throughput runs.
// Every wait has a deadline; everything made (containers, networks, image tags, temp dirs,
// processes) is removed at the end, also on failure or Ctrl-C.
// BENCH_WORKER_NODE_ARGS / BENCH_MASTER_NODE_ARGS pass node flags (e.g. --cpu-prof --cpu-prof-dir=DIR).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Docker from 'dockerode';
import { nodeKind } from '../src/core/api/node.js';
import { podKind, type Container, type Pod } from '../src/core/api/pod.js';
import { ApiClient, kindObjectPath } from '../src/core/client/api-client.js';
import { podNetworkConfig } from '../src/core/api/ipv4.js';
import { appContainerCreateOptions, resolveImageName, sandboxCreateOptions, type DockerCreateOptions } from '../src/runtime/docker-container-config.js';
import { dockerConnectOptions } from '../src/runtime/docker-provider.js';
import { LABELS } from '../src/runtime/provider.js';
import { prebuiltRegistryStore, seedRegistryStore } from '../test/helpers/images.js';

const PODS = Number(process.env.BENCH_PODS ?? 30);
const THROUGHPUT_PODS = Number(process.env.BENCH_THROUGHPUT_PODS ?? 100);
const FLOOR_ITERATIONS = Number(process.env.BENCH_FLOOR_ITERATIONS ?? PODS);
/** Gap between creates in the latency run (and the floor's starts): 1 pod/s by default; 200 ms is 5 pods/s. */
const PACE_MS = Number(process.env.BENCH_PACE_MS ?? 1000);
/** Pairs created one after another (each waiting for the last): the uncontended floor, for reference. */
const SERIAL_FLOOR_ITERATIONS = Number(process.env.BENCH_SERIAL_FLOOR_ITERATIONS ?? 10);
/** BENCH_THROUGHPUT_FLOOR=0 skips raw Docker's run of the throughput pods. */
const THROUGHPUT_FLOOR = process.env.BENCH_THROUGHPUT_FLOOR !== '0';
/** Parallel Docker calls in the throughput floor: the kubelet's default sync workers. */
const FLOOR_CONCURRENCY = Number(process.env.BENCH_FLOOR_CONCURRENCY ?? 8);
/** BENCH_FLOOR_ONLY=1 runs the raw Docker floor alone (no master, no worker). */
const FLOOR_ONLY = process.env.BENCH_FLOOR_ONLY === '1';

const STARTUP_P99_TARGET_MS = 2000;
const P50_VS_FLOOR_TARGET = 2;
const THROUGHPUT_TARGET_MS = 30_000;
/** clusterloader2's single-node bar: 100 pods at 5 pods/s, each Running within 5 s of its creation. */
const CL2_POD_STARTUP_MS = 5000;
const CL2_PODS_PER_SECOND = 5;

const BASE_REGISTRY = '127.0.0.1:5000';
const APP_IMAGE = 'busybox:1.35';
const PAUSE_IMAGE = 'minik8s/pause:1.0';

const binary = fileURLToPath(new URL('../bin/minik8s.js', import.meta.url));
// Every Docker call is bounded too: a hung engine fails the run instead of stalling it.
const docker = new Docker({ ...dockerConnectOptions(process.env.DOCKER_HOST), timeout: 120_000 });
const startedAt = performance.now();
const RUN = `${process.pid.toString(36)}${Math.random().toString(36).slice(2, 6)}`;
const NODE_NAME = `bench-node-${RUN}`;
const FLOOR_NODE = `bench-floor-${RUN}`;
const BRIDGE = `mkb${RUN}`.slice(0, 15);
const FLOOR_BRIDGE = `mkf${RUN}`.slice(0, 15);
const NAMESPACE = 'default';
const RUN_LABEL = 'minik8s.io/bench-run';

function log(message: string): void {
  process.stderr.write(`[pod-startup ${((performance.now() - startedAt) / 1000).toFixed(1)}s] ${message}\n`);
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Set when the run must stop early (Ctrl-C, the worker died): every wait and loop throws it. */
let fatal: string | undefined;

function checkFatal(): void {
  if (fatal !== undefined) throw new Error(fatal);
}

/** Polls `check` until truthy or the deadline; returns false on timeout rather than throwing (but throws `fatal`). */
async function until(check: () => boolean | Promise<boolean>, timeoutMs: number, intervalMs = 20): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    checkFatal();
    try {
      if (await check()) return true;
    } catch {
      /* try again until the deadline */
    }
    if (Date.now() >= deadline) return false;
    await sleep(intervalMs);
  }
}

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

/** A free port whose next port is free too (etcd's peer port is client + 1). */
async function etcdPort(avoid: number[]): Promise<number> {
  for (;;) {
    const p = await freePort();
    if (avoid.includes(p) || avoid.includes(p + 1)) continue;
    const ok = await new Promise<boolean>((resolve) => {
      const s = createServer();
      s.once('error', () => resolve(false));
      s.listen(p + 1, '127.0.0.1', () => s.close(() => resolve(true)));
    });
    if (ok) return p;
  }
}

// ---- Figures ---------------------------------------------------------------------------------

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return sorted[Math.max(0, i)]!;
}

const round1 = (n: number) => (Number.isFinite(n) ? Math.round(n * 10) / 10 : null);
const round2 = (n: number) => (Number.isFinite(n) ? Math.round(n * 100) / 100 : null);

function stats(values: number[]) {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    count: sorted.length,
    p50Ms: round1(percentile(sorted, 50)),
    p90Ms: round1(percentile(sorted, 90)),
    p99Ms: round1(percentile(sorted, 99)),
    maxMs: round1(sorted.at(-1) ?? NaN),
  };
}

const p50 = (values: number[]) =>
  percentile(
    [...values].sort((a, b) => a - b),
    50,
  );
const p99 = (values: number[]) =>
  percentile(
    [...values].sort((a, b) => a - b),
    99,
  );

// ---- Addresses ---------------------------------------------------------------------------------

function cidrRange(cidr: string): [number, number] | undefined {
  const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)\/(\d+)$/.exec(cidr.trim());
  if (!m) return undefined;
  const ip = m
    .slice(1, 5)
    .map(Number)
    .reduce((n, o) => n * 256 + o, 0);
  const size = 2 ** (32 - Number(m[5]));
  const start = ip - (ip % size);
  return [start, start + size - 1];
}

/** IPv4 ranges already in use: every Docker network's subnets and the host's routes. */
async function takenRanges(): Promise<[number, number][]> {
  const ranges: [number, number][] = [];
  for (const n of await docker.listNetworks()) {
    for (const c of n.IPAM?.Config ?? []) {
      const r = c.Subnet ? cidrRange(c.Subnet) : undefined;
      if (r) ranges.push(r);
    }
  }
  try {
    // /proc/net/route: destination and mask as little-endian hex.
    for (const line of readFileSync('/proc/net/route', 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 8) continue;
      const le = (hex: string) => Buffer.from(hex, 'hex').readUInt32LE(0);
      const dest = le(f[1]!),
        mask = le(f[7]!);
      if (mask === 0) continue; // the default route overlaps everything
      const size = 2 ** 32 - mask;
      ranges.push([dest, dest + size - 1]);
    }
  } catch {
    /* no /proc: Docker's view is enough */
  }
  return ranges;
}

/** A 10.X.0.0/16 that no Docker network or route overlaps (10.244/16, the default, is left to tests). */
async function freeClusterCIDR(): Promise<string> {
  const taken = await takenRanges();
  const candidates = Array.from({ length: 140 }, (_, i) => 100 + i).filter((x) => x !== 244);
  for (let i = candidates.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [candidates[i], candidates[j]] = [candidates[j]!, candidates[i]!];
  }
  for (const x of candidates) {
    const cidr = `10.${x}.0.0/16`;
    const [a, b] = cidrRange(cidr)!;
    if (!taken.some(([c, d]) => a <= d && c <= b)) return cidr;
  }
  throw new Error('no free 10.X.0.0/16 for the cluster CIDR: every candidate overlaps a Docker network or a route');
}

// ---- Processes -----------------------------------------------------------------------------------

interface Proc {
  child: ChildProcess;
  output(): string;
}

function launch(args: string[], env: NodeJS.ProcessEnv, nodeArgs: string[]): Proc {
  const child = spawn(process.execPath, [...nodeArgs, binary, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (d: Buffer) => {
    output += d.toString('utf8');
    // Keep the tail only: a long run logs a line per pod.
    if (output.length > 200_000) output = output.slice(-100_000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  return { child, output: () => output };
}

const exited = (c: ChildProcess) => c.exitCode !== null || c.signalCode !== null;

/** SIGTERM, then SIGKILL after the deadline; resolves once the process has exited. */
async function stopProcess(c: ChildProcess | undefined, graceMs: number): Promise<'none' | 'term' | 'kill'> {
  if (!c || exited(c)) return 'none';
  const done = new Promise<void>((resolve) => c.once('exit', () => resolve()));
  c.kill('SIGTERM');
  let how: 'term' | 'kill' = 'term';
  const timer = setTimeout(() => {
    how = 'kill';
    c.kill('SIGKILL');
  }, graceMs);
  await Promise.race([done, sleep(graceMs + 5000)]);
  clearTimeout(timer);
  return how;
}

function rssKiB(pid: number | undefined, field = 'VmRSS'): number | undefined {
  if (!pid) return undefined;
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

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

/** Busy CPU seconds of the whole machine (all but idle and iowait), from /proc/stat. */
function machineBusySeconds(): number | undefined {
  try {
    const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    return (f.reduce((a, b) => a + b, 0) - f[3]! - (f[4] ?? 0)) / 100;
  } catch {
    return undefined;
  }
}

function pidFromFile(path: string): number | undefined {
  try {
    return Number(readFileSync(path, 'utf8').trim()) || undefined;
  } catch {
    return undefined;
  }
}

/** Where the CPU went during a phase: the worker, the master, Docker's daemons, the whole machine. */
function cpuMeter(pids: { worker?: number; master?: number }) {
  const dockerd = pidFromFile('/var/run/docker.pid');
  const containerd = pidFromFile('/run/docker/containerd/containerd.pid') ?? pidFromFile('/run/containerd/containerd.pid');
  const sample = () => ({
    wall: performance.now(),
    worker: cpuSeconds(pids.worker),
    master: cpuSeconds(pids.master),
    dockerd: cpuSeconds(dockerd),
    containerd: cpuSeconds(containerd),
    machine: machineBusySeconds(),
  });
  const before = sample();
  return () => {
    const after = sample();
    const d = (k: 'worker' | 'master' | 'dockerd' | 'containerd' | 'machine') =>
      before[k] !== undefined && after[k] !== undefined ? round2(after[k]! - before[k]!) : null;
    return {
      wallS: round2((after.wall - before.wall) / 1000),
      cores: cpus().length,
      workerS: d('worker'),
      masterS: d('master'),
      dockerdS: d('dockerd'),
      containerdS: d('containerd'),
      machineBusyS: d('machine'),
    };
  };
}

const mib = (kib: number | undefined) => (kib === undefined ? null : Math.round((kib / 1024) * 10) / 10);

// ---- State for cleanup --------------------------------------------------------------------------

const made = {
  dirs: [] as string[],
  master: undefined as Proc | undefined,
  masterDataDir: undefined as string | undefined,
  worker: undefined as Proc | undefined,
  client: undefined as ApiClient | undefined,
  watchAbort: new AbortController(),
  registryPort: undefined as number | undefined,
  preexistingTags: new Set<string>(),
};

// ---- Pods ---------------------------------------------------------------------------------------

function appContainer(image: string): Container {
  return {
    name: 'app',
    image,
    command: ['sleep', '3600'],
    resources: { requests: { cpu: '10m', memory: '16Mi' } },
  } as Container;
}

function podObject(name: string, phase: string, nodeName: string): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NAMESPACE, labels: { app: 'pod-startup-bench', [RUN_LABEL]: RUN, phase } },
    spec: {
      nodeName,
      // The app is not PID 1 (it shares the pause container's PID namespace), so SIGTERM ends it at once.
      terminationGracePeriodSeconds: 2,
      containers: [appContainer(APP_IMAGE)],
    },
  } as unknown as Pod;
}

const isRunning = (pod: Pod) =>
  pod.status?.phase === 'Running' && (pod.status.containerStatuses ?? []).length > 0 && (pod.status.containerStatuses ?? []).every((c) => c.state?.running);

/** One watch on this run's pods: when each was first seen Running (performance.now()), from the moment it opens. */
class RunningWatch {
  readonly running = new Map<string, { at: number; pod: Pod }>();
  readonly seen = new Set<string>();
  #rv: string | undefined;
  #done: Promise<void> | undefined;
  errors = 0;

  constructor(
    private readonly client: ApiClient,
    private readonly signal: AbortSignal,
  ) {}

  async open(): Promise<void> {
    const list = await this.client.list(podKind, { namespace: NAMESPACE, labelSelector: `${RUN_LABEL}=${RUN}` });
    this.#rv = list.metadata.resourceVersion;
    this.#done = this.#loop();
  }

  async #loop(): Promise<void> {
    while (!this.signal.aborted) {
      try {
        for await (const event of this.client.watch(podKind, {
          namespace: NAMESPACE,
          labelSelector: `${RUN_LABEL}=${RUN}`,
          resourceVersion: this.#rv,
          signal: this.signal,
        })) {
          const at = performance.now();
          const pod = event.object as Pod;
          if (pod.metadata?.resourceVersion) this.#rv = pod.metadata.resourceVersion;
          if (event.type === 'BOOKMARK') continue;
          const name = pod.metadata.name!;
          this.seen.add(name);
          if (event.type !== 'DELETED' && !this.running.has(name) && isRunning(pod)) this.running.set(name, { at, pod });
        }
      } catch (err) {
        if (this.signal.aborted) break;
        this.errors++;
        log(`watch broke (${err instanceof Error ? err.message : String(err)}); reopening`);
        await sleep(200);
      }
    }
  }

  async close(): Promise<void> {
    await this.#done?.catch(() => {});
  }
}

interface Created {
  name: string;
  /** performance.now() just before the create call. */
  t0: number;
  /** Date.now() at the same moment, to set against Docker's startedAt. */
  wall0: number;
  createMs: number;
  error?: string;
}

async function createPod(client: ApiClient, pod: Pod): Promise<Created> {
  const t0 = performance.now();
  const wall0 = Date.now();
  try {
    await client.create(podKind, pod, { namespace: NAMESPACE });
    return { name: pod.metadata.name!, t0, wall0, createMs: performance.now() - t0 };
  } catch (err) {
    return { name: pod.metadata.name!, t0, wall0, createMs: performance.now() - t0, error: err instanceof Error ? err.message : String(err) };
  }
}

/** Runs job(i) for i < n, job i started at i * paceMs (0: all at once), not waiting for earlier ones. */
async function paced<T>(n: number, paceMs: number, job: (i: number) => Promise<T>): Promise<T[]> {
  const start = performance.now();
  return Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const wait = start + i * paceMs - performance.now();
      if (wait > 0) await sleep(wait);
      checkFatal();
      return job(i);
    }),
  );
}

async function deletePods(client: ApiClient, names: string[]): Promise<void> {
  await Promise.all(names.map((name) => client.request('DELETE', kindObjectPath(podKind, name, NAMESPACE)).catch(() => {})));
}

async function podsLeft(client: ApiClient, phase?: string): Promise<number> {
  const selector = `${RUN_LABEL}=${RUN}${phase ? `,phase=${phase}` : ''}`;
  return (await client.list(podKind, { namespace: NAMESPACE, labelSelector: selector })).items.length;
}

/** Latencies of the pods the watch saw Running, and the ones it did not. */
function latencies(created: Created[], watch: RunningWatch) {
  const ms: number[] = [];
  const toAppStarted: number[] = [];
  const appStartedToWatch: number[] = [];
  const missing: string[] = [];
  for (const c of created) {
    const r = watch.running.get(c.name);
    if (!r) {
      missing.push(c.name);
      continue;
    }
    ms.push(r.at - c.t0);
    const started = r.pod.status?.containerStatuses?.[0]?.state?.running?.startedAt;
    if (started) {
      // Docker's start time of the app container (ms precision) splits the time into runtime work and status reporting.
      const startedMs = Date.parse(started) - c.wall0;
      toAppStarted.push(startedMs);
      appStartedToWatch.push(r.at - c.t0 - startedMs);
    }
  }
  return { ms, toAppStarted, appStartedToWatch, missing };
}

// ---- The floor ------------------------------------------------------------------------------------

interface FloorResult {
  /** Per pair of the throughput floor: time from the start of the run until it ran. */
  throughput: number[];
  throughputAllMs?: number;
  throughputCpu?: ReturnType<ReturnType<typeof cpuMeter>>;
  pair: number[];
  serial: number[];
  single: number[];
  steps: { sandboxCreate: number[]; sandboxStart: number[]; appCreate: number[]; appStart: number[] };
  failures: string[];
  network: string;
  images: { pause: string; app: string };
}

async function floorNetwork(clusterCIDR: string): Promise<string> {
  // The kubelet's network creation, with the same options, on the last /24 of the cluster range.
  const [a, b] = clusterCIDR.split('.');
  const config = podNetworkConfig(`${a}.${b}.255.0/24`);
  await docker.createNetwork({
    Name: FLOOR_BRIDGE,
    Driver: 'bridge',
    CheckDuplicate: true,
    IPAM: { Driver: 'default', Config: [{ Subnet: config.subnet, Gateway: config.gateway }] },
    Options: { 'com.docker.network.bridge.name': FLOOR_BRIDGE },
    Labels: { [LABELS.managed]: 'true', [LABELS.node]: FLOOR_NODE },
  });
  return FLOOR_BRIDGE;
}

async function runFloor(clusterCIDR: string, images: { pause: string; app: string }): Promise<FloorResult> {
  const network = await floorNetwork(clusterCIDR);
  const imageConfig = ((await docker.getImage(images.app).inspect()).Config ?? {}) as { Entrypoint?: string[] | null; Cmd?: string[] | null };
  const result: FloorResult = {
    throughput: [],
    pair: [],
    serial: [],
    single: [],
    steps: { sandboxCreate: [], sandboxStart: [], appCreate: [], appStart: [] },
    failures: [],
    network,
    images,
  };
  const floorPod = (name: string): Pod => {
    const pod = podObject(name, 'floor', FLOOR_NODE);
    pod.metadata.uid = randomUUID();
    pod.spec.containers = [appContainer(images.app)];
    return pod;
  };
  const check = async (ids: string[]) => {
    for (const id of ids) {
      const state = (await docker.getContainer(id).inspect()).State;
      if (!state.Running) throw new Error(`container ${id.slice(0, 12)} is ${state.Status} after start`);
    }
  };

  // Warm-up of this path (first create on a new network, JIT) before measuring.
  {
    const pod = floorPod(`floor-warm-${RUN}`);
    const sb = await docker.createContainer(sandboxCreateOptions({ pod, nodeName: FLOOR_NODE, image: images.pause, network }) as Docker.ContainerCreateOptions);
    await sb.start();
    const app = await docker.createContainer(
      appContainerCreateOptions({
        pod,
        container: pod.spec.containers[0]!,
        attempt: 0,
        nodeName: FLOOR_NODE,
        sandboxID: sb.id,
        image: images.app,
        imageConfig,
        volumes: [],
      }) as Docker.ContainerCreateOptions,
    );
    await app.start();
  }

  log(`floor: ${FLOOR_ITERATIONS} pause+app pairs, one every ${PACE_MS} ms`);
  await paced(FLOOR_ITERATIONS, PACE_MS, async (i) => {
    const pod = floorPod(`floor-pair-${i}-${RUN}`);
    try {
      const t0 = performance.now();
      const sb = await docker.createContainer(
        sandboxCreateOptions({ pod, nodeName: FLOOR_NODE, image: images.pause, network }) as Docker.ContainerCreateOptions,
      );
      const t1 = performance.now();
      await sb.start();
      const t2 = performance.now();
      const app = await docker.createContainer(
        appContainerCreateOptions({
          pod,
          container: pod.spec.containers[0]!,
          attempt: 0,
          nodeName: FLOOR_NODE,
          sandboxID: sb.id,
          image: images.app,
          imageConfig,
          volumes: [],
        }) as Docker.ContainerCreateOptions,
      );
      const t3 = performance.now();
      await app.start();
      const t4 = performance.now();
      await check([sb.id, app.id]);
      result.pair.push(t4 - t0);
      result.steps.sandboxCreate.push(t1 - t0);
      result.steps.sandboxStart.push(t2 - t1);
      result.steps.appCreate.push(t3 - t2);
      result.steps.appStart.push(t4 - t3);
    } catch (err) {
      result.failures.push(`pair ${i}: ${err instanceof Error ? err.message : String(err)}`);
    }
  });

  // The same pairs one at a time: what one pod costs Docker on this machine with nothing else going on.
  log(`floor: ${SERIAL_FLOOR_ITERATIONS} pause+app pairs one after another`);
  for (let i = 0; i < SERIAL_FLOOR_ITERATIONS; i++) {
    checkFatal();
    const pod = floorPod(`floor-serial-${i}-${RUN}`);
    try {
      const t0 = performance.now();
      const sb = await docker.createContainer(
        sandboxCreateOptions({ pod, nodeName: FLOOR_NODE, image: images.pause, network }) as Docker.ContainerCreateOptions,
      );
      await sb.start();
      const app = await docker.createContainer(
        appContainerCreateOptions({
          pod,
          container: pod.spec.containers[0]!,
          attempt: 0,
          nodeName: FLOOR_NODE,
          sandboxID: sb.id,
          image: images.app,
          imageConfig,
          volumes: [],
        }) as Docker.ContainerCreateOptions,
      );
      await app.start();
      result.serial.push(performance.now() - t0);
      await check([sb.id, app.id]);
    } catch (err) {
      result.failures.push(`serial ${i}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  log(`floor: ${FLOOR_ITERATIONS} single containers, one every ${PACE_MS} ms`);
  await paced(FLOOR_ITERATIONS, PACE_MS, async (i) => {
    const pod = floorPod(`floor-single-${i}-${RUN}`);
    // The app container's body, on the network itself instead of joining a sandbox.
    const body: DockerCreateOptions = appContainerCreateOptions({
      pod,
      container: pod.spec.containers[0]!,
      attempt: 0,
      nodeName: FLOOR_NODE,
      sandboxID: 'none',
      image: images.app,
      imageConfig,
      volumes: [],
    });
    body.HostConfig.NetworkMode = network;
    delete body.HostConfig.IpcMode;
    delete body.HostConfig.PidMode;
    try {
      const t0 = performance.now();
      const c = await docker.createContainer(body as Docker.ContainerCreateOptions);
      await c.start();
      const t1 = performance.now();
      await check([c.id]);
      result.single.push(t1 - t0);
    } catch (err) {
      result.failures.push(`single ${i}: ${err instanceof Error ? err.message : String(err)}`);
    }
  });
  await removeLabelled(FLOOR_NODE);

  if (THROUGHPUT_FLOOR) {
    // THROUGHPUT_PODS pairs at once through FLOOR_CONCURRENCY workers (the kubelet syncs with 8):
    // how fast raw Docker starts the throughput run's pods on this machine.
    log(`floor: ${THROUGHPUT_PODS} pause+app pairs at once, ${FLOOR_CONCURRENCY} at a time`);
    let next = 0;
    const meter = cpuMeter({});
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: FLOOR_CONCURRENCY }, async () => {
        for (;;) {
          const i = next++;
          if (i >= THROUGHPUT_PODS || fatal !== undefined) return;
          const pod = floorPod(`floor-tp-${i}-${RUN}`);
          try {
            const sb = await docker.createContainer(
              sandboxCreateOptions({ pod, nodeName: FLOOR_NODE, image: images.pause, network }) as Docker.ContainerCreateOptions,
            );
            await sb.start();
            const app = await docker.createContainer(
              appContainerCreateOptions({
                pod,
                container: pod.spec.containers[0]!,
                attempt: 0,
                nodeName: FLOOR_NODE,
                sandboxID: sb.id,
                image: images.app,
                imageConfig,
                volumes: [],
              }) as Docker.ContainerCreateOptions,
            );
            await app.start();
            result.throughput.push(performance.now() - t0);
          } catch (err) {
            result.failures.push(`throughput ${i}: ${err instanceof Error ? err.message : String(err)}`);
          }
        }
      }),
    );
    result.throughputAllMs = performance.now() - t0;
    result.throughputCpu = meter();
    await removeLabelled(FLOOR_NODE);
  }
  return result;
}

// ---- Cleanup -------------------------------------------------------------------------------------

async function removeLabelled(node: string): Promise<number> {
  const list = await docker.listContainers({ all: true, filters: { label: [`${LABELS.node}=${node}`] } }).catch(() => []);
  // A few at a time: hundreds of parallel removes only queue up in the engine.
  let i = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (i < list.length) {
        const c = list[i++]!;
        await docker
          .getContainer(c.Id)
          .remove({ force: true, v: true })
          .catch(() => {});
      }
    }),
  );
  return list.length;
}

async function removeNetwork(name: string): Promise<void> {
  try {
    const net = (await docker.getNetwork(name).inspect()) as { Labels?: Record<string, string> };
    // Only ours: made for this run's node names.
    const owner = net.Labels?.[LABELS.node];
    if (owner !== NODE_NAME && owner !== FLOOR_NODE) return;
    await docker.getNetwork(name).remove();
  } catch {
    /* not there */
  }
}

/** A process the master started (etcd, registry) that outlived it: killed when its command line names our data dir. */
function killLeftover(pidFile: string, dataDir: string): void {
  try {
    const pid = Number(readFileSync(pidFile, 'utf8').trim());
    if (!pid) return;
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    if (!cmdline.includes(dataDir)) return;
    process.kill(pid, 'SIGKILL');
    log(`killed leftover ${pidFile} process ${pid}`);
  } catch {
    /* gone */
  }
}

let cleaning: Promise<void> | undefined;

function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    log('cleanup');
    fatal ??= 'cleaning up';
    made.watchAbort.abort();
    const { client } = made;
    if (client && made.worker && !exited(made.worker.child)) {
      // Let the kubelet stop what it runs (bounded), then remove whatever is left by label.
      try {
        const names = (await client.list(podKind, { namespace: NAMESPACE, labelSelector: `${RUN_LABEL}=${RUN}` })).items.map((p) => p.metadata.name!);
        await deletePods(client, names);
        await until(async () => (await podsLeft(client)) === 0, 30_000, 250);
      } catch {
        /* the master may be gone */
      }
    }
    const workerStop = await stopProcess(made.worker?.child, 15_000);
    if (workerStop === 'kill') log('worker did not exit on SIGTERM within 15 s: killed');
    client?.close();
    const removed = (await removeLabelled(NODE_NAME)) + (await removeLabelled(FLOOR_NODE));
    if (removed) log(`removed ${removed} leftover containers`);
    await removeNetwork(BRIDGE);
    await removeNetwork(FLOOR_BRIDGE);
    const masterStop = await stopProcess(made.master?.child, 15_000);
    if (masterStop === 'kill') log('master did not exit on SIGTERM within 15 s: killed');
    if (made.masterDataDir) {
      await sleep(100);
      killLeftover(join(made.masterDataDir, 'etcd.pid'), made.masterDataDir);
      killLeftover(join(made.masterDataDir, 'registry.pid'), made.masterDataDir);
    }
    // Image tags pulled from this run's registry (the same images as the base ones, under another host:port).
    if (made.registryPort) {
      const prefix = `127.0.0.1:${made.registryPort}/`;
      for (const image of await docker.listImages().catch(() => [])) {
        for (const tag of image.RepoTags ?? []) {
          if (tag.startsWith(prefix) && !made.preexistingTags.has(tag))
            await docker
              .getImage(tag)
              .remove({ noprune: true })
              .catch(() => {});
        }
      }
    }
    for (const dir of made.dirs) rmSync(dir, { recursive: true, force: true });
  })();
  return cleaning;
}

// ---- Master and worker ----------------------------------------------------------------------------

async function startCluster(clusterCIDR: string, errors: string[]) {
  const dataDir = mkdtempSync(join(tmpdir(), 'minik8s-bench-master-'));
  const home = mkdtempSync(join(tmpdir(), 'minik8s-bench-home-'));
  const workerDir = mkdtempSync(join(tmpdir(), 'minik8s-bench-worker-'));
  made.dirs.push(dataDir, home, workerDir);
  made.masterDataDir = dataDir;
  await seedRegistryStore(dataDir, prebuiltRegistryStore());

  const port = await freePort();
  const registryPort = await freePort();
  const kubeletPort = await freePort();
  const etcd = await etcdPort([port, registryPort, kubeletPort]);
  made.registryPort = registryPort;
  for (const image of await docker.listImages()) {
    for (const tag of image.RepoTags ?? []) if (tag.startsWith(`127.0.0.1:${registryPort}/`)) made.preexistingTags.add(tag);
  }
  const server = `http://127.0.0.1:${port}`;
  log(`master: API ${server}, registry :${registryPort}, cluster CIDR ${clusterCIDR}`);
  const master = launch(
    [
      '--role=master',
      // Plain HTTP: this bench measures the API's work, not TLS (bench/tls.ts compares the two).
      '--insecure-http',
      '--data-dir',
      dataDir,
      '--address',
      '127.0.0.1',
      '--port',
      String(port),
      '--etcd-port',
      String(etcd),
      '--registry-port',
      String(registryPort),
      // Every listener on a free port, so the bench runs beside a cluster (whose activator has 8090).
      '--activator-port',
      String(await freePort()),
      '--cluster-cidr',
      clusterCIDR,
    ],
    { ...process.env, HOME: home },
    (process.env.BENCH_MASTER_NODE_ARGS ?? '').split(' ').filter(Boolean),
  );
  made.master = master;
  const ready = await until(
    async () => {
      if (exited(master.child)) throw new Error('exited');
      if (!master.output().includes('master ready')) return false;
      return (await fetch(`${server}/readyz`)).status === 200;
    },
    60_000,
    100,
  );
  if (!ready) throw new Error(`master not ready in 60 s:\n${master.output().slice(-3000)}`);
  const adminToken = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
  const client = new ApiClient({ server, token: adminToken, timeoutMs: 30_000 });
  made.client = client;

  const joinTokenFile = join(dataDir, 'join-token');
  if (!(await until(() => existsSync(joinTokenFile) && readFileSync(joinTokenFile, 'utf8').trim() !== '', 15_000, 100))) {
    errors.push(`the master wrote no ${joinTokenFile} within 15 s: no worker can join`);
    return { client, server, worker: undefined, registryPort };
  }
  const joinToken = readFileSync(joinTokenFile, 'utf8').trim();

  log(`worker: node ${NODE_NAME}, bridge ${BRIDGE}`);
  const worker = launch(
    [
      '--role=worker',
      '--server',
      server,
      '--token',
      joinToken,
      '--name',
      NODE_NAME,
      '--node-ip',
      '127.0.0.1',
      '--data-dir',
      workerDir,
      '--kubelet-address',
      '127.0.0.1',
      '--kubelet-port',
      String(kubeletPort),
      '--bridge',
      BRIDGE,
      // One node on the host's network namespace: no overlay or service rules to set up there (and nothing of them left behind).
      '--overlay=none',
      '--proxy=none',
    ],
    { ...process.env, HOME: home },
    (process.env.BENCH_WORKER_NODE_ARGS ?? '').split(' ').filter(Boolean),
  );
  made.worker = worker;
  worker.child.once('exit', (code, signal) => {
    fatal ??= `the worker exited (${code ?? signal}) during the run: ${worker.output().slice(-2000).trim()}`;
  });
  const joined = await until(
    async () => {
      if (exited(worker.child)) throw new Error('exited');
      if (!worker.output().includes('syncing pods')) return false;
      await client.get(nodeKind, { name: NODE_NAME });
      return true;
    },
    60_000,
    100,
  );
  if (!joined) {
    errors.push(
      `worker did not join and start its kubelet within 60 s${exited(worker.child) ? ` (exited ${worker.child.exitCode ?? worker.child.signalCode})` : ''}: ${worker.output().slice(-2000).trim()}`,
    );
    return { client, server, worker: undefined, registryPort };
  }
  return { client, server, worker, registryPort };
}

// ---- Main ---------------------------------------------------------------------------------------

async function main(): Promise<number> {
  const errors: string[] = [];
  const dockerVersion = (await docker.version()).Version;
  const clusterCIDR = await freeClusterCIDR();
  const result: Record<string, unknown> = {
    benchmark: 'pod-startup',
    machine: { cpus: cpus().length, node: process.version, docker: dockerVersion },
    config: {
      pods: PODS,
      throughputPods: THROUGHPUT_PODS,
      floorIterations: FLOOR_ITERATIONS,
      latencyMode:
        PACE_MS > 0
          ? `paced: one pod created every ${PACE_MS} ms (${round1(1000 / PACE_MS)} pods/s), not waiting for earlier pods; the floor starts at the same pace`
          : 'all at once (the floor too)',
      measured: 'create call -> first watch event with phase Running and the container running (clusterloader2 pod startup latency)',
      pod: 'pause + busybox:1.35 `sleep 3600`, requests cpu 10m memory 16Mi, spec.nodeName set (no scheduler)',
      clusterCIDR,
    },
  };

  let images = { pause: `${BASE_REGISTRY}/${PAUSE_IMAGE}`, app: `${BASE_REGISTRY}/${APP_IMAGE}` };
  let floor: FloorResult | undefined;
  let startup: ReturnType<typeof latencies> | undefined;
  let throughput: Record<string, unknown> | undefined;
  const memory: Record<string, number | null> = {};

  if (!FLOOR_ONLY) {
    const cluster = await startCluster(clusterCIDR, errors);
    const { client, worker } = cluster;
    if (worker) {
      const pid = worker.child.pid;
      memory.workerIdleRssMiB = mib(rssKiB(pid));
      const watch = new RunningWatch(client, made.watchAbort.signal);
      await watch.open();

      // Warm-up: the first pod pulls both images from the master's registry.
      log('warm-up pod');
      const warm = await createPod(client, podObject(`warm-${RUN}`, 'warmup', NODE_NAME));
      if (warm.error) throw new Error(`creating the warm-up pod failed: ${warm.error}`);
      if (!(await until(() => watch.running.has(warm.name), 180_000, 50))) {
        throw new Error(`the warm-up pod was not Running within 180 s; worker log:\n${worker.output().slice(-3000)}`);
      }
      result.warmup = { runningMs: round1(watch.running.get(warm.name)!.at - warm.t0) };
      // The kubelet's image names: unqualified ones come from the master's registry.
      images = {
        pause: resolveImageName(PAUSE_IMAGE, `127.0.0.1:${cluster.registryPort}`),
        app: resolveImageName(APP_IMAGE, `127.0.0.1:${cluster.registryPort}`),
      };
      await deletePods(client, [warm.name]);
      if (!(await until(async () => (await podsLeft(client)) === 0, 60_000, 100))) errors.push('the warm-up pod was not gone within 60 s');
      memory.workerAfterWarmupRssMiB = mib(rssKiB(pid));

      floor = await runFloor(clusterCIDR, images);

      // Startup latency.
      log(`startup latency: ${PODS} pods, one every ${PACE_MS} ms`);
      const latencyCpu = cpuMeter({ worker: pid, master: made.master?.child.pid });
      const created = await paced(PODS, PACE_MS, (i) => createPod(client, podObject(`lat-${i}-${RUN}`, 'latency', NODE_NAME)));
      for (const c of created) if (c.error) errors.push(`create ${c.name}: ${c.error}`);
      const ok = await until(() => created.every((c) => c.error || watch.running.has(c.name)), 60_000, 20);
      if (!ok) errors.push(`startup: ${created.filter((c) => !watch.running.has(c.name)).length} of ${PODS} pods not Running within 60 s of the last create`);
      const latencyCpuUsed = latencyCpu();
      startup = latencies(created, watch);
      result.startup = {
        ...stats(startup.ms),
        running: startup.ms.length,
        createCall: stats(created.map((c) => c.createMs)),
        createToAppStarted: stats(startup.toAppStarted),
        appStartedToWatchEvent: stats(startup.appStartedToWatch),
        cpu: latencyCpuUsed,
        note: `p99 of ${startup.ms.length} samples is their maximum but one at most`,
      };
      await sleep(1000);
      memory[`worker${PODS}PodsRssMiB`] = mib(rssKiB(pid));

      log('deleting the latency pods');
      await deletePods(
        client,
        created.map((c) => c.name),
      );
      if (!(await until(async () => (await podsLeft(client)) === 0, 90_000, 250))) errors.push('the latency pods were not all gone within 90 s');
      await until(async () => (await docker.listContainers({ all: true, filters: { label: [`${LABELS.node}=${NODE_NAME}`] } })).length === 0, 30_000, 250);

      // Throughput: all at once.
      log(`throughput: ${THROUGHPUT_PODS} pods at once`);
      const throughputCpu = cpuMeter({ worker: pid, master: made.master?.child.pid });
      const tStart = performance.now();
      const burst = await paced(THROUGHPUT_PODS, 0, (i) => createPod(client, podObject(`tp-${i}-${RUN}`, 'throughput', NODE_NAME)));
      const createdAllMs = performance.now() - tStart;
      for (const c of burst) if (c.error) errors.push(`create ${c.name}: ${c.error}`);
      const deadlineMs = Math.max(120_000, THROUGHPUT_PODS * 1000);
      const allRunning = await until(() => burst.every((c) => c.error || watch.running.has(c.name)), deadlineMs, 20);
      const throughputCpuUsed = throughputCpu();
      const lat = latencies(burst, watch);
      const lastRunning = Math.max(...burst.map((c) => watch.running.get(c.name)?.at ?? NaN).filter(Number.isFinite));
      const allMs = allRunning && lat.missing.length === 0 ? lastRunning - tStart : NaN;
      memory[`worker${THROUGHPUT_PODS}PodsRssMiB`] = mib(rssKiB(pid));
      memory.workerPeakRssMiB = mib(rssKiB(pid, 'VmHWM'));
      memory.masterRssMiB = mib(rssKiB(made.master?.child.pid));
      const within5s = lat.ms.filter((ms) => ms <= CL2_POD_STARTUP_MS).length;
      throughput = {
        pods: THROUGHPUT_PODS,
        mode: 'all created at once (concurrent create calls)',
        running: lat.ms.length,
        createCallsMs: round1(createdAllMs),
        allRunningMs: round1(allMs),
        deadlineMs,
        podsPerSecond: round2(Number.isFinite(allMs) ? (THROUGHPUT_PODS / allMs) * 1000 : NaN),
        startedWithin5s: within5s,
        latency: stats(lat.ms),
        createToAppStarted: stats(lat.toAppStarted),
        appStartedToWatchEvent: stats(lat.appStartedToWatch),
        cpu: throughputCpuUsed,
      };
      if (!allRunning) errors.push(`throughput: ${lat.missing.length} of ${THROUGHPUT_PODS} pods not Running within ${deadlineMs / 1000} s`);

      // Deleting them all (graceful: the kubelet stops the containers, then removes the object).
      log(`deleting the ${THROUGHPUT_PODS} pods`);
      const dStart = performance.now();
      await deletePods(
        client,
        burst.map((c) => c.name),
      );
      const deleteDeadlineMs = 90_000;
      let left = THROUGHPUT_PODS;
      const allGone = await until(
        async () => {
          left = await podsLeft(client);
          return left === 0;
        },
        deleteDeadlineMs,
        250,
      );
      throughput.deleteAll = {
        what: 'graceful delete of all of them at once, until the API has none (the kubelet stopped and removed their containers)',
        goneMs: allGone ? round1(performance.now() - dStart) : null,
        left,
        deadlineMs: deleteDeadlineMs,
      };
      if (watch.errors) errors.push(`the watch broke ${watch.errors} times (reopened from its last resourceVersion)`);
    } else {
      log('no worker: measuring the floor alone');
    }
  }
  floor ??= await runFloor(clusterCIDR, images);

  const floorOut = {
    mode: PACE_MS > 0 ? `started every ${PACE_MS} ms, like the pods` : 'all at once',
    network: `a bridge network made with the kubelet's options (${floor.network})`,
    images: floor.images,
    pair: { ...stats(floor.pair), what: 'pause create+start, then the app container (joining its namespaces) create+start, until both run' },
    pairSteps: Object.fromEntries(Object.entries(floor.steps).map(([k, v]) => [`${k}P50Ms`, round1(p50(v))])),
    pairOneAtATime: { ...stats(floor.serial), what: 'the same pairs one after another, nothing else starting: the uncontended cost of one pod' },
    single: { ...stats(floor.single), what: 'the app container alone, create+start' },
    ...(floor.throughputAllMs !== undefined
      ? {
          throughput: {
            pods: THROUGHPUT_PODS,
            what: `the throughput run's pairs, all queued at once, ${FLOOR_CONCURRENCY} in parallel (the kubelet's sync workers)`,
            allRunningMs: round1(floor.throughputAllMs),
            podsPerSecond: round2((floor.throughput.length / floor.throughputAllMs) * 1000),
            startedWithin5s: floor.throughput.filter((ms) => ms <= CL2_POD_STARTUP_MS).length,
            latency: stats(floor.throughput),
            cpu: floor.throughputCpu,
          },
        }
      : {}),
    failures: floor.failures,
  };
  for (const f of floor.failures) errors.push(`floor ${f}`);
  result.floor = floorOut;

  if (startup) {
    const pairP50 = p50(floor.pair);
    result.ratio = {
      p50VsPairFloor: round2(p50(startup.ms) / pairP50),
      p99VsPairFloor: round2(p99(startup.ms) / p99(floor.pair)),
      p50VsSingleFloor: round2(p50(startup.ms) / p50(floor.single)),
      p50OverPairFloorMs: round1(p50(startup.ms) - pairP50),
      p50VsOneAtATimeFloor: round2(p50(startup.ms) / p50(floor.serial)),
      ...(throughput && floor.throughputAllMs !== undefined && typeof throughput.allRunningMs === 'number'
        ? { throughputTimeVsFloor: round2(throughput.allRunningMs / floor.throughputAllMs) }
        : {}),
    };
  }
  if (throughput) result.throughput = throughput;
  if (Object.keys(memory).length) result.memory = { ...memory, source: 'VmRSS (VmHWM for peak) from /proc/PID/status of the worker process' };

  if (startup && throughput) {
    const sP99 = p99(startup.ms);
    const ratio = p50(startup.ms) / p50(floor.pair);
    const allMs = throughput.allRunningMs as number | null;
    const tpPods = throughput.pods as number;
    const complete = startup.missing.length === 0;
    result.targets = {
      startupP99: { want: `< ${STARTUP_P99_TARGET_MS} ms`, valueMs: round1(sP99), ok: complete && sP99 < STARTUP_P99_TARGET_MS },
      p50VsFloor: { want: `<= ${P50_VS_FLOOR_TARGET}x the pause+app floor p50`, value: round2(ratio), ok: complete && ratio <= P50_VS_FLOOR_TARGET },
      throughputAllRunning: {
        want: `${tpPods} pods all Running within ${THROUGHPUT_TARGET_MS / 1000} s`,
        valueMs: allMs,
        ok: allMs !== null && allMs <= THROUGHPUT_TARGET_MS,
      },
      clusterloader2: {
        want: `${tpPods} pods on one node at >= ${CL2_PODS_PER_SECOND} pods/s, each Running within ${CL2_POD_STARTUP_MS / 1000} s (ours are created all at once, which is harder)`,
        podsPerSecond: throughput.podsPerSecond,
        startedWithin5s: `${throughput.startedWithin5s}/${tpPods}`,
        ok: allMs !== null && (throughput.podsPerSecond as number) >= CL2_PODS_PER_SECOND && throughput.startedWithin5s === tpPods,
      },
    };
  }
  if (result.targets) {
    const t = result.targets as Record<string, { ok: boolean }>;
    result.targetsMet = Object.values(t).every((x) => x.ok);
  }
  result.errors = errors;
  result.complete = startup !== undefined && throughput !== undefined;
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  return result.complete && errors.length === 0 ? 0 : 1;
}

/** Set by SIGINT/SIGTERM: their handler cleans up and exits, not main's. */
let interrupted = false;

for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    log(`${sig}: cleaning up`);
    interrupted = true;
    fatal ??= `interrupted by ${sig}`;
    void (async () => {
      await cleanup().catch(() => {});
      // A Docker call in flight when the signal came may have made a container since: sweep again.
      await sleep(1000);
      await removeLabelled(NODE_NAME);
      await removeLabelled(FLOOR_NODE);
      await removeNetwork(BRIDGE);
      await removeNetwork(FLOOR_BRIDGE);
      process.exit(130);
    })();
  });
}

main().then(
  async (code) => {
    await cleanup();
    if (!interrupted) process.exit(code);
  },
  async (err: unknown) => {
    if (interrupted) return;
    process.stderr.write(`bench failed: ${err instanceof Error ? err.message : String(err)}\n`);
    await cleanup().catch(() => {});
    process.exit(1);
  },
);
