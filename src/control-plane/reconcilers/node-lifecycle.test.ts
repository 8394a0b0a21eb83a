// The node lifecycle decision: heartbeats fresh and stale, lifecycle taints added and removed, pods unready, eviction timing, pods of missing nodes.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { eventKind } from '../../core/api/event.js';
import { type Lease, leaseKind, microTime, NODE_LEASE_NAMESPACE, nodeLease } from '../../core/api/lease.js';
import type { Condition } from '../../core/api/meta.js';
import { namespaceKind } from '../../core/api/namespace.js';
import { nodeKind, type Node, type Taint } from '../../core/api/node.js';
import { podKind, type Pod, type Toleration } from '../../core/api/pod.js';
import { NotFoundError } from '../../core/errors.js';
import { MemoryStore } from '../../core/store/memory-store.js';
import { waitFor } from '../../core/wait-for.js';
import { LocalClient } from '../api-server/local-client.js';
import { ObjectService } from '../api-server/object-service.js';
import { controllerFixture } from './controller-fixture.js';
import { evictionTime, NodeLifecycleReconciler, planNodeLifecycle, type NodeLifecycleAction, type NodeLifecycleInput } from './node-lifecycle.js';

const T0 = Date.parse('2024-05-01T10:00:00Z');
const at = (ms: number) => new Date(T0 + ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const GRACE = 40_000;
const settings = { gracePeriodMs: GRACE, orphanQuarantineMs: 40_000 };

const beat = (type: string, status: 'True' | 'False' | 'Unknown', heartbeat = at(-5000)): Condition => ({
  type,
  status,
  reason: 'Kubelet',
  message: 'kubelet says',
  lastHeartbeatTime: heartbeat,
  lastTransitionTime: at(-60_000),
});
const healthy = (status: 'True' | 'False' | 'Unknown' = 'True') => [
  beat('MemoryPressure', 'False'),
  beat('DiskPressure', 'False'),
  beat('PIDPressure', 'False'),
  beat('Ready', status),
];

function node(options: { conditions?: Condition[]; taints?: Taint[] } = {}): Node {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: 'n1', uid: 'node-uid', resourceVersion: '7', creationTimestamp: at(-3_600_000) },
    spec: options.taints ? { taints: options.taints } : {},
    status: options.conditions ? { conditions: options.conditions } : {},
  } as Node;
}

function pod(name: string, options: { tolerations?: Toleration[]; ready?: 'True' | 'False'; phase?: string; deleting?: boolean } = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', uid: `uid-${name}`, resourceVersion: '9', ...(options.deleting ? { deletionTimestamp: at(30_000) } : {}) },
    spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'busybox' }], ...(options.tolerations ? { tolerations: options.tolerations } : {}) },
    status: {
      phase: options.phase ?? 'Running',
      ...(options.ready
        ? {
            conditions: [
              { type: 'Initialized', status: 'True' },
              { type: 'Ready', status: options.ready, lastTransitionTime: at(-60_000) },
            ],
          }
        : {}),
    },
  } as unknown as Pod;
}

