// ReplicaSet controller: the pure plan (claims, diff, deletion order, status) and the controller over a memory store.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { podKind, type Pod } from '../../core/api/pod.js';
import { replicaSetKind, type ReplicaSet } from '../../core/api/replicaset.js';
import { MemoryStore } from '../../core/store/memory-store.js';
import { waitFor } from '../../core/wait-for.js';
import { LocalClient } from '../api-server/local-client.js';
import { ObjectService } from '../api-server/object-service.js';
import { ensureSystemNamespaces } from '../api-server/server.js';
import { controllerFixture } from './controller-fixture.js';
import { compareByValue, planReplicaSet, podFromTemplate, ReplicaSetController, slowStart, type ReplicaSetAction } from './replicaset.js';

const NOW = new Date('2026-01-01T00:10:00Z');
const RS_UID = 'rs-uid';

function rs(replicas: number, extra: { minReadySeconds?: number; deleting?: boolean; generation?: number } = {}): ReplicaSet {
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: {
      name: 'web',
      namespace: 'ns',
      uid: RS_UID,
      generation: extra.generation ?? 2,
      ...(extra.deleting ? { deletionTimestamp: '2026-01-01T00:09:00Z' } : {}),
    },
    spec: {
      replicas,
      minReadySeconds: extra.minReadySeconds ?? 0,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web', tier: 'front' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } as Pod['spec'] },
    },
    status: { replicas: 0 },
  } as ReplicaSet;
}

interface PodOpts {
  owner?: string | null; // uid of the controller; null: orphan
  labels?: Record<string, string>;
  node?: string;
  phase?: Pod['status']['phase'];
  ready?: string; // Ready since (ISO), or undefined for not Ready
  restarts?: number;
  created?: string;
  deleting?: boolean;
}

function pod(name: string, o: PodOpts = {}): Pod {
  const owner = o.owner === undefined ? RS_UID : o.owner;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'ns',
      uid: `uid-${name}`,
      resourceVersion: '7',
      labels: o.labels ?? { app: 'web', tier: 'front' },
      creationTimestamp: o.created ?? '2026-01-01T00:00:00Z',
      ...(owner
        ? { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: owner === RS_UID ? 'web' : 'other', uid: owner, controller: true }] }
        : {}),
      ...(o.deleting ? { deletionTimestamp: '2026-01-01T00:09:30Z' } : {}),
    },
    spec: { containers: [{ name: 'c', image: 'nginx' }], ...(o.node ? { nodeName: o.node } : {}) },
    status: {
      phase: o.phase ?? 'Running',
      ...(o.ready ? { conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: o.ready }] } : { conditions: [{ type: 'Ready', status: 'False' }] }),
      ...(o.restarts ? { containerStatuses: [{ name: 'c', restartCount: o.restarts }] } : {}),
    },
  } as Pod;
}

const running = (name: string, o: PodOpts = {}) => pod(name, { node: 'n1', ready: '2026-01-01T00:01:00Z', ...o });

function describeActions(actions: ReplicaSetAction[]): string[] {
  return actions.map((a) => {
    switch (a.type) {
      case 'create':
        return `create ${a.count}`;
      case 'delete':
        return `${a.finished ? 'delete-finished' : 'delete'} ${a.pods.map((p) => p.metadata.name).join(',')}`;
      default:
        return `${a.type} ${a.pod.metadata.name}`;
    }
  });
}

