// The kubelet's sync loop end to end on the fake provider, judged by what a user sees through the API: create, adopt, restart with backoff, delete, probes.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eventKind, type Event } from '../../core/api/event.js';
import { podKind, type ContainerStatus, type Pod, type Probe } from '../../core/api/pod.js';
import { ApiClient, kindObjectPath } from '../../core/client/api-client.js';
import { InformerFactory } from '../../core/controller/informer-factory.js';
import { NotFoundError } from '../../core/errors.js';
import { MemoryStore } from '../../core/store/memory-store.js';
import { waitFor } from '../../core/wait-for.js';
import { FakeBackend, FakeProvider, KILLED_EXIT_CODE } from '../../runtime/fake-provider.js';
import { ADMIN_USER, TokenAuthenticator } from '../../control-plane/api-server/auth.js';
import { startApiServer } from '../../control-plane/api-server/server.js';
import { ManualClock } from './clock.js';
import { Kubelet } from './kubelet.js';
import { MIN_GRACE_SECONDS } from './pod-sync.js';

const TOKEN = 'kubelet-test-token';
const NODE = 'node-1';
const NODE_IP = '192.168.50.11';
const POD_CIDR = '10.244.1.0/24';
const IMAGE = 'busybox:1.36';
const START = '2030-01-01T00:00:00.000Z';

/** An API server over a MemoryStore on a loopback port, and the clock that every part of the test shares. */
interface Cluster {
  clock: ManualClock;
  client: ApiClient;
  backend: FakeBackend;
  close(): Promise<void>;
}

async function startCluster(): Promise<Cluster> {
  const clock = new ManualClock(START);
  const authenticator = new TokenAuthenticator();
  authenticator.add(TOKEN, ADMIN_USER);
  const stop = new AbortController();
  const api = await startApiServer({ store: new MemoryStore(), authenticator, address: '127.0.0.1', port: 0, signal: stop.signal, now: () => clock.date() });
  const client = new ApiClient({ server: api.url, token: TOKEN });
  return {
    clock,
    client,
    backend: new FakeBackend(),
    async close() {
      client.close();
      stop.abort();
      await api.closed;
    },
  };
}

interface RunningKubelet {
  kubelet: Kubelet;
  provider: FakeProvider;
  logs: string[];
  stop(): Promise<void>;
}

interface KubeletHarnessOptions {
  pullableImages?: string[];
  /** A provider of the test's own (one that answers slowly, say); by default a FakeProvider on the cluster's backend. */
  provider?: FakeProvider;
}

/** A kubelet for NODE over its own FakeProvider on the cluster's backend (a second one sees what the first left running). */
async function startKubelet(cluster: Cluster, options: KubeletHarnessOptions = {}): Promise<RunningKubelet> {
  const provider = options.provider ?? new FakeProvider({ backend: cluster.backend, now: () => cluster.clock.date(), pullableImages: options.pullableImages });
  const logs: string[] = [];
  const client = new ApiClient({ server: cluster.client.server.href, token: TOKEN });
  const informers = new InformerFactory({ client, log: (m) => logs.push(m) });
  const kubelet = new Kubelet({
    client,
    informers,
    nodeName: NODE,
    nodeIP: NODE_IP,
    provider,
    podCIDR: POD_CIDR,
    address: '127.0.0.1',
    port: 0,
    clock: cluster.clock,
    log: (m) => logs.push(m),
  });
  const stop = new AbortController();
  const running = Promise.all([informers.start(stop.signal), kubelet.start(stop.signal)]);
  // Fail fast on a start that breaks (a port, say) rather than time out in a waitFor.
  await Promise.race([waitFor(() => kubelet.port !== undefined, { timeoutMs: 5000, intervalMs: 2 }), running]);
  return {
    kubelet,
    provider,
    logs,
    async stop() {
      stop.abort();
      await running;
    },
  };
}

/** Runs a test against a kubelet on the cluster, and always stops it. */
async function withKubeletOn(cluster: Cluster, options: KubeletHarnessOptions, test: (k: RunningKubelet) => Promise<void>): Promise<void> {
  const k = await startKubelet(cluster, options);
  try {
    await test(k);
    // Every sync along the way succeeded: nothing went to the queue's error path.
    assert.deepEqual(
      k.logs.filter((l) => /failed|retrying/.test(l)),
      [],
    );
  } finally {
    await k.stop();
  }
}

/** Runs a test against a fresh cluster and kubelet, and always tears both down. */
async function withKubelet(test: (c: Cluster, k: RunningKubelet) => Promise<void>, options: KubeletHarnessOptions = {}): Promise<void> {
  const cluster = await startCluster();
  try {
    await withKubeletOn(cluster, options, (k) => test(cluster, k));
  } finally {
    await cluster.close();
  }
}

