// DaemonSet decisions: node placement (selector, affinity, taints, cordon), per-node creates and deletes, one rolling-update step, status.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CONTROLLER_REVISION_HASH_LABEL, daemonSetSchema, type DaemonSet } from '../../core/api/daemonset.js';
import type { Node, Taint } from '../../core/api/node.js';
import type { Pod } from '../../core/api/pod.js';
import * as v from 'valibot';
import { daemonPod, daemonSetHash, placement, planDaemonSet, targetNodeName, type DaemonSetPlan } from './daemonset-plan.js';

const NOW = new Date('2026-01-01T00:10:00Z');
const UID = 'ds-uid';

function ds(
  extra: { rolling?: { maxUnavailable?: number | string; maxSurge?: number | string }; onDelete?: boolean; spec?: Record<string, unknown> } = {},
): DaemonSet {
  const parsed = v.parse(daemonSetSchema, {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: 'agent', namespace: 'ns', uid: UID, generation: 3 },
    spec: {
      selector: { matchLabels: { app: 'agent' } },
      template: { metadata: { labels: { app: 'agent' } }, spec: { containers: [{ name: 'c', image: 'busybox' }], ...(extra.spec ?? {}) } },
      updateStrategy: extra.onDelete ? { type: 'OnDelete' } : { type: 'RollingUpdate', ...(extra.rolling ? { rollingUpdate: extra.rolling } : {}) },
    },
  });
  return parsed;
}

function node(name: string, o: { labels?: Record<string, string>; taints?: Taint[]; unschedulable?: boolean } = {}): Node {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: o.labels ?? {} },
    spec: { ...(o.taints ? { taints: o.taints } : {}), ...(o.unschedulable ? { unschedulable: true } : {}) },
    status: {},
  } as Node;
}

/** A pod of the DaemonSet on `nodeName`: current template unless `old`, Ready unless told. */
function pod(name: string, nodeName: string, o: { old?: boolean; ready?: boolean; phase?: string; created?: string; bound?: boolean } = {}, set = ds()): Pod {
  const made = daemonPod(set, nodeName) as unknown as Pod;
  return {
    ...made,
    metadata: {
      ...made.metadata,
      name,
      uid: `uid-${name}`,
      creationTimestamp: o.created ?? '2026-01-01T00:00:00Z',
      labels: { ...made.metadata.labels, ...(o.old ? { [CONTROLLER_REVISION_HASH_LABEL]: 'old' } : {}) },
    },
    spec: { ...made.spec, ...(o.bound === false ? {} : { nodeName }) },
    status: {
      phase: (o.phase ?? 'Running') as Pod['status']['phase'],
      conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True', lastTransitionTime: '2026-01-01T00:01:00Z' }],
    },
  } as Pod;
}

function summary(plan: DaemonSetPlan): { create: string[]; delete: string[] } {
  return {
    create: plan.actions.flatMap((a) => (a.type === 'create' ? a.nodes : [])),
    delete: plan.actions.flatMap((a) => (a.type === 'delete' ? a.pods.map((p) => p.metadata.name!) : [])).sort(),
  };
}

