// Benchmark of functions through the activator on one machine (a real master and worker on the host's Docker): cold start against `docker run` of the same image, warm overhead against calling the pod directly, requests/s at 50 concurrency, and a load step's time to new pods serving; prints one JSON object (progress goes to stderr).
//
// Phases, in one run:
// - floor: BENCH_RUNS times, the function's image started with raw Docker calls (create + start,
//   as `docker run -d` does) until its /healthz answers (polled every 10 ms, as the activator
//   probes) and then a real call answers;
// - cold: BENCH_RUNS times, the function taken to zero pods by a hard update that changes only an
//   environment variable (a new version on the same image, so nothing is built or pulled), then one
//   call through the activator timed to its answer (which must say it was a cold start); each
//   run's breakdown comes from the pod's and the record's timestamps: the pod created, bound,
//   its podIP reported, Ready;
// - warm: BENCH_WARM calls one after the other through the activator and straight to the pod
//   (the same keep-alive HTTP client, alternating), p50/p99 and the activator's overhead;
// - step: from one warm pod, BENCH_CONCURRENCY clients at once with calls that take 100 ms
//   (so the pods' concurrency target is crossed), until each new pod has answered a call: the
//   time from the step to each new pod's first answer (the handler says its host name, the pod's);
// - throughput: BENCH_CONCURRENCY clients for BENCH_LOAD_S seconds of calls that return at once.
// BENCH_TRACE=1 logs when each cold call is sent (to line up with `docker events`).
// Errors are counted in every phase. Targets (issue 7): cold p50 under 1 s and at most 2x the
// floor, warm overhead p50 under 2 ms, no errors during the scale-out. Exits 1 only when the run
// itself fails, not for a missed target.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Docker from 'dockerode';
import type { FunctionObject } from '../src/core/api/function.js';
import type { Pod } from '../src/core/api/pod.js';
import { waitFor } from '../src/core/wait-for.js';
import { BINARY, startMaster, type MasterProcess } from '../test/helpers/master.js';
import { startWorker, type WorkerProcess } from '../test/helpers/worker.js';

function sizeOf(env: string, fallback: number, min = 1): number {
  const text = process.env[env];
  const n = text === undefined ? fallback : Number(text);
  if (!Number.isInteger(n) || n < min) {
    process.stderr.write(`bench failed: ${env} must be a whole number of at least ${min}, not "${text}"\n`);
    process.exit(2);
  }
  return n;
}

const RUNS = sizeOf('BENCH_RUNS', 20);
const WARM = sizeOf('BENCH_WARM', 500);
const CONCURRENCY = sizeOf('BENCH_CONCURRENCY', 50);
const LOAD_S = sizeOf('BENCH_LOAD_S', 10);
const TARGET = 10;
const FN = 'bench';
const HANDLER = [
  'import socket, time',
  'def handler(event, context):',
  '    if isinstance(event, dict) and event.get("sleep"):',
  '        time.sleep(event["sleep"])',
  '    return {"pod": socket.gethostname()}',
  '',
].join('\n');

const docker = new Docker();
const startedAt = performance.now();
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const round2 = (n: number) => Math.round(n * 100) / 100;
const log = (message: string) => process.stderr.write(`[serverless ${((performance.now() - startedAt) / 1000).toFixed(1)}s] ${message}\n`);

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}
const stats = (ms: number[]) => ({ n: ms.length, p50Ms: round2(quantile(ms, 0.5)), p99Ms: round2(quantile(ms, 0.99)), maxMs: round2(Math.max(...ms)) });

// ---- HTTP ----------------------------------------------------------------------------------------

const agent = new Agent({ keepAlive: true, maxSockets: 256 });

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function call(url: string, body: unknown, timeoutMs = 120_000): Promise<Answer> {
  const data = Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': data.length }, timeout: timeoutMs },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer from ${url} in ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(data);
  });
}

/** GET URL until it answers 200 (a fresh connection each time: the server is not up yet), every 10 ms. */
async function pollHealthz(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const okay = await new Promise<boolean>((resolve) => {
      const req = request(url, { timeout: 1000 }, (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      });
      req.on('timeout', () => req.destroy());
      req.on('error', () => resolve(false));
      req.end();
    });
    if (okay) return;
    if (Date.now() > deadline) throw new Error(`${url} did not answer in ${timeoutMs} ms`);
    await sleep(10);
  }
}

