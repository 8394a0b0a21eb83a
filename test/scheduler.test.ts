// The scheduler in a real master (etcd, API server): Nodes made by hand, pods spread, anti-affinity, nodeSelector and tolerations, a pod that fits nowhere until a node comes, 409 on a second binding, the CLI's view.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import type { Event } from '../src/core/api/event.js';
import type { Pod } from '../src/core/api/pod.js';
import type { Status } from '../src/core/errors.js';
import { waitFor } from '../src/core/wait-for.js';
import { BINARY, startMaster, type MasterProcess } from './helpers/master.js';

/** An answer, its body as the caller says it is (the text where it is not JSON). */
interface Answer<T = unknown> {
  status: number;
  body: T;
}

interface NodeSpec {
  name: string;
  cpu?: string;
  memory?: string;
  labels?: Record<string, string>;
  taints?: { key: string; value?: string; effect: string }[];
}

const ANTI_WEB = {
  podAntiAffinity: {
    requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { app: 'web' } }, topologyKey: 'kubernetes.io/hostname' }],
  },
};

describe('scheduler', () => {
  let master: MasterProcess;

  const call = async <T = unknown>(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<Answer<T>> => {
    const res = await fetch(`${master.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${master.token}`, 'content-type': contentType },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      /* not JSON */
    }
    return { status: res.status, body: parsed as T };
  };
  const ok = (a: Answer, status = 200) => {
    assert.equal(a.status, status, JSON.stringify(a.body));
    return a.body;
  };

  /** A Node as a kubelet would register it: labels and taints, then a Ready status with allocatable. */
  const makeNode = async (n: NodeSpec) => {
    ok(
      await call('POST', '/api/v1/nodes', {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name: n.name, labels: { 'kubernetes.io/hostname': n.name, ...n.labels } },
        spec: { taints: n.taints ?? [] },
      }),
      201,
    );
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const resources = { cpu: n.cpu ?? '4', memory: n.memory ?? '8Gi', pods: '110' };
    ok(
      await call(
        'PATCH',
        `/api/v1/nodes/${n.name}/status`,
        {
          status: {
            capacity: resources,
            allocatable: resources,
            conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', lastHeartbeatTime: now, lastTransitionTime: now }],
          },
        },
        'application/merge-patch+json',
      ),
    );
  };
  const makeNamespace = async (name: string) => ok(await call('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } }), 201);
  const makePod = async (
    ns: string,
    name: string,
    spec: Record<string, unknown> = {},
    labels: Record<string, string> = {},
    requests: Record<string, string> = { cpu: '100m', memory: '128Mi' },
  ) =>
    ok(
      await call('POST', `/api/v1/namespaces/${ns}/pods`, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, labels },
        spec: { containers: [{ name: 'c', image: 'busybox:1.35', resources: { requests } }], ...spec },
      }),
      201,
    ) as Pod;
  const getPod = async (ns: string, name: string) => ok(await call('GET', `/api/v1/namespaces/${ns}/pods/${name}`)) as Pod;
  const boundNode = (ns: string, name: string) =>
    waitFor(async () => (await getPod(ns, name)).spec.nodeName, { timeoutMs: 20_000, description: `pod ${ns}/${name} to be bound` });
  const events = async (ns: string, pod: string) =>
    (ok(await call('GET', `/api/v1/namespaces/${ns}/events?fieldSelector=involvedObject.name=${pod}`)) as { items: Event[] }).items;
  const failedScheduling = (ns: string, pod: string) =>
    waitFor(async () => (await events(ns, pod)).find((e) => e.reason === 'FailedScheduling'), {
      timeoutMs: 20_000,
      description: `a FailedScheduling event for ${ns}/${pod}`,
    });
  const cli = (args: string[]) => spawnSync(process.execPath, [BINARY, ...args], { env: master.env, encoding: 'utf8', timeout: 60_000 });

  before(async () => {
    master = await startMaster({ registry: false, extraArgs: ['--scheduler-policy', 'least-allocated'] });
    for (const name of ['n1', 'n2', 'n3']) await makeNode({ name, labels: { pool: 'main' } });
  });
  after(async () => {
    await master?.stop();
  });

  it('spreads pods across the nodes and records where each went', async () => {
    await makeNamespace('spread');
    for (let i = 0; i < 6; i++) await makePod('spread', `p${i}`);
    const placed = await Promise.all(Array.from({ length: 6 }, (_, i) => boundNode('spread', `p${i}`)));
    const counts = Object.fromEntries(['n1', 'n2', 'n3'].map((n) => [n, placed.filter((x) => x === n).length]));
    assert.deepEqual(counts, { n1: 2, n2: 2, n3: 2 }, placed.join(','));
    const pod = await getPod('spread', 'p0');
    assert.equal(pod.status?.conditions?.find((c) => c.type === 'PodScheduled')?.status, 'True');
    const scheduled = await waitFor(async () => (await events('spread', 'p0')).find((e) => e.reason === 'Scheduled'), {
      timeoutMs: 10_000,
      description: 'a Scheduled event',
    });
    assert.equal(scheduled.message, `Successfully assigned spread/p0 to ${pod.spec.nodeName}`);
    assert.equal(scheduled.source?.component, 'default-scheduler');
  });

  it('never puts two pods of an anti-affinity group on one node; the one too many waits with its reason', async () => {
    await makeNamespace('anti');
    for (const name of ['web-a', 'web-b', 'web-c', 'web-d']) await makePod('anti', name, { affinity: ANTI_WEB }, { app: 'web' });
    const fourth = await waitFor(
      async () => {
        const nodes = await Promise.all(['web-a', 'web-b', 'web-c', 'web-d'].map(async (n) => (await getPod('anti', n)).spec.nodeName));
        return nodes.filter(Boolean).length === 3 ? nodes : undefined;
      },
      { timeoutMs: 20_000, description: 'three of the four web pods bound' },
    );
    assert.equal(new Set(fourth.filter(Boolean)).size, 3, `one per node: ${fourth.join(',')}`);
    const pending = ['web-a', 'web-b', 'web-c', 'web-d'][fourth.findIndex((n) => !n)]!;
    const event = await failedScheduling('anti', pending);
    assert.equal(event.type, 'Warning');
    assert.equal(event.message, "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules.");
  });

  it('respects nodeSelector and tolerations', async () => {
    await makeNamespace('select');
    await makeNode({ name: 'gpu1', labels: { accel: 'gpu' }, taints: [{ key: 'gpu', value: 'yes', effect: 'NoSchedule' }] });
    await makePod('select', 'wants-gpu', { nodeSelector: { accel: 'gpu' } });
    await makePod('select', 'tolerates-gpu', {
      nodeSelector: { accel: 'gpu' },
      tolerations: [{ key: 'gpu', operator: 'Equal', value: 'yes', effect: 'NoSchedule' }],
    });
    await makePod('select', 'main-only', { nodeSelector: { pool: 'main' } });
    assert.equal(await boundNode('select', 'tolerates-gpu'), 'gpu1');
    assert.match(await boundNode('select', 'main-only'), /^n[123]$/);
    const event = await failedScheduling('select', 'wants-gpu');
    // kube-scheduler's parts, sorted by their reason.
    assert.equal(event.message, "0/4 nodes are available: 3 node(s) didn't match Pod's node affinity/selector, 1 node(s) had untolerated taint {gpu: yes}.");
    assert.equal((await getPod('select', 'wants-gpu')).spec.nodeName, undefined);
    // Pods that do not tolerate the taint never went to gpu1.
    const all = ok(await call('GET', '/api/v1/pods')) as { items: Pod[] };
    const onGpu = all.items.filter((p) => p.spec.nodeName === 'gpu1').map((p) => p.metadata.name);
    assert.deepEqual(onGpu, ['tolerates-gpu']);
  });

  it('keeps a pod that fits nowhere Pending, says why per node, and schedules it when a node that fits appears', async () => {
    await makeNamespace('big');
    await makePod('big', 'huge', {}, {}, { cpu: '1', memory: '64Gi' });
    const event = await failedScheduling('big', 'huge');
    const message = '0/4 nodes are available: 3 Insufficient memory, 1 node(s) had untolerated taint {gpu: yes}.';
    assert.equal(event.message, message);
    const pod = await waitFor(
      async () => {
        const p = await getPod('big', 'huge');
        return p.status?.conditions?.some((c) => c.type === 'PodScheduled' && c.status === 'False') ? p : undefined;
      },
      { timeoutMs: 10_000, description: 'PodScheduled=False on the pod' },
    );
    assert.equal(pod.status?.phase, 'Pending');
    assert.deepEqual(
      pod.status?.conditions?.filter((c) => c.type === 'PodScheduled').map((c) => [c.status, c.reason, c.message]),
      [['False', 'Unschedulable', message]],
    );
    assert.equal(pod.spec.nodeName, undefined);

    const described = cli(['describe', 'pod', 'huge', '-n', 'big']);
    assert.equal(described.status, 0, described.stderr);
    assert.match(described.stdout, /Events:/);
    assert.match(described.stdout, /Warning\s+FailedScheduling\s+.*0\/4 nodes are available/);

    await makeNode({ name: 'big1', memory: '128Gi' });
    assert.equal(await boundNode('big', 'huge'), 'big1');
    const scheduled = await waitFor(async () => (await events('big', 'huge')).find((e) => e.reason === 'Scheduled'), {
      timeoutMs: 10_000,
      description: 'a Scheduled event',
    });
    assert.equal(scheduled.message, 'Successfully assigned big/huge to big1');
    const failures = (await events('big', 'huge')).filter((e) => e.reason === 'FailedScheduling');
    assert.equal(failures.length, 1, 'retries bump one event rather than adding more');
  });

  it('binds a pod once: a second binding is 409, as is a binding of a pod the scheduler placed', async () => {
    await makeNamespace('bind');
    // A pod for another scheduler is left alone by ours: bind it by hand.
    await makePod('bind', 'manual', { schedulerName: 'my-scheduler' });
    const binding = (node: string) => ({ apiVersion: 'v1', kind: 'Binding', metadata: { name: 'manual' }, target: { kind: 'Node', name: node } });
    assert.equal((await getPod('bind', 'manual')).spec.nodeName, undefined);
    const first = await call<Status>('POST', '/api/v1/namespaces/bind/pods/manual/binding', binding('n2'));
    assert.equal(first.status, 201, JSON.stringify(first.body));
    assert.equal(first.body.status, 'Success');
    const second = await call<Status>('POST', '/api/v1/namespaces/bind/pods/manual/binding', binding('n3'));
    assert.equal(second.status, 409);
    assert.equal(second.body.message, 'pod manual is already assigned to node "n2"');
    assert.equal((await getPod('bind', 'manual')).spec.nodeName, 'n2');

    await makePod('bind', 'auto');
    const node = await boundNode('bind', 'auto');
    const again = await call<Status>('POST', '/api/v1/namespaces/bind/pods/auto/binding', { ...binding('n1'), metadata: { name: 'auto' } });
    assert.equal(again.status, 409);
    assert.equal(again.body.message, `pod auto is already assigned to node "${node}"`);
  });

  it('shows the node in get pods -o wide', () => {
    const res = cli(['get', 'pods', '-n', 'select', '-o', 'wide']);
    assert.equal(res.status, 0, res.stderr);
    const header = res.stdout.split('\n')[0]!;
    assert.match(header, /\bNODE\b/);
    const row = res.stdout.split('\n').find((l) => l.startsWith('tolerates-gpu'))!;
    assert.match(row, /\bgpu1\b/);
    const pendingRow = res.stdout.split('\n').find((l) => l.startsWith('wants-gpu'))!;
    assert.match(pendingRow, /Pending.*<none>/);
  });
});