describe('planReplicaSet', () => {
  const cases: [string, ReplicaSet, Pod[], string[]][] = [
    ['none yet: create all', rs(3), [], ['create 3']],
    ['enough: nothing', rs(2), [running('a'), running('b')], []],
    ['one short: create one', rs(3), [running('a'), running('b')], ['create 1']],
    ['too many: delete the surplus', rs(1), [running('a', { created: '2026-01-01T00:00:01Z' }), running('b')], ['delete a']],
    ['scale to zero: delete all', rs(0), [running('a'), running('b')], ['delete a,b']],
    ['matching orphan: adopted instead of created', rs(2), [running('a'), running('o', { owner: null })], ['adopt o']],
    ['orphan being deleted: not adopted', rs(1), [running('o', { owner: null, deleting: true })], ['create 1']],
    ['orphan not matching: left alone', rs(1), [running('o', { owner: null, labels: { app: 'db' } })], ['create 1']],
    ['pod of another controller: not ours', rs(1), [running('x', { owner: 'other-uid' })], ['create 1']],
    ['owned pod no longer matching: released and replaced', rs(1), [running('a', { labels: { app: 'debug' } })], ['release a', 'create 1']],
    ['pod being deleted: not active, replaced', rs(2), [running('a'), running('b', { deleting: true })], ['create 1']],
    ['failed pod: replaced and deleted', rs(2), [running('a'), running('f', { phase: 'Failed', ready: undefined })], ['create 1', 'delete-finished f']],
    ['succeeded pod: replaced and deleted', rs(1), [running('s', { phase: 'Succeeded', ready: undefined })], ['create 1', 'delete-finished s']],
    ['RS being deleted: no adoption, no scaling', rs(3, { deleting: true }), [running('a'), running('o', { owner: null })], []],
  ];
  for (const [name, set, pods, want] of cases) {
    it(name, () => assert.deepEqual(describeActions(planReplicaSet(set, pods, NOW).actions), want));
  }

  it('adoption adds a controller reference, release removes only ours', () => {
    const keep = { apiVersion: 'v1', kind: 'ConfigMap', name: 'cm', uid: 'cm-uid' };
    const orphan = running('o', { owner: null });
    orphan.metadata.ownerReferences = [keep];
    const [adopt] = planReplicaSet(rs(1), [orphan], NOW).actions;
    assert.deepEqual(adopt.type === 'adopt' && adopt.ownerReferences, [
      keep,
      { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: RS_UID, controller: true, blockOwnerDeletion: true },
    ]);
    const stray = running('a', { labels: { app: 'x' } });
    stray.metadata.ownerReferences!.push(keep);
    const [release] = planReplicaSet(rs(0), [stray], NOW).actions;
    assert.deepEqual(release.type === 'release' && release.ownerReferences, [keep]);
  });

  it('status counts active, fully labeled, ready and available pods and the generation', () => {
    const pods = [
      running('a'),
      running('b', { labels: { app: 'web' } }), // matches the selector but lacks tier
      running('c', { ready: '2026-01-01T00:09:55Z' }), // Ready 5 s ago: not yet available with minReadySeconds 10
      pod('d', { node: 'n1' }), // not Ready
      running('e', { deleting: true }),
    ];
    const plan = planReplicaSet(rs(4, { minReadySeconds: 10, generation: 5 }), pods, NOW);
    assert.deepEqual(plan.status, { replicas: 4, fullyLabeledReplicas: 3, readyReplicas: 3, availableReplicas: 2, observedGeneration: 5 });
    assert.equal(plan.recheckAfterMs, 5_000);
    assert.equal(planReplicaSet(rs(4), pods, NOW).status.availableReplicas, 3);
  });
});

describe('compareByValue (which pods go first on scale-down)', () => {
  const cases: [string, Pod, Pod][] = [
    ['unassigned before assigned', pod('x', { phase: 'Pending' }), running('y')],
    ['Pending before Running', pod('x', { node: 'n1', phase: 'Pending' }), running('y')],
    ['Unknown before Running', running('x', { phase: 'Unknown' }), running('y')],
    ['Pending before Unknown', pod('x', { node: 'n1', phase: 'Pending' }), pod('y', { node: 'n1', phase: 'Unknown' })],
    ['not Ready before Ready', pod('x', { node: 'n1' }), running('y')],
    ['Ready more recently before Ready longer', running('x', { ready: '2026-01-01T00:05:00Z' }), running('y')],
    ['more restarts before fewer', running('x', { restarts: 3 }), running('y', { restarts: 1 })],
    ['newer before older', running('x', { created: '2026-01-01T00:02:00Z' }), running('y')],
  ];
  for (const [name, lesser, greater] of cases) {
    it(name, () => {
      assert.ok(compareByValue(lesser, greater) < 0);
      assert.ok(compareByValue(greater, lesser) > 0);
    });
  }

  it('scale-down picks the least valuable', () => {
    const pods = [running('old'), pod('pending'), running('restarty', { restarts: 4 }), pod('notready', { node: 'n1' })];
    const [del] = planReplicaSet(rs(1), pods, NOW).actions;
    assert.deepEqual(del.type === 'delete' && del.pods.map((p) => p.metadata.name), ['pending', 'notready', 'restarty']);
  });
});