describe('placement', () => {
  const cases: { name: string; spec?: Record<string, unknown>; node: Node; run: boolean; stay: boolean }[] = [
    { name: 'a plain node', node: node('a'), run: true, stay: true },
    { name: 'nodeSelector matching', spec: { nodeSelector: { disk: 'ssd' } }, node: node('a', { labels: { disk: 'ssd' } }), run: true, stay: true },
    { name: 'nodeSelector not matching', spec: { nodeSelector: { disk: 'ssd' } }, node: node('a', { labels: { disk: 'hdd' } }), run: false, stay: false },
    {
      name: 'required node affinity not matching',
      spec: {
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['z1'] }] }] },
          },
        },
      },
      node: node('a', { labels: { zone: 'z2' } }),
      run: false,
      stay: false,
    },
    {
      name: 'cordoned (unschedulable taint)',
      node: node('a', { unschedulable: true, taints: [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }] }),
      run: true,
      stay: true,
    },
    { name: 'not ready NoExecute', node: node('a', { taints: [{ key: 'node.kubernetes.io/not-ready', effect: 'NoExecute' }] }), run: true, stay: true },
    { name: 'memory pressure', node: node('a', { taints: [{ key: 'node.kubernetes.io/memory-pressure', effect: 'NoSchedule' }] }), run: true, stay: true },
    {
      name: 'a foreign NoSchedule taint: no new pod, the old one stays',
      node: node('a', { taints: [{ key: 'gpu', effect: 'NoSchedule' }] }),
      run: false,
      stay: true,
    },
    { name: 'a foreign NoExecute taint', node: node('a', { taints: [{ key: 'gpu', effect: 'NoExecute' }] }), run: false, stay: false },
    {
      name: 'a foreign taint tolerated by the template',
      spec: { tolerations: [{ key: 'gpu', operator: 'Exists' }] },
      node: node('a', { taints: [{ key: 'gpu', effect: 'NoExecute' }] }),
      run: true,
      stay: true,
    },
    { name: 'PreferNoSchedule is no bar', node: node('a', { taints: [{ key: 'x', effect: 'PreferNoSchedule' }] }), run: true, stay: true },
  ];
  for (const c of cases) {
    it(c.name, () => {
      assert.deepEqual(placement(ds({ spec: c.spec }), c.node), { shouldRun: c.run, shouldContinueRunning: c.stay });
    });
  }
});

describe('daemonPod', () => {
  it('names only its node in a required affinity, adds the daemon tolerations and the revision label', () => {
    const set = ds({ spec: { tolerations: [{ key: 'gpu', operator: 'Exists' }] } });
    const p = daemonPod(set, 'n2') as unknown as Pod;
    assert.equal(targetNodeName(p), 'n2');
    assert.equal(p.spec.nodeName, undefined);
    assert.equal(p.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL], daemonSetHash(set));
    assert.equal(p.metadata.labels?.['pod-template-generation'], '3');
    const keys = (p.spec.tolerations ?? []).map((t) => `${t.key}:${t.effect ?? ''}`);
    assert.deepEqual(keys, [
      'gpu:',
      'node.kubernetes.io/not-ready:NoExecute',
      'node.kubernetes.io/unreachable:NoExecute',
      'node.kubernetes.io/disk-pressure:NoSchedule',
      'node.kubernetes.io/memory-pressure:NoSchedule',
      'node.kubernetes.io/pid-pressure:NoSchedule',
      'node.kubernetes.io/unschedulable:NoSchedule',
    ]);
    assert.equal(p.metadata.ownerReferences?.[0]?.kind, 'DaemonSet');
  });
});