// ---- The cluster ---------------------------------------------------------------------------------

let master: MasterProcess | undefined;
let worker: WorkerProcess | undefined;
const dir = mkdtempSync(join(tmpdir(), 'minik8s-bench-srv-'));

const cli = (...args: string[]) =>
  new Promise<string>((resolve, reject) => {
    execFile(process.execPath, [BINARY, ...args], { env: master!.env, encoding: 'utf8', timeout: 600_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`minik8s ${args.join(' ')}: ${stderr.trim() || err.message}`));
      else resolve(stdout);
    });
  });

async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${master!.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${master!.token}`, 'content-type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json()) as { message?: string } | null;
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${json?.message}`);
  return json as T;
}

const podsOf = async () => (await api<{ items: Pod[] }>('GET', `/api/v1/namespaces/default/pods?labelSelector=minik8s.io/function=${FN}`)).items;
const isReady = (p: Pod) => Boolean(p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));

// ---- Phases --------------------------------------------------------------------------------------

async function floor(image: string): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    const container = await docker.createContainer({ Image: image, Labels: { 'minik8s.io/bench': 'serverless' }, HostConfig: { AutoRemove: false } });
    try {
      await container.start();
      const ip = Object.values((await container.inspect()).NetworkSettings.Networks)[0]?.IPAddress;
      await pollHealthz(`http://${ip}:8080/healthz`, 30_000);
      const answer = await call(`http://${ip}:8080/`, { floor: i });
      if (answer.status !== 200) throw new Error(`docker run floor: ${answer.status} ${answer.body}`);
      times.push(performance.now() - t0);
    } finally {
      await container.remove({ force: true }).catch(() => {});
    }
  }
  return times;
}

interface ColdRun {
  totalMs: number;
  createdMs?: number;
  boundMs?: number;
  podIPMs?: number;
  readyMs?: number;
}

/** Ends with no pod of the function: a hard update to a new version on the same image. */
async function toZero(run: number): Promise<void> {
  await cli('function', 'update', FN, '--env', `RUN=${run}`, '--hard');
  await waitFor(async () => (await podsOf()).length === 0, { timeoutMs: 120_000, intervalMs: 100, description: `${FN} at zero pods` });
}

async function coldRun(url: string): Promise<ColdRun> {
  // The pod's steps, seen by a watch started before the call (timestamps in the API are whole seconds).
  const seen: { createdMs?: number; boundMs?: number; podIPMs?: number; readyMs?: number } = {};
  const stop = new AbortController();
  const list = await api<{ metadata: { resourceVersion: string } }>('GET', '/api/v1/namespaces/default/pods');
  const t0 = performance.now();
  if (process.env.BENCH_TRACE) log(`cold call sent at ${new Date().toISOString()}`);
  const watching = (async () => {
    const res = await fetch(
      `${master!.url}/api/v1/namespaces/default/pods?watch=true&resourceVersion=${list.metadata.resourceVersion}&labelSelector=minik8s.io/function=${FN}`,
      {
        headers: { authorization: `Bearer ${master!.token}` },
        signal: stop.signal,
      },
    );
    let buffer = '';
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += Buffer.from(chunk).toString();
      for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        if (!line.trim()) continue;
        const pod = (JSON.parse(line) as { object: Pod }).object;
        const at = performance.now() - t0;
        seen.createdMs ??= at;
        if (pod.spec?.nodeName) seen.boundMs ??= at;
        if (pod.status?.podIP) seen.podIPMs ??= at;
        if (isReady(pod)) seen.readyMs ??= at;
      }
    }
  })().catch(() => {});
  const answer = await call(url, { cold: true });
  const totalMs = performance.now() - t0;
  if (answer.status !== 200) throw new Error(`cold call: ${answer.status} ${answer.body}`);
  if (answer.headers['x-minik8s-cold-start'] !== 'true') throw new Error('the cold call was not a cold start');
  // Ready comes from the kubelet's probe, after the activator's own: give it a moment to show.
  await waitFor(() => seen.readyMs !== undefined, { timeoutMs: 10_000, intervalMs: 20, description: 'the pod Ready' }).catch(() => {});
  stop.abort();
  await watching;
  return { totalMs, ...seen };
}