const unreachable = (added = at(0)): Taint[] => [
  { key: 'node.kubernetes.io/unreachable', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute', timeAdded: added },
];
const tolerateUnreachable = (seconds?: number): Toleration => ({
  key: 'node.kubernetes.io/unreachable',
  operator: 'Exists',
  effect: 'NoExecute',
  ...(seconds === undefined ? {} : { tolerationSeconds: seconds }),
});

function plan(overrides: Partial<NodeLifecycleInput>) {
  return planNodeLifecycle({ now: T0, name: 'n1', node: node({ conditions: healthy() }), heartbeatSeenAt: T0 - 5000, pods: [], settings, ...overrides });
}

/** Actions with pods reduced to their names, for readable expectations. */
function summary(actions: readonly NodeLifecycleAction[]): unknown[] {
  return actions.map((a) => ('pod' in a ? { ...a, pod: a.pod.metadata.name } : a));
}

describe('planNodeLifecycle: heartbeats and node state', () => {
  it('a fresh heartbeat: nothing to do, look again when it would go stale', () => {
    const p = plan({});
    assert.deepEqual(p.actions, []);
    assert.equal(p.recheckAfterMs, GRACE - 5000);
  });

  it('a stale heartbeat: every kubelet condition Unknown (heartbeat kept), unreachable taints, a NodeNotReady event', () => {
    const p = plan({ heartbeatSeenAt: T0 - GRACE });
    const unknown = (type: string): Condition => ({
      type,
      status: 'Unknown',
      reason: 'NodeStatusUnknown',
      message: 'Kubelet stopped posting node status.',
      lastHeartbeatTime: at(-5000),
      lastTransitionTime: at(0),
    });
    assert.deepEqual(p.actions, [
      { type: 'setConditions', conditions: ['MemoryPressure', 'DiskPressure', 'PIDPressure', 'Ready'].map(unknown) },
      { type: 'setTaints', taints: unreachable() },
      { type: 'nodeEvent', eventType: 'Normal', reason: 'NodeNotReady', message: 'Node n1 status is now: NodeNotReady' },
    ]);
    assert.equal(p.recheckAfterMs, undefined);
  });

  it('stale and already handled: nothing more', () => {
    const conditions = healthy('Unknown').map((c) => ({ ...c, status: 'Unknown' as const }));
    assert.deepEqual(plan({ heartbeatSeenAt: T0 - GRACE * 3, node: node({ conditions, taints: unreachable(at(-80_000)) }) }).actions, []);
  });

  it('a node that never posted status is Unknown once overdue, with NodeStatusNeverUpdated', () => {
    const p = plan({ node: node(), heartbeatSeenAt: T0 - GRACE });
    const set = p.actions.find((a) => a.type === 'setConditions');
    assert.ok(set && set.type === 'setConditions');
    assert.deepEqual(
      set.conditions.map((c) => [c.type, c.status, c.reason, c.message]),
      ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure'].map((type) => [
        type,
        'Unknown',
        'NodeStatusNeverUpdated',
        'Kubelet never posted node status.',
      ]),
    );
    assert.ok(p.actions.some((a) => a.type === 'setTaints'));
  });

  it('a node that never posted status but is not overdue: left alone', () => {
    const p = plan({ node: node(), heartbeatSeenAt: T0 - 1000 });
    assert.deepEqual(p.actions, []);
    assert.equal(p.recheckAfterMs, GRACE - 1000);
  });

  // Kubelets heartbeat with Leases and write their status only on change: the later of the two decides.
  const leaseCases: [string, Partial<NodeLifecycleInput>, boolean, number?][] = [
    ['a renewed Lease, a status not written for minutes: alive', { heartbeatSeenAt: T0 - 300_000, leaseSeenAt: T0 - 8000 }, false, GRACE - 8000],
    ['a stale Lease, a fresh status: alive', { heartbeatSeenAt: T0 - 2000, leaseSeenAt: T0 - GRACE * 2 }, false, GRACE - 2000],
    ['both stale: Unknown', { heartbeatSeenAt: T0 - 300_000, leaseSeenAt: T0 - GRACE }, true],
    ['a Lease renewed just inside the grace period: alive', { heartbeatSeenAt: T0 - 300_000, leaseSeenAt: T0 - GRACE + 1 }, false, 1],
    ['no Lease and a stale status: Unknown, as before Leases', { heartbeatSeenAt: T0 - GRACE, leaseSeenAt: undefined }, true],
  ];
  for (const [name, input, lost, recheck] of leaseCases) {
    it(name, () => {
      const p = plan(input);
      assert.equal(
        p.actions.some((a) => a.type === 'setConditions'),
        lost,
      );
      assert.equal(
        p.actions.some((a) => a.type === 'setTaints'),
        lost,
      );
      assert.equal(p.recheckAfterMs, recheck);
    });
  }

  it('a kubelet reporting Ready=False: not-ready taints, pods left to the kubelet', () => {
    const p = plan({ node: node({ conditions: healthy('False') }), pods: [pod('a', { ready: 'True', tolerations: [] })] });
    assert.deepEqual(summary(p.actions), [
      {
        type: 'setTaints',
        taints: [
          { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' },
          { key: 'node.kubernetes.io/not-ready', effect: 'NoExecute', timeAdded: at(0) },
        ],
      },
      { type: 'nodeEvent', eventType: 'Normal', reason: 'NodeNotReady', message: 'Node n1 status is now: NodeNotReady' },
      { type: 'evictPod', pod: 'a', taint: { key: 'node.kubernetes.io/not-ready', effect: 'NoExecute', timeAdded: at(0) } },
    ]);
  });

  it('a node that comes back: lifecycle taints removed, other taints kept, a NodeReady event', () => {
    const own: Taint = { key: 'gpu', value: 'yes', effect: 'NoSchedule' };
    const p = plan({ node: node({ conditions: healthy(), taints: [own, ...unreachable(at(-100_000))] }) });
    assert.deepEqual(p.actions, [
      { type: 'setTaints', taints: [own] },
      { type: 'nodeEvent', eventType: 'Normal', reason: 'NodeReady', message: 'Node n1 status is now: NodeReady' },
    ]);
  });

  it('Ready=False after Unknown: the unreachable taints give way to not-ready ones', () => {
    const p = plan({ node: node({ conditions: healthy('False'), taints: unreachable(at(-10_000)) }) });
    assert.deepEqual(p.actions, [
      {
        type: 'setTaints',
        taints: [
          { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' },
          { key: 'node.kubernetes.io/not-ready', effect: 'NoExecute', timeAdded: at(0) },
        ],
      },
    ]);
  });

  it('a NoExecute taint without timeAdded gets one (tolerationSeconds count from it)', () => {
    const p = plan({ node: node({ conditions: healthy(), taints: [{ key: 'maintenance', effect: 'NoExecute' }] }) });
    assert.deepEqual(p.actions, [{ type: 'setTaints', taints: [{ key: 'maintenance', effect: 'NoExecute', timeAdded: at(0) }] }]);
  });
});

describe('planNodeLifecycle: pods on an unreachable node', () => {
  const conditions = healthy().map((c) => ({ ...c, status: 'Unknown' as const }));
  const lost = (taintAge: number) => node({ conditions, taints: unreachable(at(-taintAge)) });

  it('pods whose Ready is not False turn unready; finished pods and pods without the condition are left', () => {
    const p = plan({
      heartbeatSeenAt: T0 - GRACE,
      node: lost(1000),
      pods: [
        pod('ready', { ready: 'True', tolerations: [tolerateUnreachable()] }),
        pod('unready', { ready: 'False', tolerations: [tolerateUnreachable()] }),
        pod('done', { ready: 'True', phase: 'Succeeded', tolerations: [tolerateUnreachable()] }),
        pod('pending', { tolerations: [tolerateUnreachable()] }),
      ],
    });
    assert.deepEqual(summary(p.actions), [
      {
        type: 'markPodNotReady',
        pod: 'ready',
        conditions: [
          { type: 'Initialized', status: 'True' },
          { type: 'Ready', status: 'False', reason: 'NodeNotReady', message: 'Node is not ready', lastTransitionTime: at(0) },
        ],
      },
    ]);
  });

  const evictionCases: [string, Toleration[] | undefined, number, boolean, number | undefined][] = [
    // name, tolerations, taint age (ms), evicted now, recheck (ms)
    ['no toleration: at once', undefined, 0, true, undefined],
    ['a NoSchedule-only toleration does not count', [{ key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoSchedule' }], 0, true, undefined],
    ['tolerationSeconds 0: at once', [tolerateUnreachable(0)], 0, true, undefined],
    ['300 s, 299 s in: not yet, one more second', [tolerateUnreachable(300)], 299_000, false, 1000],
    ['300 s, 300 s in: now', [tolerateUnreachable(300)], 300_000, true, undefined],
    ['5 s, just tainted: in 5 s', [tolerateUnreachable(5)], 0, false, 5000],
    ['no tolerationSeconds: never', [tolerateUnreachable()], 10_000_000, false, undefined],
    ['tolerate everything: never', [{ operator: 'Exists' }], 10_000_000, false, undefined],
  ];
  for (const [name, tolerations, age, evicted, recheck] of evictionCases) {
    it(`eviction: ${name}`, () => {
      const p = plan({ heartbeatSeenAt: T0 - GRACE, node: lost(age), pods: [pod('p', { ...(tolerations ? { tolerations } : {}) })] });
      assert.equal(
        p.actions.some((a) => a.type === 'evictPod'),
        evicted,
      );
      assert.equal(p.recheckAfterMs, recheck);
    });
  }

  it('the earliest of several deadlines wins; a pod already terminating is not evicted again', () => {
    const taints: Taint[] = [...unreachable(at(-1000)), { key: 'maintenance', effect: 'NoExecute', timeAdded: at(-1000) }];
    const tolerations = [tolerateUnreachable(60), { key: 'maintenance', operator: 'Exists' as const, effect: 'NoExecute' as const, tolerationSeconds: 10 }];
    const p = plan({ heartbeatSeenAt: T0 - GRACE, node: node({ conditions, taints }), pods: [pod('p', { tolerations }), pod('going', { deleting: true })] });
    assert.deepEqual(p.actions, []);
    assert.equal(p.recheckAfterMs, 9000);
  });

  it('the eviction names the taint that ran out', () => {
    const p = plan({ heartbeatSeenAt: T0 - GRACE, node: lost(301_000), pods: [pod('p', { tolerations: [tolerateUnreachable(300)] })] });
    assert.deepEqual(summary(p.actions), [{ type: 'evictPod', pod: 'p', taint: unreachable(at(-301_000))[1] }]);
  });

  it('a user NoExecute taint on a healthy node evicts pods that do not tolerate it', () => {
    const taints: Taint[] = [{ key: 'maintenance', effect: 'NoExecute', timeAdded: at(-1000) }];
    const p = plan({
      node: node({ conditions: healthy(), taints }),
      pods: [pod('a'), pod('b', { tolerations: [{ key: 'maintenance', operator: 'Exists' }] })],
    });
    assert.deepEqual(summary(p.actions), [{ type: 'evictPod', pod: 'a', taint: taints[0] }]);
  });
});

describe('planNodeLifecycle: pods bound to a Node that does not exist', () => {
  const pods = [pod('a'), pod('b', { deleting: true })];
  it('a Node seen deleted: its pods are removed at once, terminating ones too', () => {
    const p = plan({ node: undefined, missing: { since: T0, deleted: true }, pods });
    assert.deepEqual(summary(p.actions), [
      { type: 'removeOrphanPod', pod: 'a' },
      { type: 'removeOrphanPod', pod: 'b' },
    ]);
  });
  it('a Node never seen: the pods wait out the quarantine (the Node may be on its way)', () => {
    const p = plan({ node: undefined, missing: { since: T0 - 10_000, deleted: false }, pods });
    assert.deepEqual(p.actions, []);
    assert.equal(p.recheckAfterMs, 30_000);
    assert.equal(plan({ node: undefined, missing: { since: T0 - 40_000, deleted: false }, pods }).actions.length, 2);
  });
  it('no pods: nothing', () => {
    assert.deepEqual(plan({ node: undefined, missing: { since: T0 - 100_000, deleted: true }, pods: [] }), { actions: [] });
  });
});

describe('evictionTime', () => {
  it("counts from the taint's timeAdded, or from now when it has none", () => {
    const p = pod('p', { tolerations: [tolerateUnreachable(30)] });
    assert.equal(evictionTime(p, [unreachable(at(-10_000))[1]!], T0).at, T0 + 20_000);
    assert.equal(evictionTime(p, [{ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' }], T0).at, T0 + 30_000);
    assert.equal(evictionTime(p, [], T0).at, Infinity);
  });
});

describe('NodeLifecycleReconciler on a memory store', () => {
  it('marks a silent node Unknown and taints it, evicts what does not tolerate it, and removes the pods of a deleted node', async () => {
    const service = new ObjectService({ store: new MemoryStore(), defaultTolerationSeconds: 300 });
    await service.create(namespaceKind, undefined, { metadata: { name: 'default' } });
    const { client, informers, run } = controllerFixture(new LocalClient(service));
    const stop = new AbortController();
    const running = run(stop.signal, new NodeLifecycleReconciler({ client, informers, gracePeriodSeconds: 0.3, monitorPeriodMs: 100 }));
    const gone = async (name: string) => {
      try {
        await service.get(podKind, 'default', name);
        return false;
      } catch (err) {
        return err instanceof NotFoundError;
      }
    };
    try {
      await service.create(nodeKind, undefined, { metadata: { name: 'n1' } });
      const spec = (tolerations?: unknown[]) => ({
        nodeName: 'n1',
        terminationGracePeriodSeconds: 0,
        containers: [{ name: 'c', image: 'busybox' }],
        ...(tolerations ? { tolerations } : {}),
      });
      await service.create(podKind, 'default', { metadata: { name: 'stays' }, spec: spec() });
      await service.create(podKind, 'default', {
        metadata: { name: 'goes' },
        spec: spec([{ key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 0 }]),
      });
      const lost = await waitFor(
        async () => {
          const n = (await service.get(nodeKind, undefined, 'n1')) as Node;
          return n.spec?.taints?.some((t) => t.key === 'node.kubernetes.io/unreachable' && t.effect === 'NoExecute') ? n : undefined;
        },
        { description: 'the unreachable taint' },
      );
      assert.equal(lost.status?.conditions?.find((c) => c.type === 'Ready')?.reason, 'NodeStatusNeverUpdated');
      await waitFor(() => gone('goes'), { description: 'pod goes to be evicted' });
      assert.equal(await gone('stays'), false, 'the default 300 s toleration holds it');
      const evictions = (await service.list(eventKind, 'default', { fieldSelector: 'reason=TaintManagerEviction' })).items;
      assert.deepEqual(
        evictions.map((e) => e.message),
        ['Marking for deletion Pod default/goes'],
      );

      await service.delete(nodeKind, undefined, 'n1');
      await waitFor(() => gone('stays'), { description: "the deleted node's pod to be removed" });
    } finally {
      stop.abort();
      await running;
    }
  });

  it('keeps a node whose Lease is renewed alive without status writes, and marks it Unknown once the renewals stop', async () => {
    const service = new ObjectService({ store: new MemoryStore() });
    await service.create(namespaceKind, undefined, { metadata: { name: NODE_LEASE_NAMESPACE } });
    const { client, informers, run } = controllerFixture(new LocalClient(service));
    const stop = new AbortController();
    const running = run(stop.signal, new NodeLifecycleReconciler({ client, informers, gracePeriodSeconds: 0.3, monitorPeriodMs: 50 }));
    const taintedAt = async () =>
      ((await service.get(nodeKind, undefined, 'n1')) as Node).spec?.taints?.some((t) => t.key === 'node.kubernetes.io/unreachable');
    try {
      const now = new Date();
      await service.create(nodeKind, undefined, {
        metadata: { name: 'n1' },
        status: { conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: now.toISOString(), lastTransitionTime: now.toISOString() }] },
      });
      await service.create(leaseKind, NODE_LEASE_NAMESPACE, nodeLease({ nodeName: 'n1', now }));
      // Renewed every 50 ms for four grace periods: the status, never rewritten, does not matter.
      const until = Date.now() + 1200;
      while (Date.now() < until) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        const lease = (await service.get(leaseKind, NODE_LEASE_NAMESPACE, 'n1')) as Lease;
        await service.replace(leaseKind, NODE_LEASE_NAMESPACE, 'n1', { ...lease, spec: { ...lease.spec, renewTime: microTime(new Date()) } });
        assert.equal(await taintedAt(), undefined, 'a node renewing its Lease is not tainted');
      }
      await waitFor(taintedAt, { timeoutMs: 5000, description: 'the unreachable taint once the Lease is no longer renewed' });
      const ready = ((await service.get(nodeKind, undefined, 'n1')) as Node).status?.conditions?.find((c) => c.type === 'Ready');
      assert.equal(ready?.status, 'Unknown');
    } finally {
      stop.abort();
      await running;
    }
  });

  it('removes the pods of a node never seen once the quarantine is over, and no other', async () => {
    const service = new ObjectService({ store: new MemoryStore() });
    await service.create(namespaceKind, undefined, { metadata: { name: 'default' } });
    const { client, informers, run } = controllerFixture(new LocalClient(service));
    const stop = new AbortController();
    const running = run(stop.signal, new NodeLifecycleReconciler({ client, informers, orphanQuarantineMs: 300, monitorPeriodMs: 100 }));
    const spec = (nodeName?: string) => ({
      ...(nodeName ? { nodeName } : {}),
      terminationGracePeriodSeconds: 0,
      containers: [{ name: 'c', image: 'busybox' }],
    });
    try {
      await service.create(nodeKind, undefined, { metadata: { name: 'n1' } });
      await service.create(podKind, 'default', { metadata: { name: 'on-n1' }, spec: spec('n1') });
      await service.create(podKind, 'default', { metadata: { name: 'unbound' }, spec: spec() });
      await service.create(podKind, 'default', { metadata: { name: 'ghost-pod' }, spec: spec('ghost') });
      await waitFor(
        async () => {
          try {
            await service.get(podKind, 'default', 'ghost-pod');
            return false;
          } catch (err) {
            return err instanceof NotFoundError;
          }
        },
        { description: 'the pod of the node never seen to be removed' },
      );
      assert.deepEqual((await service.list(podKind, 'default')).items.map((p) => p.metadata.name).sort(), ['on-n1', 'unbound']);
    } finally {
      stop.abort();
      await running;
    }
  });
});