describe('planDaemonSet', () => {
  const nodes3 = [node('n1'), node('n2'), node('n3')];
  const cases: { name: string; set?: DaemonSet; nodes: Node[]; pods: (set: DaemonSet) => Pod[]; create: string[]; delete: string[] }[] = [
    { name: 'a pod for every node', nodes: nodes3, pods: () => [], create: ['n1', 'n2', 'n3'], delete: [] },
    { name: 'a node that joins later gets its pod', nodes: nodes3, pods: (s) => [pod('a', 'n1', {}, s), pod('b', 'n2', {}, s)], create: ['n3'], delete: [] },
    { name: 'a pod not yet bound counts for its node', nodes: [node('n1')], pods: (s) => [pod('a', 'n1', { bound: false }, s)], create: [], delete: [] },
    {
      name: 'a second pod on a node goes (the oldest stays)',
      nodes: [node('n1')],
      pods: (s) => [pod('young', 'n1', { created: '2026-01-01T00:05:00Z' }, s), pod('old', 'n1', {}, s)],
      create: [],
      delete: ['young'],
    },
    { name: 'a failed pod is replaced', nodes: [node('n1')], pods: (s) => [pod('a', 'n1', { phase: 'Failed' }, s)], create: ['n1'], delete: ['a'] },
    {
      name: 'a node that stops matching loses its pod',
      set: ds({ spec: { nodeSelector: { role: 'edge' } } }),
      nodes: [node('n1', { labels: { role: 'edge' } }), node('n2')],
      pods: (s) => [pod('a', 'n1', {}, s), pod('b', 'n2', {}, s)],
      create: [],
      delete: ['b'],
    },
    {
      name: 'pods on a node that is gone are deleted',
      nodes: [node('n1')],
      pods: (s) => [pod('a', 'n1', {}, s), pod('b', 'gone', {}, s)],
      create: [],
      delete: ['b'],
    },
    {
      name: 'a cordoned node keeps its pod',
      nodes: [node('n1', { unschedulable: true, taints: [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }] })],
      pods: (s) => [pod('a', 'n1', {}, s)],
      create: [],
      delete: [],
    },
    // Rolling updates: one step each.
    {
      name: 'rolling, maxUnavailable 1: one old available pod goes',
      nodes: nodes3,
      pods: (s) => [pod('a', 'n1', { old: true }, s), pod('b', 'n2', { old: true }, s), pod('c', 'n3', { old: true }, s)],
      create: [],
      delete: ['a'],
    },
    {
      name: 'rolling, maxUnavailable 1: nothing while a node has no available pod',
      nodes: nodes3,
      pods: (s) => [pod('a', 'n1', { ready: false }, s), pod('b', 'n2', { old: true }, s), pod('c', 'n3', { old: true }, s)],
      create: [],
      delete: [],
    },
    {
      name: 'rolling: old pods that are not available go at once',
      nodes: nodes3,
      pods: (s) => [pod('a', 'n1', { old: true, ready: false }, s), pod('b', 'n2', { old: true, ready: false }, s), pod('c', 'n3', { old: true }, s)],
      create: [],
      delete: ['a', 'b'],
    },
    {
      name: 'rolling, maxUnavailable 2 of 3',
      set: ds({ rolling: { maxUnavailable: 2 } }),
      nodes: nodes3,
      pods: (s) => [pod('a', 'n1', { old: true }, s), pod('b', 'n2', { old: true }, s), pod('c', 'n3', { old: true }, s)],
      create: [],
      delete: ['a', 'b'],
    },
    {
      name: 'rolling, maxUnavailable 50% of 3 rounds up to 2',
      set: ds({ rolling: { maxUnavailable: '50%' } }),
      nodes: nodes3,
      pods: (s) => [pod('a', 'n1', { old: true }, s), pod('b', 'n2', { old: true }, s), pod('c', 'n3', { old: true }, s)],
      create: [],
      delete: ['a', 'b'],
    },
    {
      name: 'rolling, maxSurge 1: a new pod starts beside one old pod',
      set: ds({ rolling: { maxUnavailable: 0, maxSurge: 1 } }),
      nodes: nodes3,
      pods: (s) => [pod('a', 'n1', { old: true }, s), pod('b', 'n2', { old: true }, s), pod('c', 'n3', { old: true }, s)],
      create: ['n1'],
      delete: [],
    },
    {
      name: 'rolling, maxSurge 1: the old pod waits while the new one is not available',
      set: ds({ rolling: { maxUnavailable: 0, maxSurge: 1 } }),
      nodes: nodes3,
      pods: (s) => [pod('a', 'n1', { old: true }, s), pod('a2', 'n1', { ready: false, created: '2026-01-01T00:05:00Z' }, s), pod('b', 'n2', { old: true }, s)],
      create: ['n3'],
      delete: [],
    },
    {
      name: 'rolling, maxSurge 1: the old pod goes once the new one is available, and the next node surges',
      set: ds({ rolling: { maxUnavailable: 0, maxSurge: 1 } }),
      nodes: nodes3,
      pods: (s) => [
        pod('a', 'n1', { old: true }, s),
        pod('a2', 'n1', { created: '2026-01-01T00:05:00Z' }, s),
        pod('b', 'n2', { old: true }, s),
        pod('c', 'n3', {}, s),
      ],
      create: ['n2'],
      delete: ['a'],
    },
    {
      name: 'OnDelete: old pods stay',
      set: ds({ onDelete: true }),
      nodes: nodes3,
      pods: (s) => [pod('a', 'n1', { old: true }, s), pod('b', 'n2', { old: true }, s), pod('c', 'n3', { old: true }, s)],
      create: [],
      delete: [],
    },
    {
      name: 'OnDelete: a deleted old pod comes back new',
      set: ds({ onDelete: true }),
      nodes: nodes3,
      pods: (s) => [pod('b', 'n2', { old: true }, s), pod('c', 'n3', { old: true }, s)],
      create: ['n1'],
      delete: [],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const set = c.set ?? ds();
      assert.deepEqual(summary(planDaemonSet(set, c.nodes, c.pods(set), NOW)), { create: c.create, delete: c.delete });
    });
  }

  it('counts status per node', () => {
    const set = ds({ spec: { nodeSelector: { role: 'edge' } } });
    const edge = { labels: { role: 'edge' } };
    const plan = planDaemonSet(
      set,
      [node('n1', edge), node('n2', edge), node('n3', edge), node('n4')],
      [pod('a', 'n1', {}, set), pod('b', 'n2', { old: true, ready: false }, set), pod('d', 'n4', {}, set)],
      NOW,
    );
    assert.deepEqual(plan.status, {
      currentNumberScheduled: 2,
      numberMisscheduled: 1,
      desiredNumberScheduled: 3,
      numberReady: 1,
      updatedNumberScheduled: 1,
      numberAvailable: 1,
      numberUnavailable: 2,
      observedGeneration: 3,
    });
  });

  it('adopts orphans that match and leaves pods of other controllers alone', () => {
    const set = ds();
    const orphan = { ...pod('o', 'n1', {}, set), metadata: { ...pod('o', 'n1', {}, set).metadata, ownerReferences: [] } };
    const foreign = pod('f', 'n2', {}, set);
    foreign.metadata.ownerReferences = [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'x', uid: 'other', controller: true }];
    const plan = planDaemonSet(set, [node('n1'), node('n2')], [orphan, foreign], NOW);
    assert.deepEqual(
      plan.actions.map((a) => a.type),
      ['adopt', 'create'],
    );
    assert.deepEqual(summary(plan).create, ['n2']);
  });

  it('asks to look again when a Ready pod reaches minReadySeconds', () => {
    const set = { ...ds(), spec: { ...ds().spec, minReadySeconds: 600 } } as DaemonSet;
    const plan = planDaemonSet(set, [node('n1')], [pod('a', 'n1', {}, set)], NOW);
    assert.equal(plan.status.numberAvailable, 0);
    assert.equal(plan.recheckAfterMs, 60_000);
  });
});

describe('daemonSetSchema', () => {
  const base = {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: 'x' },
    spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i' }] } } },
  };
  it('defaults RollingUpdate with maxUnavailable 1 and maxSurge 0', () => {
    const out = v.parse(daemonSetSchema, base);
    assert.deepEqual(out.spec.updateStrategy, { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } });
    assert.equal(out.spec.revisionHistoryLimit, 10);
  });
  it('refuses maxUnavailable and maxSurge both 0, and a restartPolicy other than Always', () => {
    const zero = { ...base, spec: { ...base.spec, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 0 } } } };
    assert.equal(v.safeParse(daemonSetSchema, zero).success, false);
    const never = { ...base, spec: { ...base.spec, template: { ...base.spec.template, spec: { ...base.spec.template.spec, restartPolicy: 'Never' } } } };
    assert.equal(v.safeParse(daemonSetSchema, never).success, false);
  });
});