async function warm(activatorUrl: string): Promise<{ activator: number[]; direct: number[] }> {
  const pods = (await podsOf()).filter(isReady);
  if (pods.length === 0) throw new Error('no Ready pod for the warm phase');
  const direct = `http://${pods[0].status.podIP}:8080/`;
  const a: number[] = [];
  const d: number[] = [];
  for (let i = 0; i < 50; i++) {
    await call(activatorUrl, {});
    await call(direct, {});
  }
  for (let i = 0; i < WARM; i++) {
    let t = performance.now();
    const viaActivator = await call(activatorUrl, { i });
    a.push(performance.now() - t);
    t = performance.now();
    const straight = await call(direct, { i });
    d.push(performance.now() - t);
    if (viaActivator.status !== 200 || straight.status !== 200) throw new Error(`warm: ${viaActivator.status}/${straight.status}`);
  }
  return { activator: a, direct: d };
}

/** CONCURRENCY clients calling URL until `until` says stop; per answer `onAnswer`; counts errors. */
async function drive(url: string, body: unknown, until: () => boolean, onAnswer?: (a: Answer, at: number) => void) {
  let ok = 0;
  const errors: string[] = [];
  const latencies: number[] = [];
  const client = async () => {
    while (!until()) {
      const t = performance.now();
      try {
        const answer = await call(url, body, 90_000);
        if (answer.status === 200) {
          ok += 1;
          latencies.push(performance.now() - t);
          onAnswer?.(answer, performance.now());
        } else errors.push(`${answer.status} ${answer.body.slice(0, 120)}`);
      } catch (err) {
        errors.push(err instanceof Error ? err.message : String(err));
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, client));
  return { ok, errors, latencies };
}

async function main(): Promise<void> {
  log('starting a master and a worker');
  master = await startMaster({ tls: false, seedImages: true });
  worker = await startWorker({ server: master.url, joinToken: master.joinToken });
  const url = `${master.activatorUrl}/function/${FN}`;
  writeFileSync(join(dir, 'handler.py'), HANDLER);
  log('creating (building) the function');
  await cli('function', 'create', FN, '-f', join(dir, 'handler.py'), '--target', String(TARGET), '--max-scale', '10', '--idle-grace', '600');
  const fn = await api<FunctionObject>('GET', `/apis/minik8s.io/v1/namespaces/default/functions/${FN}`);
  // The image as the factory tagged it on this engine (its registry address may be a forwarder's).
  const image = (await docker.listImages()).flatMap((i) => i.RepoTags ?? []).find((t) => t.endsWith(`/functions/default-${FN}:v${fn.status.version}`));
  if (!image) throw new Error(`no image functions/default-${FN}:v${fn.status.version} on this engine`);

  log(`floor: ${RUNS} docker runs of ${image}`);
  await floor(image).catch(() => []); // a first one not counted (the page cache)
  const floorMs = await floor(image);
  log(`floor p50 ${quantile(floorMs, 0.5).toFixed(0)} ms`);

  log(`cold: ${RUNS} cold starts through the activator (one first, not counted: the node pulls the image)`);
  await coldRun(url);
  const cold: ColdRun[] = [];
  for (let i = 0; i < RUNS; i++) {
    await toZero(i);
    cold.push(await coldRun(url));
    log(`cold ${i + 1}: ${cold.at(-1)!.totalMs.toFixed(0)} ms`);
  }

  log(`warm: ${WARM} calls each way`);
  const w = await warm(url);

  // Back to exactly one pod, so the step starts from one.
  await toZero(RUNS);
  await coldRun(url);
  log(`step: 1 -> ${CONCURRENCY} clients of 100 ms calls`);
  const firstAnswer = new Map<string, number>();
  const stepStart = performance.now();
  const basePod = (await podsOf()).filter(isReady).map((p) => p.metadata.name as string);
  const expected = Math.min(10, Math.ceil(CONCURRENCY / TARGET));
  const stepDeadline = stepStart + 120_000;
  let stableSince = 0;
  const step = await drive(
    url,
    { sleep: 0.1 },
    () => {
      const now = performance.now();
      if (now > stepDeadline) return true;
      // Done when the expected pods all answered and nothing new came for 5 s.
      if (firstAnswer.size >= expected) {
        stableSince ||= now;
        return now - stableSince > 5000;
      }
      return false;
    },
    (a, at) => {
      const pod = (JSON.parse(a.body) as { pod: string }).pod;
      if (!firstAnswer.has(pod)) firstAnswer.set(pod, at - stepStart);
    },
  );
  const newPods = [...firstAnswer.entries()]
    .filter(([pod]) => !basePod.includes(pod))
    .map(([, ms]) => ms)
    .sort((a, b) => a - b);

  log(`throughput: ${CONCURRENCY} clients for ${LOAD_S} s`);
  const loadStart = performance.now();
  const podsAtLoad = (await podsOf()).filter(isReady).length;
  const load = await drive(url, {}, () => performance.now() - loadStart > LOAD_S * 1000);
  const loadS = (performance.now() - loadStart) / 1000;

  const coldTotals = cold.map((c) => c.totalMs);
  const stage = (k: keyof ColdRun) => {
    const v = cold.map((c) => c[k]).filter((x): x is number => x !== undefined);
    return v.length ? round2(quantile(v, 0.5)) : null;
  };
  const coldP50 = quantile(coldTotals, 0.5);
  const floorP50 = quantile(floorMs, 0.5);
  const warmA = stats(w.activator);
  const warmD = stats(w.direct);
  const result = {
    benchmark: 'serverless',
    setup: { nodes: 1, runs: RUNS, warmCalls: WARM, concurrency: CONCURRENCY, target: TARGET, maxScale: 10 },
    coldStart: {
      activator: stats(coldTotals),
      floorDockerRun: stats(floorMs),
      ratioP50: round2(coldP50 / floorP50),
      ratioP99: round2(quantile(coldTotals, 0.99) / quantile(floorMs, 0.99)),
      // When each step was first seen on a watch, from the call sent (p50 over the runs).
      breakdownP50Ms: {
        podCreated: stage('createdMs'),
        podBound: stage('boundMs'),
        podIPReported: stage('podIPMs'),
        answered: round2(coldP50),
        podReadyOnApi: stage('readyMs'),
      },
    },
    warm: {
      activator: warmA,
      direct: warmD,
      overheadP50Ms: round2(warmA.p50Ms - warmD.p50Ms),
      overheadP99Ms: round2(warmA.p99Ms - warmD.p99Ms),
      ratioP50: round2(warmA.p50Ms / warmD.p50Ms),
    },
    loadStep: {
      from: { pods: basePod.length, clients: 0 },
      to: { clients: CONCURRENCY, callMs: 100 },
      podsServing: firstAnswer.size,
      firstNewPodServingS: newPods.length ? round2(newPods[0]! / 1000) : null,
      allNewPodsServingS: newPods.length ? round2(newPods.at(-1)! / 1000) : null,
      calls: step.ok,
      errors: step.errors.length,
      errorSamples: step.errors.slice(0, 5),
    },
    throughput: {
      seconds: round2(loadS),
      podsReadyAtStart: podsAtLoad,
      requests: load.ok,
      requestsPerSecond: Math.round(load.ok / loadS),
      latency: stats(load.latencies),
      errors: load.errors.length,
      errorSamples: load.errors.slice(0, 5),
    },
    targets: {
      coldP50Under1s: coldP50 < 1000,
      coldP50AtMost2xFloor: coldP50 <= 2 * floorP50,
      warmOverheadP50Under2ms: warmA.p50Ms - warmD.p50Ms < 2,
      noErrorsDuringScaleOut: step.errors.length === 0,
    },
  };
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}

async function cleanup(): Promise<void> {
  await worker?.destroy().catch(() => {});
  const registryPort = master?.registryPort;
  await master?.stop().catch(() => {});
  rmSync(dir, { recursive: true, force: true });
  for (const c of await docker.listContainers({ all: true, filters: { label: ['minik8s.io/bench=serverless'] } }).catch(() => [])) {
    await docker
      .getContainer(c.Id)
      .remove({ force: true })
      .catch(() => {});
  }
  if (registryPort !== undefined) {
    for (const image of await docker.listImages().catch(() => [])) {
      const refs = [...(image.RepoTags ?? []), ...(image.RepoDigests ?? [])];
      if (refs.some((r) => r.includes(`/functions/default-${FN}:`) || r.includes(`/functions/default-${FN}@`)))
        await docker
          .getImage(image.Id)
          .remove({ force: true })
          .catch(() => {});
    }
  }
}

// Ctrl-C or a kill: still remove the master, the worker, their containers and the images.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    process.stderr.write(`bench stopped by ${signal}: cleaning up\n`);
    void cleanup().finally(() => process.exit(1));
  });
}

try {
  await main();
} catch (err) {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
} finally {
  await cleanup();
  agent.destroy();
}