type Spec = Partial<Pod['spec']> & { containers?: Pod['spec']['containers'] };

async function createPod(c: Cluster, name: string, spec: Spec = {}): Promise<Pod> {
  return (await c.client.create(
    podKind,
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name },
      spec: { nodeName: NODE, containers: [{ name: 'app', image: IMAGE }], ...spec },
    },
    { namespace: 'default' },
  )) as Pod;
}

/** A probe as written in a manifest; the API server fills in the defaults (timeoutSeconds, successThreshold). */
function probe(p: Partial<Probe>): Probe {
  return p as Probe;
}

async function getPod(c: Cluster, name: string): Promise<Pod | undefined> {
  try {
    return (await c.client.get(podKind, { namespace: 'default', name })) as Pod;
  } catch (err) {
    if (err instanceof NotFoundError) return undefined;
    throw err;
  }
}

function statusOf(pod: Pod | undefined, container = 'app'): ContainerStatus | undefined {
  return pod?.status?.containerStatuses?.find((s) => s.name === container);
}

/** Waits until the pod, read through the API, satisfies `check`; the description says what in a timeout. */
async function waitForPod(c: Cluster, name: string, description: string, check: (pod: Pod) => boolean): Promise<Pod> {
  let last: Pod | undefined;
  try {
    return await waitFor(
      async () => {
        last = await getPod(c, name);
        return last && check(last) ? last : undefined;
      },
      { timeoutMs: 5000, intervalMs: 5, description: `pod ${name}: ${description}` },
    );
  } catch (err) {
    throw new Error(`${(err as Error).message}\nlast status: ${JSON.stringify(last?.status)}`);
  }
}

const running =
  (container = 'app', restartCount = 0) =>
  (p: Pod) => {
    const s = statusOf(p, container);
    return Boolean(s?.state?.running) && s?.restartCount === restartCount;
  };

async function podEvents(c: Cluster, uid: string): Promise<Event[]> {
  const list = await c.client.list(eventKind, { namespace: 'default', fieldSelector: `involvedObject.uid=${uid}` });
  return list.items as unknown as Event[];
}

/** Waits for an event of this reason (and message, when given) about the pod. */
async function waitForEvent(c: Cluster, uid: string, reason: string, message?: string | RegExp): Promise<Event> {
  return waitFor(
    async () =>
      (await podEvents(c, uid)).find(
        (e) => e.reason === reason && (message === undefined || (typeof message === 'string' ? e.message === message : message.test(e.message ?? ''))),
      ),
    {
      timeoutMs: 5000,
      intervalMs: 5,
      description: `event ${reason} ${message ?? ''} for pod ${uid}`,
    },
  );
}

function starts(provider: FakeProvider, uid: string, container = 'app'): number[] {
  return provider.calls
    .filter((c) => c.uid === uid && c.method === 'updatePod' && c.action?.type === 'start' && c.action.container === container)
    .map((c) => (c.action as { attempt: number }).attempt);
}

/** Is the IPv4 address inside the CIDR? */
function inCidr(ip: string, cidr: string): boolean {
  const toInt = (s: string) => s.split('.').reduce((n, o) => n * 256 + Number(o), 0);
  const [base, bits] = cidr.split('/') as [string, string];
  const size = 2 ** (32 - Number(bits));
  return Math.floor(toInt(ip) / size) === Math.floor(toInt(base) / size);
}

