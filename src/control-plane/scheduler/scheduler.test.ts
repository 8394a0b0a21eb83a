// The scheduler shell on an in-memory store: which pods it takes, binding with assumed accounting, unschedulable pods parked without a retry storm, retries when the cluster changes.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { eventKind, type Event } from '../../core/api/event.js';
import { nodeKind, type Node } from '../../core/api/node.js';
import { podKind, type Pod } from '../../core/api/pod.js';
import { InformerFactory } from '../../core/controller/informer-factory.js';
import { MemoryStore } from '../../core/store/memory-store.js';
import { waitFor } from '../../core/wait-for.js';
import { LocalClient } from '../api-server/local-client.js';
import { ObjectService } from '../api-server/object-service.js';
import { storePodBinder } from '../api-server/pod-binding.js';
import { ensureSystemNamespaces } from '../api-server/server.js';
import { isPending, nodeChangeMayHelp, pendingPodChanged, Scheduler } from './scheduler.js';
import { node as nodeFixture, pod as podFixture, type FixtureNode, type FixturePod } from './scheduler-fixtures.js';

describe('Scheduler (in-memory store)', () => {
  const stop = new AbortController();
  let service: ObjectService;
  let scheduler: Scheduler;
  let running: Promise<void>;
  let informing: Promise<void>;

  const makeNode = async (n: FixtureNode) => {
    const { status, ...rest } = nodeFixture(n);
    await service.create(nodeKind, undefined, rest as unknown as Record<string, unknown>);
    await service.patch(nodeKind, undefined, n.name, { status: status as Record<string, unknown> }, { subresource: 'status' });
  };
  const makePod = async (p: FixturePod & { schedulerName?: string }) => {
    const { status: _s, metadata, ...rest } = podFixture(p);
    const { uid: _u, ...meta } = metadata;
    const body = { ...rest, metadata: meta };
    if (p.schedulerName) body.spec.schedulerName = p.schedulerName;
    return (await service.create(podKind, 'default', body)) as Pod;
  };
  const getPod = async (name: string) => (await service.get(podKind, 'default', name)) as Pod;
  const boundTo = (name: string) => waitFor(async () => (await getPod(name)).spec.nodeName, { timeoutMs: 10_000, description: `${name} bound` });
  const eventsOf = async (name: string) => (await service.list(eventKind, 'default', { fieldSelector: `involvedObject.name=${name}` })).items as Event[];

  before(async () => {
    service = new ObjectService({ store: new MemoryStore() });
    await ensureSystemNamespaces(service);
    const informers = new InformerFactory({ client: new LocalClient(service.forClient('shared-informers')) });
    const client = service.forClient('scheduler');
    scheduler = new Scheduler({
      client: new LocalClient(client),
      informers,
      bind: storePodBinder(client),
      policy: 'fewest-pods',
      tickMs: 10,
      queue: { initialBackoffMs: 20, maxBackoffMs: 100 },
    });
    // As the master does: components first (their handlers in place), then the informers.
    informing = informers.start(stop.signal);
    running = scheduler.start(stop.signal);
    await makeNode({ name: 'n1', cpu: '2', pods: 10 });
    await makeNode({ name: 'n2', cpu: '2', pods: 10 });
  });
  after(async () => {
    stop.abort();
    await Promise.all([running, informing]);
  });

  it('binds pending pods, spreading them, and leaves pods for other schedulers alone', async () => {
    await makePod({ name: 'a', cpu: '500m' });
    await makePod({ name: 'b', cpu: '500m' });
    await makePod({ name: 'mine', schedulerName: 'someone-else' });
    const nodes = [await boundTo('a'), await boundTo('b')];
    assert.deepEqual(nodes.sort(), ['n1', 'n2']);
    await waitFor(() => scheduler.idle, { timeoutMs: 10_000, description: 'the scheduler idle' });
    assert.equal((await getPod('mine')).spec.nodeName, undefined);
    const scheduled = await waitFor(async () => (await eventsOf('a')).find((e) => e.reason === 'Scheduled'), {
      timeoutMs: 10_000,
      description: 'Scheduled event',
    });
    assert.match(scheduled.message ?? '', /^Successfully assigned default\/a to n[12]$/);
  });

  it('parks a pod that fits nowhere with its reason, without retrying it on its own status write', async () => {
    await makePod({ name: 'huge', cpu: '4' });
    const pod = await waitFor(
      async () => {
        const p = await getPod('huge');
        return p.status?.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'False') ? p : undefined;
      },
      { timeoutMs: 10_000, description: 'PodScheduled=False' },
    );
    const message = '0/2 nodes are available: 2 Insufficient cpu.';
    assert.deepEqual(
      pod.status?.conditions?.map((c) => [c.type, c.status, c.reason, c.message]),
      [['PodScheduled', 'False', 'Unschedulable', message]],
    );
    const event = await waitFor(async () => (await eventsOf('huge')).find((e) => e.reason === 'FailedScheduling'), {
      timeoutMs: 10_000,
      description: 'FailedScheduling',
    });
    assert.deepEqual([event.type, event.message], ['Warning', message]);
    await waitFor(() => scheduler.idle, { timeoutMs: 10_000, description: 'the scheduler idle' });
    assert.equal(scheduler.queue.attempts('default/huge'), 1, 'its own status write did not send it round again');
    assert.equal(scheduler.queue.stats.unschedulable, 1);
  });

  it('tries a parked pod again when a node that fits appears', async () => {
    await makeNode({ name: 'n3', cpu: '8', ready: false });
    // A node that is not ready does not help; once ready, it does.
    await service.patch(nodeKind, undefined, 'n3', { status: { conditions: [{ type: 'Ready', status: 'True' }] } }, { subresource: 'status' });
    assert.equal(await boundTo('huge'), 'n3');
    const pod = await getPod('huge');
    assert.deepEqual(
      pod.status?.conditions?.map((c) => [c.type, c.status]),
      [['PodScheduled', 'True']],
    );
  });

  it('tries again when a bound pod goes and frees room', async () => {
    await makePod({ name: 'filler', cpu: '2', nodeSelector: { 'kubernetes.io/hostname': 'n3' } });
    await makePod({ name: 'later', cpu: '7', nodeSelector: { 'kubernetes.io/hostname': 'n3' } });
    // n3 has no hostname label: the selector fits no node until we label it.
    await service.patch(nodeKind, undefined, 'n3', { metadata: { labels: { 'kubernetes.io/hostname': 'n3' } } });
    assert.equal(await boundTo('filler'), 'n3');
    await waitFor(async () => (await eventsOf('later')).find((e) => /Insufficient cpu/.test(e.message ?? '')), {
      timeoutMs: 10_000,
      description: 'later waiting for cpu',
    });
    await service.delete(podKind, 'default', 'filler', { gracePeriodSeconds: 0 });
    await service.delete(podKind, 'default', 'huge', { gracePeriodSeconds: 0 });
    assert.equal(await boundTo('later'), 'n3');
  });

  it('does not take a pod that is being deleted', async () => {
    const p = await makePod({ name: 'going', schedulerName: 'paused' });
    await service.patch(podKind, 'default', 'going', { metadata: { finalizers: ['test/hold'] } });
    await service.delete(podKind, 'default', 'going');
    assert.equal(
      isPending({ ...p, metadata: { ...p.metadata, deletionTimestamp: '2024-01-01T00:00:00Z' }, spec: { ...p.spec, schedulerName: 'default-scheduler' } }),
      false,
    );
    await service.patch(podKind, 'default', 'going', { metadata: { finalizers: null } });
  });
});

