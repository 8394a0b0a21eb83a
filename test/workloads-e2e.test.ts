// End to end on three simulated machines: a Deployment rolled between two images (and back) behind a Service with no failed request, a rollout that survives a master killed halfway, and a ReplicaSet that outlives a deleted pod, a killed container and a lost worker.
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type * as v from 'valibot';
import type { Deployment } from '../src/core/api/deployment.js';
import type { Endpoints } from '../src/core/api/endpoints.js';
import type { Node } from '../src/core/api/node.js';
import type { Pod, podTemplateSpecSchema } from '../src/core/api/pod.js';
import type { ReplicaSet } from '../src/core/api/replicaset.js';
import type { Service } from '../src/core/api/service.js';
import { waitFor } from '../src/core/wait-for.js';
import { BINARY } from './helpers/master.js';
import { createNetnsCluster, findExecutable, netnsSkipReason, type NetnsCluster, type NetnsWorker } from './helpers/netns-node.js';
import { isPodReady } from '../src/core/api/pod.js';
import { PodTracker } from './helpers/pod-tracker.js';

const NS = `workloads-e2e-${process.pid}`;
const skip = netnsSkipReason();
/** The master's --node-monitor-grace-period: a lost worker is noticed in 20 s rather than 40 (two missed 10 s heartbeats). */
const GRACE_SECONDS = 20;

/**
 * A web server answering "v1" (python) or "v2" (nginx) on port 80, Ready once it answers, leaving its
 * endpoints 5 s before SIGTERM. v1's page is written by its postStart hook: probes start only once the
 * hook is done, so were it not run (or run late) the client would get a directory listing from a Ready pod.
 */
function webContainer(version: 'v1' | 'v2') {
  const lifecycle = {
    // The pod leaves the Service's endpoints when it is deleted; every node's proxy drops it within a
    // second. The hook holds SIGTERM back until then, so no request reaches a server that is going.
    preStop: { sleep: { seconds: 5 } },
    ...(version === 'v1' ? { postStart: { exec: { command: ['sh', '-c', 'mkdir -p /srv && echo v1 > /srv/index.html'] } } } : {}),
  };
  return {
    name: 'web',
    image: version === 'v1' ? 'python:3.11' : 'nginx:1.22',
    command: [
      'sh',
      '-c',
      version === 'v1'
        ? 'mkdir -p /srv && exec python3 -m http.server 80 -d /srv'
        : 'echo v2 > /usr/share/nginx/html/index.html && exec nginx -g "daemon off;"',
    ],
    ports: [{ name: 'http', containerPort: 80 }],
    readinessProbe: { httpGet: { path: '/', port: 'http' }, periodSeconds: 1 },
    lifecycle,
  };
}

/**
 * The client, run on a node's host (its network namespace): GETs the URL back to back (a new
 * connection each), counting answers by body and keeping every failure. On a `report` line on stdin
 * it prints the totals so far as one JSON line; it ends when stdin ends or after the time limit.
 */
const CLIENT = `
import http from 'node:http';
import { createInterface } from 'node:readline';
const [url, limitSeconds] = process.argv.slice(2);
const deadline = Date.now() + Number(limitSeconds) * 1000;
const answers = {};
const errors = [];
let total = 0;
let stopping = false;
const report = () => process.stdout.write(JSON.stringify({ answers, errors, total }) + '\\n');
createInterface({ input: process.stdin }).on('line', (line) => { if (line.trim() === 'report') report(); }).on('close', () => { stopping = true; });
const once = () => new Promise((resolve) => {
  const at = new Date().toISOString();
  let settled = false;
  const done = (error, body) => {
    if (settled) return;
    settled = true;
    total++;
    if (error) errors.push(at + ' ' + error);
    else answers[body] = (answers[body] ?? 0) + 1;
    resolve();
  };
  const req = http.get(url, { agent: false, timeout: 3000 }, (res) => {
    let body = '';
    res.setEncoding('utf8');
    res.on('data', (d) => { body += d; });
    res.on('end', () => done(res.statusCode === 200 ? undefined : 'HTTP ' + res.statusCode, body.trim()));
    res.on('error', (err) => done(err.message));
  });
  req.on('timeout', () => req.destroy(new Error('no answer within 3 s')));
  req.on('error', (err) => done(err.message));
});
while (!stopping && Date.now() < deadline) {
  await once();
  await new Promise((resolve) => setTimeout(resolve, 20));
}
report();
process.exit(0);
`;