describe('slowStart', () => {
  it('creates in batches of 1, 2, 4, ...', async () => {
    let inFlight = 0;
    const batches: number[] = [];
    const result = await slowStart(10, async () => {
      inFlight++;
      batches.push(inFlight);
      await Promise.resolve();
      inFlight--;
    });
    assert.deepEqual(result, { created: 10, skipped: 0 });
    assert.equal(Math.max(...batches), 4); // 1 + 2 + 4 + 3
  });

  it('stops after the first batch with a failure', async () => {
    let n = 0;
    const result = await slowStart(10, async () => {
      if (++n === 3) throw new Error('quota');
    });
    assert.equal(result.created, 2);
    assert.equal(result.skipped, 7);
    assert.equal((result.error as Error).message, 'quota');
  });
});

describe('podFromTemplate', () => {
  it('names by generateName, labels from the template, controlled by the ReplicaSet', () => {
    const body = podFromTemplate(rs(1)) as { metadata: Record<string, unknown> };
    assert.equal(body.metadata.generateName, 'web-');
    assert.deepEqual(body.metadata.labels, { app: 'web', tier: 'front' });
    assert.deepEqual(body.metadata.ownerReferences, [
      { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: RS_UID, controller: true, blockOwnerDeletion: true },
    ]);
  });
});

describe('ReplicaSetController', () => {
  it('creates exactly the replicas, replaces a deleted pod, scales down, adopts and writes status', async () => {
    const service = new ObjectService({ store: new MemoryStore() });
    await ensureSystemNamespaces(service);
    const controller = new AbortController();
    const { client, informers, run } = controllerFixture(new LocalClient(service));
    const runningController = run(controller.signal, new ReplicaSetController({ client, informers }));
    const podsOf = async () => (await service.list(podKind, 'default')).items.filter((p) => !p.metadata.deletionTimestamp);
    let max = 0;
    try {
      await service.create(podKind, 'default', { metadata: { name: 'orphan', labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } });
      await service.create(replicaSetKind, 'default', {
        metadata: { name: 'web' },
        spec: {
          replicas: 3,
          selector: { matchLabels: { app: 'web' } },
          template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
        },
      });
      const three = await waitFor(
        async () => {
          const pods = await podsOf();
          max = Math.max(max, pods.length);
          return pods.length === 3 && pods.every((p) => p.metadata.ownerReferences?.[0]?.name === 'web') ? pods : undefined;
        },
        { description: '3 pods owned by web' },
      );
      assert.ok(
        three.some((p) => p.metadata.name === 'orphan'),
        'the orphan was adopted',
      );
      const status = await waitFor(
        async () => {
          const got = (await service.get(replicaSetKind, 'default', 'web')) as ReplicaSet;
          return got.status?.replicas === 3 ? got.status : undefined;
        },
        { description: 'status.replicas 3' },
      );
      assert.equal(status.observedGeneration, 1);

      await service.delete(podKind, 'default', 'orphan');
      await waitFor(async () => (await podsOf()).length === 3 && !(await podsOf()).some((p) => p.metadata.name === 'orphan'), { description: 'a replacement' });

      await service.patch(replicaSetKind, 'default', 'web', { spec: { replicas: 1 } });
      await waitFor(async () => (await podsOf()).length === 1, { description: 'scale down to 1' });
      assert.ok(max <= 3, `never more than 3 pods, saw ${max}`);
    } finally {
      controller.abort();
      await runningController;
    }
  });
});
