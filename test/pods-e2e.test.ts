// End to end on a real Docker engine: a master and a joined worker run the pod examples; what users see through get, describe, logs, exec and top.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { parse } from 'yaml';
import type { Node } from '../src/core/api/node.js';
import type { Pod } from '../src/core/api/pod.js';
import { waitFor } from '../src/core/wait-for.js';
import { BINARY, freePort, startMaster, type MasterProcess } from './helpers/master.js';
import { docker, nodeContainers, startWorker, type WorkerProcess } from './helpers/worker.js';

const EXAMPLES = join(process.cwd(), 'examples');
const NS = `e2e-${process.pid}`;

describe('pods end to end on Docker', () => {
  let master: MasterProcess;
  let worker: WorkerProcess;
  let taken: Server | undefined;
  let hostPort = 0;

  const cli = (...args: string[]) => spawnSync(process.execPath, [BINARY, ...args], { env: master.env, encoding: 'utf8', timeout: 60_000 });
  const ok = (...args: string[]) => {
    const r = cli(...args);
    assert.equal(r.status, 0, `minik8s ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
    return r.stdout;
  };
  /** The answer's JSON, as the caller says it is. */
  const api = async <T = unknown>(method: string, path: string, body?: unknown) => {
    const res = await fetch(`${master.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${master.token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json: unknown = await res.json();
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${(json as { message?: string } | null)?.message}`);
    return json as T;
  };
  const getPod = async (name: string): Promise<Pod | undefined> => {
    try {
      return await api<Pod>('GET', `/api/v1/namespaces/${NS}/pods/${name}`);
    } catch {
      return undefined;
    }
  };
  const waitPod = (name: string, what: string, check: (pod: Pod) => boolean, timeoutMs = 60_000) =>
    waitFor(
      async () => {
        const pod = await getPod(name);
        return pod && check(pod) ? pod : undefined;
      },
      { timeoutMs, intervalMs: 200, description: `pod ${name} ${what}` },
    );
  const status = (pod: Pod, container: string) => pod.status?.containerStatuses?.find((c) => c.name === container);
  const running = (pod: Pod) => pod.status?.phase === 'Running' && (pod.status.containerStatuses ?? []).every((c) => c.state?.running);
  const condition = (pod: Pod, type: string) => pod.status?.conditions?.find((c) => c.type === type)?.status;

  /** Creates an example's pod on the worker's node (no scheduler yet: spec.nodeName binds it). */
  const createExample = async (file: string, edit: (pod: Pod) => void = () => {}) => {
    const pod = parse(readFileSync(join(EXAMPLES, file), 'utf8')) as Pod;
    pod.metadata.namespace = NS;
    pod.spec.nodeName = worker.nodeName;
    edit(pod);
    return api<Pod>('POST', `/api/v1/namespaces/${NS}/pods`, pod);
  };
  const createPod = (name: string, spec: Partial<Pod['spec']>) =>
    api('POST', `/api/v1/namespaces/${NS}/pods`, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: NS },
      spec: { nodeName: worker.nodeName, ...spec },
    });

  before(
    async () => {
      master = await startMaster({ seedImages: true });
      worker = await startWorker({ server: master.url, joinToken: master.joinToken });
      await api('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
      hostPort = await freePort();
      // Every pod is created up front, so their waits overlap instead of adding up.
      await Promise.all([
        createExample('pod-localhost.yaml'),
        createExample('pod-emptydir.yaml'),
        createExample('pod-shared-pid.yaml'),
        createExample('pod-memory-limit.yaml'),
        createExample('pod-oom.yaml'),
        createExample('pod-command-args.yaml'),
        createExample('pod-crash.yaml'),
        createExample('pod-liveness.yaml'),
        createExample('pod-readiness.yaml'),
        createExample('pod-hostport.yaml', (pod) => {
          pod.spec.containers[0]!.ports![0]!.hostPort = hostPort;
        }),
        createPod('no-such-image', { containers: [{ name: 'app', image: 'no-such-image:9.9' }] }),
      ]);
    },
    { timeout: 120_000 },
  );

  after(async () => {
    taken?.close();
    await worker?.destroy();
    await master?.stop();
  });

  it('joins the node: Ready, with capacity, addresses and a pod CIDR', async () => {
    const node = await waitFor(
      async () => {
        const n = await api<Node>('GET', `/api/v1/nodes/${worker.nodeName}`);
        return n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? n : undefined;
      },
      { timeoutMs: 30_000, description: 'the node to be Ready' },
    );
    assert.match(node.spec.podCIDR!, /^10\.\d+\.\d+\.0\/24$/);
    assert.ok(Number(node.status.capacity!.cpu) >= 1);
    assert.match(node.status.allocatable!.memory as string, /^\d+Ki$/);
    assert.equal(node.status.allocatable!.pods, '110');
    assert.deepEqual(node.status.addresses![0], { type: 'InternalIP', address: '127.0.0.1' });
    assert.equal(node.status.daemonEndpoints!.kubeletEndpoint!.Port, worker.kubeletPort);
    assert.match(ok('get', 'nodes'), new RegExp(`${worker.nodeName}\\s+Ready`));
  });

  it("runs two containers that talk over localhost, with the pod IP in the node's pod CIDR", async () => {
    const pod = await waitPod('localhost-talk', 'to run', running);
    const node = await api<Node>('GET', `/api/v1/nodes/${worker.nodeName}`);
    const prefix = node.spec.podCIDR!.split('.').slice(0, 3).join('.');
    assert.ok(pod.status?.podIP?.startsWith(`${prefix}.`), `${pod.status?.podIP} not in ${node.spec.podCIDR}`);
    assert.equal(pod.status?.hostIP, '127.0.0.1');
    assert.ok(pod.status?.startTime);
    for (const type of ['PodScheduled', 'Initialized', 'ContainersReady', 'Ready']) assert.equal(condition(pod, type), 'True', type);
    await waitFor(() => cli('logs', '-n', NS, 'localhost-talk', '-c', 'client').stdout.includes('hello over localhost'), {
      timeoutMs: 30_000,
      intervalMs: 500,
      description: "the client to fetch the server's page over localhost",
    });
    // --tail keeps the last lines; -f streams new ones as the client prints them (every 2 s).
    await waitFor(() => cli('logs', '-n', NS, 'localhost-talk', '-c', 'client').stdout.split('\n').filter(Boolean).length >= 2, {
      timeoutMs: 30_000,
      intervalMs: 500,
      description: "two lines of the client's log",
    });
    assert.equal(ok('logs', '-n', NS, 'localhost-talk', '-c', 'client', '--tail', '1'), 'hello over localhost\n');
    const follow = spawn(process.execPath, [BINARY, 'logs', '-f', '--tail', '0', '-n', NS, 'localhost-talk', '-c', 'client'], { env: master.env });
    try {
      let streamed = '';
      follow.stdout.on('data', (d) => {
        streamed += d;
      });
      await waitFor(() => streamed.includes('hello over localhost'), { timeoutMs: 15_000, description: 'logs -f to stream a new line' });
    } finally {
      follow.kill('SIGKILL');
    }
  });

  it('shares an emptyDir: one container writes, the other reads', async () => {
    await waitPod('shared-volume', 'to run', running);
    await waitFor(() => cli('logs', '-n', NS, 'shared-volume', '-c', 'reader').stdout.includes('written by the writer'), {
      timeoutMs: 30_000,
      intervalMs: 500,
      description: "the reader to print the writer's note",
    });
    // The reader's mount is read-only.
    const r = cli('exec', '-n', NS, 'shared-volume', '-c', 'reader', '--', 'sh', '-c', 'echo x > /shared/other');
    assert.notEqual(r.status, 0);
  });

  it("shares the PID namespace: each container sees the other's processes", async () => {
    await waitPod('shared-pid', 'to run', running);
    const ps = ok('exec', '-n', NS, 'shared-pid', '-c', 'watcher', '--', 'ps');
    assert.match(ps, /sleep 3600\b/);
    assert.match(ps, /sleep 3601\b/);
  });

  it('enforces the memory limit through the cgroup, visible inside the container', async () => {
    await waitPod('limited', 'to run', running);
    const limit = ok('exec', '-n', NS, 'limited', '--', 'cat', '/sys/fs/cgroup/memory/memory.limit_in_bytes').trim();
    assert.equal(limit, String(64 * 1024 * 1024));
    const quota = ok('exec', '-n', NS, 'limited', '--', 'cat', '/sys/fs/cgroup/cpu/cpu.cfs_quota_us').trim();
    assert.equal(quota, '50000');
  });

  it('shows an OOM kill as OOMKilled and restarts under OnFailure', async () => {
    const pod = await waitPod(
      'memory-hog',
      'to be OOM-killed',
      (p) => {
        const s = status(p, 'hog');
        return s?.lastState?.terminated?.reason === 'OOMKilled' || s?.state?.terminated?.reason === 'OOMKilled';
      },
      90_000,
    );
    assert.equal(status(pod, 'hog')?.lastState?.terminated?.exitCode ?? status(pod, 'hog')?.state?.terminated?.exitCode, 137);
    assert.match(ok('describe', 'pod', '-n', NS, 'memory-hog'), /OOMKilled/);
  });

  it('applies command, args, env and workingDir, and ends a Never pod as Succeeded', async () => {
    const pod = await waitPod('command-args', 'to succeed', (p) => p.status?.phase === 'Succeeded');
    assert.equal(status(pod, 'echo')?.state?.terminated?.reason, 'Completed');
    assert.equal(ok('logs', '-n', NS, 'command-args').trim(), 'hello from /tmp as args-zero');
  });

  it('restarts a crashing container with a growing restartCount and shows CrashLoopBackOff', async () => {
    const pod = await waitPod(
      'crasher',
      'to back off after restarts',
      (p) => {
        const s = status(p, 'crash');
        return (s?.restartCount ?? 0) >= 2 && s?.state?.waiting?.reason === 'CrashLoopBackOff';
      },
      90_000,
    );
    assert.equal(status(pod, 'crash')?.lastState?.terminated?.exitCode, 3);
    assert.match(ok('get', 'pods', '-n', NS, 'crasher'), /crasher\s+0\/1\s+CrashLoopBackOff\s+[2-9]/);
    const events = ok('describe', 'pod', '-n', NS, 'crasher');
    assert.match(events, /BackOff/);
    assert.match(events, /Back-off restarting failed container/);
  });

  it('restarts a container whose liveness probe fails, with an Unhealthy event', async () => {
    await waitPod('liveness', 'to be restarted by its probe', (p) => (status(p, 'app')?.restartCount ?? 0) >= 1, 90_000);
    const described = ok('describe', 'pod', '-n', NS, 'liveness');
    assert.match(described, /Unhealthy/);
    assert.match(described, /Liveness probe failed/);
    assert.match(described, /Killing/);
  });

  it('gates Ready on the readiness probe', async () => {
    const pod = await waitPod('readiness', 'to be Ready', (p) => condition(p, 'Ready') === 'True', 30_000);
    const app = status(pod, 'app')!;
    assert.equal(app.ready, true);
    assert.equal(app.restartCount, 0);
    // The container makes /tmp/ready 3 s after it starts: Ready cannot have turned True before that.
    const started = Date.parse(app.state!.running!.startedAt!);
    const ready = Date.parse(pod.status!.conditions!.find((c) => c.type === 'Ready')!.lastTransitionTime!);
    assert.ok(ready - started >= 2000, `Ready at ${ready - started} ms after the container started`);
    assert.equal(condition(pod, 'ContainersReady'), 'True');
  });

  it('maps a hostPort on the node', async () => {
    await waitPod('hostport', 'to run', running);
    const body = await waitFor(async () => (await fetch(`http://127.0.0.1:${hostPort}/`)).text(), {
      timeoutMs: 15_000,
      description: 'the host port to answer',
    });
    assert.equal(body.trim(), 'hello from the host port');
  });

  it('explains an image that does not exist, without wedging the kubelet', async () => {
    const pod = await waitPod('no-such-image', 'to fail pulling', (p) => /ErrImagePull|ImagePullBackOff/.test(status(p, 'app')?.state?.waiting?.reason ?? ''));
    assert.match(status(pod, 'app')?.state?.waiting?.message ?? '', /no-such-image/);
    assert.match(ok('get', 'pods', '-n', NS, 'no-such-image'), /ErrImagePull|ImagePullBackOff/);
    assert.match(ok('describe', 'pod', '-n', NS, 'no-such-image'), /Failed/);
  });

  it('explains a host port that is already taken', async () => {
    const port = await freePort();
    taken = createServer().listen(port, '0.0.0.0');
    await createPod('port-taken', {
      containers: [{ name: 'web', image: 'busybox:1.35', command: ['sleep', '3600'], ports: [{ containerPort: 80, hostPort: port, protocol: 'TCP' }] }],
    });
    const pod = await waitPod(
      'port-taken',
      'to fail on its host port',
      (p) => {
        const w = status(p, 'web')?.state?.waiting;
        return w !== undefined && /already|in use|allocated/i.test(w.message ?? '');
      },
      60_000,
    );
    assert.ok(status(pod, 'web')?.state?.waiting?.reason);
    // The kubelet goes on serving other pods.
    await createPod('after-port-taken', { containers: [{ name: 'app', image: 'busybox:1.35', command: ['sleep', '3600'] }] });
    await waitPod('after-port-taken', 'to run', running);
  });

  it('serves exec with the exit code, and top with cpu and memory', async () => {
    await waitPod('limited', 'to run', running);
    const r = cli('exec', '-n', NS, 'limited', '--', 'sh', '-c', 'echo out; exit 7');
    assert.equal(r.status, 7);
    assert.equal(r.stdout, 'out\n');
    const top = await waitFor(
      () => {
        const t = cli('top', 'pods', '-n', NS);
        return t.status === 0 && /limited\s+\d+m\s+\d+Mi/.test(t.stdout) ? t.stdout : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 1000, description: 'top pods to show the pod' },
    );
    assert.match(top, /NAME\s+CPU\(cores\)\s+MEMORY\(bytes\)/);
    assert.match(ok('top', 'nodes'), new RegExp(`${worker.nodeName}\\s+\\d+m\\s+\\d+%\\s+\\d+Mi\\s+\\d+%`));
  });

  it('keeps containers untouched across a kubelet crash and restart (same container IDs), and removes those of pods deleted meanwhile', async () => {
    await waitPod('shared-pid', 'to run', running);
    await createPod('orphan', { containers: [{ name: 'app', image: 'busybox:1.35', command: ['sleep', '3600'] }] });
    await waitPod('orphan', 'to run', running);
    const podBefore = (await getPod('shared-pid'))!;
    await worker.kill();
    // Deleted while its kubelet is down: nobody stops its containers until the kubelet is back.
    ok('delete', 'pod', '-n', NS, 'orphan', '--grace-period=0', '--force');
    const ofOrphan = async () => (await nodeContainers(worker.nodeName)).filter((c) => c.Labels['minik8s.io/pod-name'] === 'orphan');
    assert.ok((await ofOrphan()).length >= 2, "the orphan's sandbox and app container are still there");
    // Only pods that restart nothing on their own: earlier tests left pods that crash, OOM or fail
    // their liveness probe, whose containers are replaced whether or not the kubelet restarts.
    const pods = (await api<{ items: Pod[] }>('GET', `/api/v1/namespaces/${NS}/pods`)).items;
    const steady = new Set(
      pods
        .filter((p) => p.metadata.name !== 'orphan' && p.status?.phase === 'Running' && !p.metadata.deletionTimestamp)
        .filter((p) => (p.spec.restartPolicy ?? 'Always') === 'Always' && p.spec.containers.every((c) => !c.livenessProbe))
        .filter((p) => (p.status?.containerStatuses ?? []).every((c) => c.ready && (c.restartCount ?? 0) === 0))
        .map((p) => p.metadata.name!),
    );
    assert.ok(steady.has('shared-pid'), `shared-pid is among the steady pods: ${[...steady].join(', ')}`);
    const steadyContainers = (await nodeContainers(worker.nodeName)).filter((c) => c.State === 'running' && steady.has(c.Labels['minik8s.io/pod-name'] ?? ''));
    const podOf = new Map(steadyContainers.map((c) => [c.Id, c.Labels['minik8s.io/pod-name']]));
    const before = steadyContainers.map((c) => c.Id).sort();
    await worker.restart();
    await waitFor(async () => (await ofOrphan()).length === 0, {
      timeoutMs: 30_000,
      description: "the restarted kubelet to remove the deleted pod's containers",
    });
    // A pod created after the restart runs only once the new kubelet syncs: by then it has looked at every pod it found.
    await createPod('after-restart', { containers: [{ name: 'app', image: 'busybox:1.35', command: ['sleep', '3600'] }] });
    await waitPod('after-restart', 'to run', running);
    const after = (await nodeContainers(worker.nodeName)).filter((c) => c.State === 'running').map((c) => c.Id);
    for (const id of before) assert.ok(after.includes(id), `container ${id.slice(0, 12)} (pod ${podOf.get(id)}) was replaced after the kubelet restart`);
    const podAfter = await waitPod('shared-pid', 'to run', running);
    assert.deepEqual(
      podAfter.status?.containerStatuses?.map((c) => [c.containerID, c.restartCount]),
      podBefore.status?.containerStatuses?.map((c) => [c.containerID, c.restartCount]),
    );
  });

  it('deletes gracefully: SIGTERM first, the pod goes once its containers have stopped', async () => {
    await createExample('pod-graceful.yaml');
    const pod = await waitPod('graceful', 'to run', running);
    const appID = status(pod, 'app')!.containerID!.replace(/^docker:\/\//, '');
    // The app's exit code tells TERM (its trap exits 0) from KILL (137).
    const events = (await docker.getEvents({ filters: { container: [appID], event: ['die'] } })) as NodeJS.ReadableStream & { destroy(): void };
    const died = new Promise<string>((resolve) => {
      let text = '';
      events.on('data', (chunk: Buffer) => {
        text += chunk.toString();
        const m = /"exitCode":"(\d+)"/.exec(text);
        if (m) resolve(m[1]!);
      });
    });
    const started = Date.now();
    try {
      ok('delete', 'pod', '-n', NS, 'graceful', '--wait=false');
      const deleting = await getPod('graceful');
      assert.ok(deleting?.metadata.deletionTimestamp, 'the pod shows a deletionTimestamp while it terminates');
      assert.equal(deleting?.metadata.deletionGracePeriodSeconds, 10);
      assert.equal(await died, '0');
      await waitFor(async () => (await getPod('graceful')) === undefined, { timeoutMs: 30_000, description: 'the pod to be gone' });
    } finally {
      events.destroy();
    }
    // The trap exits at once on TERM: far sooner than the 10 s grace period.
    assert.ok(Date.now() - started < 9000, `graceful delete took ${Date.now() - started} ms`);
    await waitFor(async () => (await nodeContainers(worker.nodeName)).every((c) => c.Id !== appID), {
      timeoutMs: 15_000,
      description: 'the container to be removed',
    });
  });
});