describe('what the scheduler reacts to', () => {
  const base = nodeFixture({ name: 'n' });
  const cases: [string, Node, boolean][] = [
    ['a heartbeat', { ...base, status: { ...base.status, conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: '2024-01-01T00:00:10Z' }] } }, false],
    ['more allocatable', nodeFixture({ name: 'n', cpu: '8' }), true],
    ['a new label', nodeFixture({ name: 'n', labels: { disk: 'ssd' } }), true],
    ['a taint removed', base, true],
    ['uncordoned', base, true],
  ];
  const olds: Node[] = [
    base,
    base,
    base,
    nodeFixture({ name: 'n', taints: [{ key: 'k', effect: 'NoSchedule' }] }),
    nodeFixture({ name: 'n', unschedulable: true }),
  ];
  cases.forEach(([name, next, want], i) => {
    it(`node change: ${name}`, () => assert.equal(nodeChangeMayHelp(olds[i]!, next), want));
  });
  it('node change: becoming ready', () => assert.equal(nodeChangeMayHelp(nodeFixture({ name: 'n', ready: false }), base), true));

  it('pending pod change: status alone is not one', () => {
    const p = podFixture({ name: 'p' });
    assert.equal(pendingPodChanged(p, { ...p, status: { phase: 'Pending', message: 'x' } }), false);
    assert.equal(pendingPodChanged(p, { ...p, metadata: { ...p.metadata, labels: { a: 'b' } } }), true);
    assert.equal(pendingPodChanged(p, { ...p, spec: { ...p.spec, nodeSelector: { a: 'b' } } }), true);
  });
});