describe('kubelet sync loop on the fake provider', () => {
  it('creates the sandbox and containers of a pod bound to its node and reports it Running; ignores pods of other nodes', () =>
    withKubelet(
      async (c, { kubelet, provider }) => {
        const elsewhere = await createPod(c, 'elsewhere', { nodeName: 'node-2' });
        const unscheduled = await createPod(c, 'unscheduled', { nodeName: undefined });
        const pod = await createPod(c, 'web', {
          containers: [
            { name: 'app', image: IMAGE },
            { name: 'sidecar', image: 'registry.local/sidecar:2' },
          ],
        });
        const uid = pod.metadata.uid!;

        const seen = await waitForPod(
          c,
          'web',
          'Running and Ready',
          (p) => p.status?.phase === 'Running' && p.status.conditions?.find((x) => x.type === 'Ready')?.status === 'True',
        );
        const runtime = (await provider.getPod(uid))!;
        assert.equal(runtime.sandbox.state, 'ready');
        assert.deepEqual(
          runtime.containers.map((x) => [x.name, x.state, x.attempt]),
          [
            ['app', 'running', 0],
            ['sidecar', 'running', 0],
          ],
        );

        const status = seen.status!;
        assert.deepEqual(Object.fromEntries((status.conditions ?? []).map((x) => [x.type, x.status])), {
          PodScheduled: 'True',
          Initialized: 'True',
          ContainersReady: 'True',
          Ready: 'True',
        });
        assert.equal(status.podIP, runtime.sandbox.ip);
        assert.ok(inCidr(status.podIP!, POD_CIDR), `pod IP ${status.podIP} is in ${POD_CIDR}`);
        assert.deepEqual(status.podIPs, [{ ip: status.podIP }]);
        assert.equal(status.hostIP, NODE_IP);
        assert.equal(status.startTime, START);
        for (const name of ['app', 'sidecar']) {
          const rc = runtime.containers.find((x) => x.name === name)!;
          const s = statusOf(seen, name)!;
          assert.equal(s.containerID, `docker://${rc.id}`);
          assert.equal(s.image, name === 'app' ? IMAGE : 'registry.local/sidecar:2');
          assert.equal(s.restartCount, 0);
          assert.deepEqual(s.state, { running: { startedAt: START } });
          assert.equal(s.ready, true);
          assert.equal(s.started, true);
        }

        // As kubectl describe shows them: one Pulled, Created, Started per container, from this node's kubelet.
        await waitForEvent(c, uid, 'Started', 'Started container sidecar');
        await waitForEvent(c, uid, 'Started', 'Started container app');
        const events = await podEvents(c, uid);
        const summary = events.map((e) => `${e.involvedObject.fieldPath} ${e.reason}: ${e.message}`).sort();
        assert.deepEqual(summary, [
          'spec.containers{app} Created: Created container app',
          'spec.containers{app} Pulled: Container image "busybox:1.36" already present on machine',
          'spec.containers{app} Started: Started container app',
          'spec.containers{sidecar} Created: Created container sidecar',
          'spec.containers{sidecar} Pulled: Successfully pulled image "registry.local/sidecar:2" in 0.000s',
          'spec.containers{sidecar} Started: Started container sidecar',
        ]);
        assert.ok(events.every((e) => e.source?.host === NODE && e.source.component === 'kubelet' && e.type === 'Normal'));

        // A settled pod costs no writes: a resync finds nothing to change.
        const rv = seen.metadata.resourceVersion;
        await c.clock.advance(10_000);
        await kubelet.whenIdle();
        assert.equal((await getPod(c, 'web'))?.metadata.resourceVersion, rv);

        for (const other of [elsewhere, unscheduled]) {
          assert.equal(await provider.getPod(other.metadata.uid!), undefined);
          assert.deepEqual(
            provider.calls.filter((x) => x.uid === other.metadata.uid),
            [],
          );
          assert.deepEqual((await getPod(c, other.metadata.name!))?.status ?? {}, other.status ?? {});
        }
      },
      { pullableImages: ['registry.local/sidecar:2'] },
    ));

  it('adopts what a previous kubelet left running without restarting it, and removes the containers of pods deleted meanwhile', async () => {
    const c = await startCluster();
    try {
      const first = await startKubelet(c);
      const web = await createPod(c, 'web', {
        containers: [
          { name: 'app', image: IMAGE },
          { name: 'worker', image: IMAGE },
        ],
      });
      const gone = await createPod(c, 'gone');
      const before = await waitForPod(c, 'web', 'both containers running', (p) => running('app')(p) && running('worker')(p));
      await waitForPod(c, 'gone', 'running', running());
      await first.stop();

      // While no kubelet runs: one pod is force-deleted, one container of the other exits, and the status is lost.
      await c.client.request('DELETE', kindObjectPath(podKind, 'gone', 'default'), {
        body: { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0 },
      });
      assert.equal(await getPod(c, 'gone'), undefined);
      await c.clock.advance(5000);
      first.provider.exitContainer(web.metadata.uid!, 'worker', { exitCode: 1 });
      await c.client.request('PATCH', `${kindObjectPath(podKind, 'web', 'default')}/status`, {
        body: { status: { phase: 'Pending', containerStatuses: null, conditions: null } },
        contentType: 'application/merge-patch+json',
      });

      const second = await startKubelet(c);
      try {
        const after = await waitForPod(
          c,
          'web',
          'reported again, worker restarted',
          (p) => p.status?.phase === 'Running' && running('app', 0)(p) && running('worker', 1)(p),
        );
        // The running container is the same one: adopted, not restarted.
        assert.equal(statusOf(after, 'app')!.containerID, statusOf(before, 'app')!.containerID);
        assert.deepEqual(statusOf(after, 'app')!.state, statusOf(before, 'app')!.state);
        assert.equal(statusOf(after, 'worker')!.lastState?.terminated?.exitCode, 1);
        assert.equal(statusOf(after, 'worker')!.lastState?.terminated?.containerID, statusOf(before, 'worker')!.containerID);
        assert.equal(after.status?.conditions?.find((x) => x.type === 'Ready')?.status, 'True');
        const webCalls = second.provider.calls.filter((x) => x.uid === web.metadata.uid);
        assert.deepEqual(
          webCalls.map((x) => [x.method, x.action?.type, x.action?.container]),
          [['updatePod', 'start', 'worker']],
        );

        await waitFor(() => second.provider.calls.some((x) => x.method === 'deletePod' && x.uid === gone.metadata.uid), {
          timeoutMs: 5000,
          intervalMs: 5,
          description: 'the orphan sweep',
        });
        assert.equal(await second.provider.getPod(gone.metadata.uid!), undefined);
        assert.equal(second.provider.calls.find((x) => x.uid === gone.metadata.uid)?.gracePeriodSeconds, MIN_GRACE_SECONDS);
        assert.deepEqual(
          (await second.provider.listPods()).map((p) => p.name),
          ['web'],
        );
        assert.deepEqual(
          second.logs.filter((l) => /failed|retrying/.test(l)),
          [],
        );
      } finally {
        await second.stop();
      }
    } finally {
      await c.close();
    }
  });

  it('does not take a pod that starts while the orphan sweep lists the runtime for an orphan', async () => {
    // Docker answers a container list some time after it was asked; a pod synced meanwhile is not an orphan.
    class SlowListProvider extends FakeProvider {
      gate: Promise<void> = Promise.resolve();
      listed = 0;
      answered = 0;
      override async listPods() {
        this.listed++;
        await this.gate;
        const pods = await super.listPods();
        this.answered++;
        return pods;
      }
    }
    const c = await startCluster();
    try {
      const provider = new SlowListProvider({ backend: c.backend, now: () => c.clock.date() });
      let release!: () => void;
      provider.gate = new Promise((resolve) => {
        release = resolve;
      });
      await withKubeletOn(c, { provider }, async ({ kubelet }) => {
        await waitFor(() => provider.listed === 1, { timeoutMs: 5000, intervalMs: 2, description: 'the first sweep to list' });
        const pod = await createPod(c, 'web');
        const before = await waitForPod(c, 'web', 'running', running());
        release();
        await waitFor(() => provider.answered === 1, { timeoutMs: 5000, intervalMs: 2, description: 'the sweep to get its list' });
        await kubelet.whenIdle();
        assert.deepEqual(
          provider.calls.filter((x) => x.method === 'deletePod'),
          [],
        );
        assert.equal(statusOf(await getPod(c, 'web'))?.containerID, statusOf(before)?.containerID);
        assert.deepEqual(starts(provider, pod.metadata.uid!), [0]);
      });
    } finally {
      await c.close();
    }
  });

  it('restarts a crashing container under Always with backoff 10 s doubling to 5 min, shown as CrashLoopBackOff, reset after 10 min running', () =>
    withKubelet(async (c, { kubelet, provider }) => {
      const pod = await createPod(c, 'crash');
      const uid = pod.metadata.uid!;
      const backoffMessage = (delay: string) => `back-off ${delay} restarting failed container=app pod=crash_default(${uid})`;
      await waitForPod(c, 'crash', 'running', running('app', 0));

      // The first crash restarts at once.
      await c.clock.advance(1000);
      provider.exitContainer(uid, 'app', { exitCode: 1 });
      let seen = await waitForPod(c, 'crash', 'restarted once', running('app', 1));
      const firstCrash = statusOf(seen)!.lastState?.terminated;
      assert.deepEqual([firstCrash?.exitCode, firstCrash?.reason], [1, 'Error']);

      let restarts = 1;
      for (const [delayMs, shown] of [
        [10_000, '10s'],
        [20_000, '20s'],
        [40_000, '40s'],
        [80_000, '1m20s'],
        [160_000, '2m40s'],
        [300_000, '5m0s'],
        [300_000, '5m0s'],
      ] as const) {
        await c.clock.advance(1000);
        const crashedAt = c.clock.date().toISOString();
        provider.exitContainer(uid, 'app', { exitCode: 1 });
        seen = await waitForPod(
          c,
          'crash',
          `CrashLoopBackOff ${shown}`,
          (p) => statusOf(p)?.state?.waiting?.reason === 'CrashLoopBackOff' && statusOf(p)?.state?.waiting?.message === backoffMessage(shown),
        );
        const s = statusOf(seen)!;
        assert.equal(s.restartCount, restarts);
        assert.equal(s.ready, false);
        assert.equal(s.lastState?.terminated?.exitCode, 1);
        assert.equal(s.lastState?.terminated?.finishedAt, crashedAt);
        assert.equal(seen.status?.phase, 'Running', 'a pod that will restart stays Running');
        assert.equal(seen.status?.conditions?.find((x) => x.type === 'Ready')?.status, 'False');

        // Just short of the delay nothing starts, even though resyncs look at the pod meanwhile.
        const before = starts(provider, uid).length;
        await c.clock.advance(delayMs - 1);
        await kubelet.whenIdle();
        assert.equal(starts(provider, uid).length, before, `no restart before ${shown} has passed`);
        assert.equal(statusOf(await getPod(c, 'crash'))?.state?.waiting?.reason, 'CrashLoopBackOff');

        await c.clock.advance(1);
        restarts++;
        await waitForPod(c, 'crash', `restart ${restarts} after ${shown}`, running('app', restarts));
      }
      assert.deepEqual(
        starts(provider, uid),
        Array.from({ length: restarts + 1 }, (_, i) => i),
        'one start per attempt, numbered as restartCount',
      );
      const backOff = await waitForEvent(c, uid, 'BackOff', 'Back-off restarting failed container');
      assert.equal(backOff.type, 'Warning');
      assert.equal(backOff.involvedObject.fieldPath, 'spec.containers{app}');

      // Ten minutes of running earn a clean slate: the next crash restarts at once, the one after waits 10 s.
      await c.clock.advance(600_001);
      provider.exitContainer(uid, 'app', { exitCode: 1 });
      restarts++;
      seen = await waitForPod(c, 'crash', 'restarted at once after a long run', running('app', restarts));
      await c.clock.advance(1000);
      provider.exitContainer(uid, 'app', { exitCode: 1 });
      await waitForPod(c, 'crash', 'back-off 10s again', (p) => statusOf(p)?.state?.waiting?.message === backoffMessage('10s'));
    }));

  describe('restart policies and OOM', () => {
    const cases = [
      { policy: 'OnFailure', exitCode: 0, phase: 'Succeeded', restarted: false, reason: 'Completed' },
      { policy: 'OnFailure', exitCode: 2, phase: 'Running', restarted: true, reason: 'Error' },
      { policy: 'Never', exitCode: 1, phase: 'Failed', restarted: false, reason: 'Error' },
      { policy: 'Never', exitCode: 0, phase: 'Succeeded', restarted: false, reason: 'Completed' },
      { policy: 'Always', exitCode: 0, phase: 'Running', restarted: true, reason: 'Completed' },
      { policy: 'Always', exitCode: 137, oom: true, phase: 'Running', restarted: true, reason: 'OOMKilled' },
      { policy: 'Never', exitCode: 137, oom: true, phase: 'Failed', restarted: false, reason: 'OOMKilled' },
    ] as const;
    for (const t of cases) {
      it(`${t.policy}, exit ${t.exitCode}${'oom' in t ? ' (OOM)' : ''}: ${t.restarted ? 'restarted' : t.phase}`, () =>
        withKubelet(async (c, { kubelet, provider }) => {
          const pod = await createPod(c, 'job', { restartPolicy: t.policy });
          const uid = pod.metadata.uid!;
          const first = await waitForPod(c, 'job', 'running', running());
          await c.clock.advance(3000);
          provider.exitContainer(uid, 'app', { exitCode: t.exitCode, ...('oom' in t ? { reason: 'OOMKilled' } : {}) });

          if (t.restarted) {
            const seen = await waitForPod(c, 'job', 'restarted', running('app', 1));
            const last = statusOf(seen)!.lastState?.terminated;
            assert.deepEqual([last?.exitCode, last?.reason, last?.containerID], [t.exitCode, t.reason, statusOf(first)!.containerID]);
            assert.equal(seen.status?.phase, t.phase);
            return;
          }
          const seen = await waitForPod(c, 'job', t.phase, (p) => p.status?.phase === t.phase);
          const s = statusOf(seen)!;
          assert.deepEqual([s.state?.terminated?.exitCode, s.state?.terminated?.reason, s.restartCount, s.ready], [t.exitCode, t.reason, 0, false]);
          assert.equal(s.state?.terminated?.finishedAt, c.clock.date().toISOString());
          const ready = seen.status?.conditions?.find((x) => x.type === 'Ready');
          assert.deepEqual([ready?.status, ready?.reason], ['False', 'PodCompleted']);
          // A finished pod stays finished: a resync much later starts nothing.
          await c.clock.advance(600_000);
          await kubelet.whenIdle();
          assert.deepEqual(starts(provider, uid), [0]);
          assert.equal((await getPod(c, 'job'))?.status?.phase, t.phase);
        }));
    }
  });

  it('deletes a pod gracefully: kills its containers with the grace period asked for, then removes the object', () =>
    withKubelet(async (c, { provider }) => {
      const pod = await createPod(c, 'web', {
        terminationGracePeriodSeconds: 7,
        containers: [
          { name: 'app', image: IMAGE },
          { name: 'log', image: IMAGE },
        ],
      });
      const uid = pod.metadata.uid!;
      await waitForPod(c, 'web', 'running', (p) => running('app')(p) && running('log')(p));

      // As `kubectl delete pod web --grace-period=3`: shorter than the spec's 7, and it is the one that counts.
      const marked = (await c.client.request('DELETE', kindObjectPath(podKind, 'web', 'default'), {
        body: { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 3 },
      })) as Pod;
      assert.equal(marked.metadata.deletionGracePeriodSeconds, 3, 'a pod on a node is only marked for deletion');
      assert.equal(marked.metadata.deletionTimestamp, '2030-01-01T00:00:03Z');

      await waitFor(async () => (await getPod(c, 'web')) === undefined, { timeoutMs: 5000, intervalMs: 5, description: 'the pod object to go' });
      assert.equal(await provider.getPod(uid), undefined);
      const deletes = provider.calls.filter((x) => x.method === 'deletePod' && x.uid === uid);
      assert.equal(deletes[0]?.gracePeriodSeconds, 3);
      await waitForEvent(c, uid, 'Killing', 'Stopping container app');
      await waitForEvent(c, uid, 'Killing', 'Stopping container log');

      // Deleting what is already gone succeeds (the kubelet does so again when the API's DELETED arrives).
      await provider.deletePod({ uid, namespace: 'default', name: 'web' }, { gracePeriodSeconds: 0 });
      await waitFor(() => provider.calls.filter((x) => x.method === 'deletePod' && x.uid === uid).length >= 3, {
        timeoutMs: 5000,
        intervalMs: 5,
        description: 'the kubelet to see the pod gone',
      });
      assert.deepEqual(await provider.listPods(), []);
    }));

  it('flips Ready with the readiness probe, after failureThreshold failures in a row, without restarting', () =>
    withKubelet(async (c, { provider }) => {
      let ready = false;
      provider.setExecResult({
        container: 'app',
        result: () => (ready ? { exitCode: 0, stdout: '', stderr: '' } : { exitCode: 1, stdout: 'not ready yet', stderr: '' }),
      });
      const pod = await createPod(c, 'web', {
        containers: [{ name: 'app', image: IMAGE, readinessProbe: probe({ exec: { command: ['cat', '/tmp/ready'] }, periodSeconds: 5, failureThreshold: 3 }) }],
      });
      const uid = pod.metadata.uid!;
      const execs = () => provider.calls.filter((x) => x.method === 'exec' && x.uid === uid).length;
      const readyCondition = (p: Pod) => p.status?.conditions?.find((x) => x.type === 'Ready');

      // Not ready until the probe succeeds once; the failure is an Unhealthy event.
      let seen = await waitForPod(c, 'web', 'running, not ready', (p) => running()(p) && readyCondition(p)?.status === 'False');
      assert.deepEqual([readyCondition(seen)?.reason, readyCondition(seen)?.message], ['ContainersNotReady', 'containers with unready status: [app]']);
      assert.equal(statusOf(seen)!.ready, false);
      assert.equal(seen.status?.phase, 'Running');
      const unhealthy = await waitForEvent(c, uid, 'Unhealthy', 'Readiness probe failed: not ready yet');
      assert.equal(unhealthy.type, 'Warning');
      const containerID = statusOf(seen)!.containerID;
      assert.deepEqual(provider.calls.find((x) => x.method === 'exec')?.command, ['cat', '/tmp/ready']);

      ready = true;
      await c.clock.advance(5000);
      seen = await waitForPod(c, 'web', 'Ready', (p) => readyCondition(p)?.status === 'True' && statusOf(p)?.ready === true);
      assert.equal(seen.status?.conditions?.find((x) => x.type === 'ContainersReady')?.status, 'True');

      // Two failures are not enough to turn it unready; the third is.
      ready = false;
      for (let i = 1; i <= 2; i++) {
        const n = execs();
        await c.clock.advance(5000);
        assert.equal(execs(), n + 1, 'one probe per period');
      }
      assert.equal(readyCondition((await getPod(c, 'web'))!)?.status, 'True');
      await c.clock.advance(5000);
      seen = await waitForPod(c, 'web', 'unready again', (p) => readyCondition(p)?.status === 'False');
      assert.equal(statusOf(seen)!.containerID, containerID, 'readiness never restarts a container');
      assert.equal(statusOf(seen)!.restartCount, 0);
      assert.deepEqual(starts(provider, uid), [0]);
    }));

  it('restarts a container whose liveness probe fails, with Unhealthy and Killing events', () =>
    withKubelet(async (c, { provider }) => {
      let healthy = true;
      provider.setExecResult({
        container: 'app',
        result: () => (healthy ? { exitCode: 0, stdout: '', stderr: '' } : { exitCode: 1, stdout: 'unhealthy', stderr: '' }),
      });
      const pod = await createPod(c, 'web', {
        terminationGracePeriodSeconds: 9,
        containers: [{ name: 'app', image: IMAGE, livenessProbe: probe({ exec: { command: ['/healthz'] }, periodSeconds: 10, failureThreshold: 2 }) }],
      });
      const uid = pod.metadata.uid!;
      const first = await waitForPod(c, 'web', 'running', running());
      await waitFor(() => provider.calls.some((x) => x.method === 'exec' && x.uid === uid), {
        timeoutMs: 5000,
        intervalMs: 5,
        description: 'the first liveness probe',
      });

      healthy = false;
      await c.clock.advance(10_000);
      await waitForEvent(c, uid, 'Unhealthy', 'Liveness probe failed: unhealthy');
      assert.deepEqual(starts(provider, uid), [0], 'one failure is below the threshold');
      // The second failure in a row kills it.
      await c.clock.advance(10_000);
      const seen = await waitForPod(c, 'web', 'restarted', running('app', 1));
      const last = statusOf(seen)!.lastState?.terminated;
      assert.deepEqual([last?.exitCode, last?.containerID], [KILLED_EXIT_CODE, statusOf(first)!.containerID]);
      assert.notEqual(statusOf(seen)!.containerID, statusOf(first)!.containerID);
      const kill = provider.calls.find((x) => x.method === 'updatePod' && x.action?.type === 'kill');
      assert.deepEqual(kill?.action, {
        type: 'kill',
        container: 'app',
        gracePeriodSeconds: 9,
        reason: 'Container app failed liveness probe, will be restarted',
      });
      const killing = await waitForEvent(c, uid, 'Killing', 'Container app failed liveness probe, will be restarted');
      assert.equal(killing.involvedObject.fieldPath, 'spec.containers{app}');
      const unhealthy = (await podEvents(c, uid)).find((e) => e.reason === 'Unhealthy')!;
      assert.equal(unhealthy.type, 'Warning');
    }));
});