interface ClientReport {
  answers: Record<string, number>;
  errors: string[];
  total: number;
}

describe('workloads on three machines: rolling updates with no failed request, a master restart mid-rollout, a ReplicaSet that heals', { skip }, () => {
  let cluster: NetnsCluster;
  let workers: NetnsWorker[];
  let scratch: string;
  const trackers: PodTracker[] = [];
  const clients: ChildProcessWithoutNullStreams[] = [];
  const timings: string[] = [];

  const master = () => cluster.master;
  const call = async (method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<{ status: number; body: unknown }> => {
    const send = () =>
      fetch(`${master().url}${path}`, {
        method,
        headers: { authorization: `Bearer ${master().token}`, 'content-type': contentType },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    // A kept-alive connection the server closed meanwhile (or a master just restarted) fails before the request
    // was sent: sending it once more is safe.
    const res = await send().catch((err: Error & { cause?: { code?: string } }) => {
      if (err.cause?.code !== 'UND_ERR_SOCKET' && err.cause?.code !== 'ECONNRESET') throw err;
      return send();
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      /* not JSON */
    }
    return { status: res.status, body: parsed };
  };
  /** The answer's body, as the caller says it is. */
  const api = async <T = unknown>(method: string, path: string, body?: unknown, contentType?: string) => {
    const res = await call(method, path, body, contentType);
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${(res.body as { message?: string } | undefined)?.message ?? res.body}`);
    return res.body as T;
  };
  // Asynchronous, so that the pod watches and the client's pipe keep being read while a command runs.
  const cli = (...args: string[]) =>
    new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [BINARY, ...args], { env: master().env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => {
        stdout += d;
      });
      child.stderr.on('data', (d) => {
        stderr += d;
      });
      const timer = setTimeout(() => child.kill('SIGKILL'), 300_000);
      child.once('close', (status) => {
        clearTimeout(timer);
        resolve({ status, stdout, stderr });
      });
    });
  const getNode = (w: NetnsWorker) => api<Node>('GET', `/api/v1/nodes/${w.nodeName}`);
  const nodeReady = (n: Node) => n.status?.conditions?.find((c) => c.type === 'Ready')?.status;
  const workerOf = (nodeName: string) => workers.findIndex((w) => w.nodeName === nodeName);
  const track = (selector: string, options: { reconnect?: boolean } = {}) => {
    const t = new PodTracker();
    trackers.push(t);
    t.start(master().url, master().token, selector, NS, options);
    return t;
  };
  const running = (p: Pod) => p.status?.phase === 'Running' && isPodReady(p);
  const lap = (started: number) => `${((Date.now() - started) / 1000).toFixed(1)} s`;
  /** Replaces the Deployment's pod template (a PUT of what was read, so a concurrent change fails rather than being lost). */
  const setTemplate = async (name: string, change: (template: v.InferInput<typeof podTemplateSpecSchema>) => void) => {
    const path = `/apis/apps/v1/namespaces/${NS}/deployments/${name}`;
    const deployment = await api<Deployment>('GET', path);
    change(deployment.spec.template);
    await api('PUT', path, deployment);
  };
  const rolloutStatus = async (name: string) => {
    const r = await cli('rollout', 'status', `deploy/${name}`, '-n', NS, '--timeout=240s');
    assert.equal(r.status, 0, `rollout status ${name}: ${r.stderr}${r.stdout}`);
    assert.match(r.stdout, new RegExp(`deployment "${name}" successfully rolled out\\n$`));
  };

  /** Starts the client on worker w's host against the URL; `report()` asks for its totals so far. */
  const startClient = (w: NetnsWorker, url: string) => {
    const child = spawn(
      findExecutable('nsenter')!,
      [`--net=/var/run/netns/${w.machine.netns}`, '--', process.execPath, join(scratch, 'client.mjs'), url, '600'],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    );
    clients.push(child);
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const waiting: ((line: string) => void)[] = [];
    createInterface({ input: child.stdout }).on('line', (line) => waiting.shift()?.(line));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    return {
      report: async (): Promise<ClientReport> => {
        const line = new Promise<string>((resolve) => waiting.push(resolve));
        child.stdin.write('report\n');
        const got = await Promise.race([
          line,
          exited.then(() => {
            throw new Error(`the client exited: ${stderr}`);
          }),
        ]);
        return JSON.parse(got) as ClientReport;
      },
      /** Ends it (its stdin closes: it stops after the request in flight) and waits for it. */
      stop: async () => {
        child.stdin.end();
        const deadline = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(deadline);
      },
    };
  };
  /** The endpoints node w's proxy sends the service's cluster IP to now, read from its nat table (the comments name them). */
  const proxiedIPs = (w: NetnsWorker, service: string) => {
    const r = spawnSync(findExecutable('nsenter')!, [`--net=/var/run/netns/${w.machine.netns}`, '--', findExecutable('iptables-save')!, '-t', 'nat'], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    assert.equal(r.status, 0, r.stderr);
    return [...r.stdout.matchAll(new RegExp(`--comment "${NS}/${service} -> ([0-9.]+):\\d+"`, 'g'))].map((m) => m[1]!).sort();
  };
  /** What the client got between two reports. */
  const since = (before: ClientReport, now: ClientReport) => ({
    total: now.total - before.total,
    errors: now.errors.slice(before.errors.length),
    answers: Object.fromEntries(
      Object.entries(now.answers)
        .map(([k, n]) => [k, n - (before.answers[k] ?? 0)])
        .filter(([, n]) => (n as number) > 0),
    ) as Record<string, number>,
  });

  before(
    async () => {
      scratch = mkdtempSync(join(tmpdir(), 'minik8s-workloads-e2e-'));
      writeFileSync(join(scratch, 'client.mjs'), CLIENT);
      cluster = await createNetnsCluster({
        machines: ['w1', 'w2', 'w3'],
        masterArgs: ['--node-monitor-grace-period', String(GRACE_SECONDS)],
        log: (line) => timings.push(line),
      });
      workers = cluster.workers;
      await api('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
      await Promise.all(
        workers.map((w) => waitFor(async () => nodeReady(await getNode(w)) === 'True', { timeoutMs: 30_000, description: `node ${w.nodeName} to be Ready` })),
      );
    },
    { timeout: 20 * 60_000 },
  );

  // A test's watches end with it: one left open would fail when a later test kills the master.
  afterEach(async () => {
    await Promise.all(trackers.splice(0).map((t) => t.stop()));
  });

  after(
    async () => {
      for (const c of clients) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
      await Promise.all(trackers.map((t) => t.stop()));
      if (scratch) rmSync(scratch, { recursive: true, force: true });
      const started = Date.now();
      try {
        await cluster?.destroy();
      } finally {
        timings.push(`cleanup took ${lap(started)}`);
        console.log(`workloads-e2e timings:\n  ${timings.join('\n  ')}`);
      }
    },
    { timeout: 120_000 },
  );

  it('rolls a Deployment behind a Service from python (v1) to nginx (v2) and back with rollout undo while a client on a node sends requests: none fails', async () => {
    const pods = track('app=web');
    await api('POST', `/apis/apps/v1/namespaces/${NS}/deployments`, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: {
        replicas: 3,
        selector: { matchLabels: { app: 'web' } },
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
        template: { metadata: { labels: { app: 'web' } }, spec: { terminationGracePeriodSeconds: 15, containers: [webContainer('v1')] } },
      },
    });
    await api('POST', `/api/v1/namespaces/${NS}/services`, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web' },
      spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 'http' }] },
    });
    let started = Date.now();
    await rolloutStatus('web');
    timings.push(`web: 3 replicas of v1 available after ${lap(started)}`);
    const ip = (await api<Service>('GET', `/api/v1/namespaces/${NS}/services/web`)).spec.clusterIP as string;

    const client = startClient(workers[0]!, `http://${ip}/`);
    const first = await waitFor(
      async () => {
        const r = await client.report();
        return r.total >= 20 ? r : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 250, description: 'the client to get its first 20 answers' },
    );
    assert.deepEqual(first.errors, [], 'the Service answers before any rollout');
    assert.deepEqual(Object.keys(first.answers), ['v1']);

    /** Rolls to `version`, then waits until the Service's endpoints are the new pods only and the client has had 50 answers since. */
    const rollTo = async (version: 'v1' | 'v2', roll: () => Promise<void>) => {
      const before = await client.report();
      pods.arm();
      started = Date.now();
      await roll();
      await rolloutStatus('web');
      timings.push(`web: rolled to ${version} in ${lap(started)}`);
      const image = webContainer(version).image;
      const current = () => pods.alive().filter((p) => p.spec.containers[0].image === image);
      await waitFor(
        async () => {
          const ep = await api<Endpoints>('GET', `/api/v1/namespaces/${NS}/endpoints/web`);
          const ips = (ep.subsets ?? []).flatMap((s) => (s.addresses ?? []).map((a) => a.ip)).sort();
          return (
            ips.length === 3 &&
            ips.join() ===
              current()
                .map((p) => p.status?.podIP)
                .sort()
                .join()
          );
        },
        { timeoutMs: 60_000, intervalMs: 200, description: `the endpoints of web to be the three ${version} pods` },
      );
      // And the client's node has them: its proxy follows the endpoints a moment later (at most one sync per 250 ms).
      const newIPs = current()
        .map((p) => p.status?.podIP)
        .sort()
        .join();
      await waitFor(() => proxiedIPs(workers[0]!, 'web').join() === newIPs, {
        timeoutMs: 30_000,
        intervalMs: 100,
        description: `the proxy on ${workers[0]!.nodeName} to send web to the ${version} pods only`,
      });
      const settled = await client.report();
      const after = await waitFor(
        async () => {
          const r = await client.report();
          return r.total - settled.total >= 50 ? r : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 250, description: '50 more answers' },
      );
      const during = since(before, settled);
      const afterwards = since(settled, after);
      timings.push(`web: ${during.total} requests during the rollout to ${version} (${JSON.stringify(during.answers)}), ${during.errors.length} failed`);
      assert.deepEqual(during.errors, [], `failed requests during the rollout to ${version}`);
      assert.deepEqual(afterwards.errors, []);
      assert.deepEqual(Object.keys(afterwards.answers), [version], `only ${version} answers once the rollout is over: ${JSON.stringify(afterwards.answers)}`);
      assert.ok(
        (during.answers[version] ?? 0) > 0 && Object.keys(during.answers).length === 2,
        `both versions answered during the rollout: ${JSON.stringify(during.answers)}`,
      );
      assert.ok(pods.maxAlive <= 4, `${pods.maxAlive} pods at once (3 + maxSurge 1)`);
      assert.ok(pods.minReady >= 3, `Ready pods dropped to ${pods.minReady} (maxUnavailable 0)`);
    };

    try {
      await rollTo('v2', () =>
        setTemplate('web', (t) => {
          t.spec.containers = [webContainer('v2')];
        }),
      );
      await rollTo('v1', async () => {
        const undo = await cli('rollout', 'undo', 'deploy/web', '-n', NS);
        assert.equal(undo.status, 0, undo.stderr);
        assert.equal(undo.stdout, 'deployment.apps/web rolled back\n');
      });
    } finally {
      await client.stop();
    }
    const hist = await cli('rollout', 'history', 'deploy/web', '-n', NS);
    assert.equal(hist.status, 0, hist.stderr);
    assert.match(hist.stdout, /^deployment\.apps\/web\nREVISION\s+CHANGE-CAUSE\n2\s+<none>\n3\s+<none>\n/);
  });

  it('finishes a rollout whose master was killed halfway: exactly 4 pods of the new template, never more than 4 + maxSurge at once', async () => {
    // A watch that takes itself up again when the master is back, so that no moment goes uncounted.
    const pods = track('app=slow', { reconnect: true });
    const template = (version: string) => ({
      metadata: { labels: { app: 'slow' } },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [
          {
            name: 'app',
            image: 'busybox:1.35',
            command: ['sleep', '3600'],
            env: [{ name: 'VERSION', value: version }],
            // Slow to be Ready, so that the rollout takes long enough to kill the master in the middle of it.
            readinessProbe: { exec: { command: ['true'] }, initialDelaySeconds: 5, periodSeconds: 1 },
          },
        ],
      },
    });
    await api('POST', `/apis/apps/v1/namespaces/${NS}/deployments`, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'slow' },
      spec: {
        replicas: 4,
        selector: { matchLabels: { app: 'slow' } },
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
        template: template('v1'),
      },
    });
    await rolloutStatus('slow');
    await waitFor(() => pods.pods.size === 4 && pods.alive().every(running), { timeoutMs: 60_000, description: '4 Running v1 pods' });
    const oldHash = pods.alive()[0].metadata.labels!['pod-template-hash'] as string;
    const isNew = (p: Pod) => p.metadata.labels!['pod-template-hash'] !== oldHash;

    pods.arm();
    // Should there be too many, what they were: the first moment it happened.
    let overshoot: string | undefined;
    pods.onEvent = () => {
      if (overshoot || pods.alive().length <= 5) return;
      overshoot = pods
        .alive()
        .map((p) => `${p.metadata.name} (${isNew(p) ? 'new' : 'old'}, ${isPodReady(p) ? 'Ready' : 'not Ready'})`)
        .join(', ');
    };
    const started = Date.now();
    await setTemplate('slow', (t) => {
      t.spec = template('v2').spec;
    });
    await waitFor(() => pods.ready().filter(isNew).length >= 2, { timeoutMs: 120_000, intervalMs: 100, description: 'two Ready pods of the new template' });
    timings.push(`slow: halfway (2 of 4 new pods Ready) after ${lap(started)}; killing the master`);
    process.kill(master().pid, 'SIGKILL');
    await waitFor(
      async () => {
        try {
          await fetch(`${master().url}/readyz`);
          return false;
        } catch {
          return true;
        }
      },
      { timeoutMs: 10_000, description: 'the master to be gone' },
    );
    await cluster.restartMaster();
    timings.push(`slow: master back after ${lap(started)}`);

    await rolloutStatus('slow');
    await waitFor(() => pods.pods.size === 4 && [...pods.pods.values()].every((p) => isNew(p) && running(p) && !p.metadata.deletionTimestamp), {
      timeoutMs: 120_000,
      intervalMs: 200,
      description: 'exactly 4 pods, all of the new template, Running and Ready, the old ones gone',
    });
    timings.push(`slow: rolled out in ${lap(started)}, at most ${pods.maxAlive} pods at once`);
    assert.ok(pods.maxAlive <= 5, `${pods.maxAlive} pods at once (4 + maxSurge 1): ${overshoot}`);
    assert.ok(pods.minReady >= 4, `Ready pods dropped to ${pods.minReady} (maxUnavailable 0)`);
    // No pod of the new template was made twice over, despite the restart.
    assert.equal(
      [...pods.created].filter((name) => name.startsWith('slow-') && !name.includes(oldHash)).length,
      4,
      `pods made: ${[...pods.created].join(', ')}`,
    );

    const sets = (await api<{ items: ReplicaSet[] }>('GET', `/apis/apps/v1/namespaces/${NS}/replicasets?labelSelector=app%3Dslow`)).items;
    const replicas = Object.fromEntries(
      sets.map((rs) => [rs.metadata.labels!['pod-template-hash'] === oldHash ? 'old' : 'new', [rs.spec.replicas, rs.status?.readyReplicas ?? 0]]),
    );
    assert.deepEqual(replicas, { old: [0, 0], new: [4, 4] });
    const deployment = await api<Deployment>('GET', `/apis/apps/v1/namespaces/${NS}/deployments/slow`);
    assert.deepEqual([deployment.status.replicas, deployment.status.updatedReplicas, deployment.status.availableReplicas], [4, 4, 4]);
  });

  it('keeps a ReplicaSet at 3 through a deleted pod, a killed container and a lost worker, never above 3', async () => {
    const pods = track('app=keeper');
    const short = ['not-ready', 'unreachable'].map((k) => ({ key: `node.kubernetes.io/${k}`, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 5 }));
    await api('POST', `/apis/apps/v1/namespaces/${NS}/replicasets`, {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name: 'keeper' },
      spec: {
        replicas: 3,
        selector: { matchLabels: { app: 'keeper' } },
        template: {
          metadata: { labels: { app: 'keeper' } },
          spec: { terminationGracePeriodSeconds: 1, tolerations: short, containers: [{ name: 'app', image: 'busybox:1.35', command: ['sleep', '3600'] }] },
        },
      },
    });
    const threeRunning = (description: string, extra: (alive: Pod[]) => boolean = () => true) =>
      waitFor(() => (pods.alive().length === 3 && pods.alive().every(running) && extra(pods.alive()) ? pods.alive() : undefined), {
        timeoutMs: 120_000,
        intervalMs: 100,
        description,
      });
    await threeRunning('3 Running pods');
    pods.arm();

    // A deleted pod is replaced.
    let started = Date.now();
    const [deleted] = pods.alive();
    await api('DELETE', `/api/v1/namespaces/${NS}/pods/${deleted.metadata.name}`);
    await threeRunning('3 Running pods after a deletion', (alive) => !alive.some((p) => p.metadata.name === deleted.metadata.name));
    timings.push(`keeper: a deleted pod replaced in ${lap(started)}`);

    // A container killed behind the kubelet's back (docker kill on its machine's engine) is restarted in place.
    started = Date.now();
    const names = pods
      .alive()
      .map((p) => p.metadata.name)
      .sort();
    const victim = pods.alive()[0];
    const engine = workers[workerOf(victim.spec.nodeName!)]!.machine.docker;
    const [container] = await engine.listContainers({ filters: { label: [`minik8s.io/pod-uid=${victim.metadata.uid}`, 'minik8s.io/role=app'] } });
    assert.ok(container, `the container of ${victim.metadata.name}`);
    await engine.getContainer(container.Id).kill();
    await threeRunning(
      'the killed container to be restarted',
      (alive) => alive.find((p) => p.metadata.uid === victim.metadata.uid)?.status?.containerStatuses?.[0]?.restartCount === 1,
    );
    assert.deepEqual(
      pods
        .alive()
        .map((p) => p.metadata.name)
        .sort(),
      names,
      'the pod was restarted, not replaced',
    );
    const restarted = pods.pods.get(victim.metadata.name!)!.status.containerStatuses![0];
    assert.equal(restarted.lastState?.terminated?.exitCode, 137);
    timings.push(`keeper: a killed container restarted in ${lap(started)}`);

    // A worker that dies and drops off the network: its pods are evicted once their 5 s toleration is up, and replaced elsewhere.
    const lostNode = pods.alive()[0].spec.nodeName as string;
    const i = workerOf(lostNode);
    const lost = workers[i]!;
    const stranded = pods
      .alive()
      .filter((p) => p.spec.nodeName === lostNode)
      .map((p) => p.metadata.name!);
    started = Date.now();
    process.kill(lost.pid, 'SIGKILL');
    const ip = findExecutable('ip')!;
    const down = spawnSync(ip, ['link', 'set', lost.machine.veth, 'down'], { encoding: 'utf8' });
    assert.equal(down.status, 0, down.stderr);
    try {
      await waitFor(async () => nodeReady(await getNode(lost)) === 'Unknown', {
        timeoutMs: (GRACE_SECONDS + 30) * 1000,
        intervalMs: 500,
        description: `node ${lostNode} to be NotReady`,
      });
      timings.push(`keeper: ${lostNode} NotReady after ${lap(started)}`);
      await threeRunning('3 Running pods on the other nodes', (alive) => alive.every((p) => p.spec.nodeName !== lostNode));
      timings.push(`keeper: ${stranded.length} pods of the lost worker replaced after ${lap(started)}`);
      for (const name of stranded) assert.ok(pods.pods.get(name)?.metadata.deletionTimestamp, `${name} evicted`);
    } finally {
      spawnSync(ip, ['link', 'set', lost.machine.veth, 'up']);
    }

    // The worker comes back: its kubelet finishes the evicted pods off, and the ReplicaSet stays at exactly 3.
    await cluster.restartWorker(i);
    await waitFor(
      async () => {
        const n = await getNode(lost);
        return nodeReady(n) === 'True' && !n.spec?.taints?.some((t) => t.key.startsWith('node.kubernetes.io/'));
      },
      { timeoutMs: 60_000, intervalMs: 500, description: `node ${lostNode} Ready again` },
    );
    await waitFor(() => pods.pods.size === 3 && [...pods.pods.values()].every(running), {
      timeoutMs: 60_000,
      intervalMs: 200,
      description: 'the evicted pods gone, 3 Running',
    });
    assert.ok(pods.maxAlive <= 3, `${pods.maxAlive} pods at once`);
    const rs = await api<ReplicaSet>('GET', `/apis/apps/v1/namespaces/${NS}/replicasets/keeper`);
    assert.deepEqual([rs.status.replicas, rs.status.readyReplicas], [3, 3]);
  });
});