describe('container lifecycle hooks on the fake provider', () => {
  const ok = { exitCode: 0, stdout: '', stderr: '' };
  const calls = (provider: FakeProvider, uid: string) =>
    provider.calls
      .filter((x) => x.uid === uid)
      .map((x) => (x.method === 'exec' ? `exec ${x.command!.join(' ')}` : x.method === 'updatePod' ? `${x.action!.type} ${x.action!.container}` : x.method));

  it('runs postStart right after the start, and preStop before SIGTERM on deletion, taking the time it took off the grace period', () =>
    withKubelet(async (c, { kubelet, provider }) => {
      const pod = await createPod(c, 'web', {
        terminationGracePeriodSeconds: 10,
        containers: [{ name: 'app', image: IMAGE, lifecycle: { postStart: { exec: { command: ['touch', '/started'] } }, preStop: { sleep: { seconds: 4 } } } }],
      });
      const uid = pod.metadata.uid!;
      await waitForPod(c, 'web', 'running', running());
      assert.deepEqual(calls(provider, uid), ['createPod', 'start app', 'exec touch /started']);
      await kubelet.whenIdle();
      const timers = c.clock.pendingTimers;

      await c.client.request('DELETE', kindObjectPath(podKind, 'web', 'default'));
      await waitForEvent(c, uid, 'Killing', 'Stopping container app');
      // The sleep runs on the kubelet's clock (and a timer for the grace period beside it): nothing is stopped until it is over.
      await waitFor(() => c.clock.pendingTimers >= timers + 2, { timeoutMs: 5000, intervalMs: 2, description: 'the preStop sleep to start' });
      await c.clock.advance(3999);
      assert.ok(!provider.calls.some((x) => x.method === 'deletePod'), 'nothing stopped before the preStop hook ended');
      assert.ok(await getPod(c, 'web'), 'the pod object stays while its hook runs');
      await c.clock.advance(1);
      await waitFor(async () => (await getPod(c, 'web')) === undefined, { timeoutMs: 5000, intervalMs: 5, description: 'the pod object to go' });
      assert.equal(provider.calls.find((x) => x.method === 'deletePod')?.gracePeriodSeconds, 6, '10 s of grace less the 4 the hook took');
    }));

  it('reports a failed preStop hook (FailedPreStopHook) and stops the pod all the same', () =>
    withKubelet(async (c, { provider }) => {
      provider.setExecResult({ container: 'app', result: (command) => (command[0] === '/drain' ? { exitCode: 2, stdout: 'cannot drain', stderr: '' } : ok) });
      const pod = await createPod(c, 'web', { containers: [{ name: 'app', image: IMAGE, lifecycle: { preStop: { exec: { command: ['/drain', 'now'] } } } }] });
      const uid = pod.metadata.uid!;
      await waitForPod(c, 'web', 'running', running());
      await c.client.request('DELETE', kindObjectPath(podKind, 'web', 'default'), { body: { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 3 } });
      await waitFor(async () => (await getPod(c, 'web')) === undefined, { timeoutMs: 5000, intervalMs: 5, description: 'the pod object to go' });
      const failed = await waitForEvent(c, uid, 'FailedPreStopHook');
      assert.equal(failed.type, 'Warning');
      assert.equal(failed.involvedObject.fieldPath, 'spec.containers{app}');
      assert.equal(
        failed.message,
        `Exec lifecycle hook ([/drain now]) for Container "app" in Pod "web_default(${uid})" failed - error: command '/drain now' exited with 2: cannot drain, message: "cannot drain"`,
      );
      // (A second deletePod follows when the kubelet sees the object gone: deleting what is gone is a no-op.)
      assert.deepEqual(calls(provider, uid).slice(0, 4), ['createPod', 'start app', 'exec /drain now', 'deletePod']);
      assert.equal(provider.calls.find((x) => x.method === 'deletePod')?.gracePeriodSeconds, 3);
    }));

  it('kills a container whose postStart hook fails (FailedPostStartHook, Killing) and starts it again after the backoff', () =>
    withKubelet(async (c, { provider }) => {
      let failing = true;
      provider.setExecResult({
        container: 'app',
        result: (command) => (command[0] === '/setup' && failing ? { exitCode: 1, stdout: '', stderr: 'no config' } : ok),
      });
      const pod = await createPod(c, 'web', {
        terminationGracePeriodSeconds: 5,
        containers: [{ name: 'app', image: IMAGE, lifecycle: { postStart: { exec: { command: ['/setup'] } } } }],
      });
      const uid = pod.metadata.uid!;
      const message = `Exec lifecycle hook ([/setup]) for Container "app" in Pod "web_default(${uid})" failed - error: command '/setup' exited with 1: no config, message: "no config"`;
      const seen = await waitForPod(c, 'web', 'PostStartHookError', (p) => statusOf(p)?.state?.waiting?.reason === 'PostStartHookError');
      assert.equal(statusOf(seen)!.state!.waiting!.message, message);
      assert.equal(statusOf(seen)!.lastState?.terminated?.exitCode, KILLED_EXIT_CODE);
      assert.equal(seen.status?.conditions?.find((x) => x.type === 'Ready')?.status, 'False');
      const failed = await waitForEvent(c, uid, 'FailedPostStartHook');
      assert.deepEqual([failed.type, failed.message, failed.involvedObject.fieldPath], ['Warning', message, 'spec.containers{app}']);
      await waitForEvent(c, uid, 'Killing', 'Container app failed post-start hook, will be restarted');
      assert.deepEqual(calls(provider, uid), ['createPod', 'start app', 'exec /setup', 'kill app']);
      const kill = provider.calls.find((x) => x.method === 'updatePod' && x.action?.type === 'kill');
      assert.equal((kill?.action as { gracePeriodSeconds: number } | undefined)?.gracePeriodSeconds, 5);
      assert.ok(!(await podEvents(c, uid)).some((e) => e.reason === 'Failed'), "the hook's own event says it, not a generic Failed");

      // The first failure backs off 10 s, as a crash does; then it starts again, and this time the hook succeeds.
      failing = false;
      await c.clock.advance(9999);
      assert.deepEqual(starts(provider, uid), [0]);
      await c.clock.advance(1);
      await waitForPod(c, 'web', 'running again', running('app', 1));
      assert.deepEqual(calls(provider, uid).slice(-2), ['start app', 'exec /setup']);
    }));

  it('runs the preStop hook before a liveness kill too', () =>
    withKubelet(async (c, { provider }) => {
      let healthy = true;
      // One failure (the threshold) and healthy again, so that the new instance is left running.
      provider.setExecResult({
        container: 'app',
        result: (command) => {
          if (command[0] !== '/healthz' || healthy) return ok;
          healthy = true;
          return { exitCode: 1, stdout: 'sick', stderr: '' };
        },
      });
      const pod = await createPod(c, 'web', {
        terminationGracePeriodSeconds: 9,
        containers: [
          {
            name: 'app',
            image: IMAGE,
            livenessProbe: probe({ exec: { command: ['/healthz'] }, periodSeconds: 10, failureThreshold: 1 }),
            lifecycle: { preStop: { exec: { command: ['/bye'] } } },
          },
        ],
      });
      const uid = pod.metadata.uid!;
      await waitForPod(c, 'web', 'running', running());
      await waitFor(() => provider.calls.some((x) => x.method === 'exec' && x.uid === uid), {
        timeoutMs: 5000,
        intervalMs: 5,
        description: 'the first liveness probe',
      });
      healthy = false;
      await c.clock.advance(10_000);
      await waitForPod(c, 'web', 'restarted', running('app', 1));
      const order = calls(provider, uid).filter((x) => x !== 'exec /healthz');
      assert.deepEqual(order, ['createPod', 'start app', 'exec /bye', 'kill app', 'start app']);
    }));
});
