// Garbage collection: the pure dependent and owner plans, and the collector over a memory store with each propagation policy.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject, OwnerReference } from '../../core/api/meta.js';
import { deploymentKind } from '../../core/api/deployment.js';
import { podKind } from '../../core/api/pod.js';
import { replicaSetKind } from '../../core/api/replicaset.js';
import { NotFoundError } from '../../core/errors.js';
import { MemoryStore } from '../../core/store/memory-store.js';
import { waitFor } from '../../core/wait-for.js';
import { LocalClient } from '../api-server/local-client.js';
import { ObjectService } from '../api-server/object-service.js';
import { ensureSystemNamespaces } from '../api-server/server.js';
import { controllerFixture } from './controller-fixture.js';
import { GarbageCollector, planDependent, planOwner, type OwnerState } from './garbage-collector.js';

const ref = (uid: string, block = false): OwnerReference => ({
  apiVersion: 'apps/v1',
  kind: 'ReplicaSet',
  name: `rs-${uid}`,
  uid,
  controller: true,
  ...(block ? { blockOwnerDeletion: true } : {}),
});
const pod = (name: string, refs: OwnerReference[], deleting = false): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, uid: `pod-${name}`, ownerReferences: refs, ...(deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
});

describe('planDependent', () => {
  const cases: [string, [OwnerReference, OwnerState][], boolean, string][] = [
    ['no owners: nothing', [], false, 'none'],
    ['live owner: nothing', [[ref('a'), 'present']], false, 'none'],
    ['owner gone: delete in the background', [[ref('a'), 'absent']], false, 'delete Background'],
    [
      'all owners gone: delete',
      [
        [ref('a'), 'absent'],
        [ref('b'), 'absent'],
      ],
      false,
      'delete Background',
    ],
    [
      'one owner gone, one live: drop the dangling reference',
      [
        [ref('a'), 'absent'],
        [ref('b'), 'present'],
      ],
      false,
      'removeOwnerRefs a',
    ],
    [
      'foreground owner, another live: drop its reference',
      [
        [ref('a', true), 'waiting'],
        [ref('b'), 'present'],
      ],
      false,
      'removeOwnerRefs a',
    ],
    ['foreground owner, blocking, dependent can own: foreground', [[ref('a', true), 'waiting']], true, 'delete Foreground'],
    ['foreground owner, blocking, dependent owns nothing: background', [[ref('a', true), 'waiting']], false, 'delete Background'],
    ['foreground owner, not blocking: background', [[ref('a'), 'waiting']], true, 'delete Background'],
  ];
  for (const [name, owners, canOwn, want] of cases) {
    it(name, () => {
      const dep = pod(
        'p',
        owners.map(([r]) => r),
      );
      const action = planDependent(
        dep,
        owners.map(([r, state]) => ({ ref: r, state })),
        canOwn,
      );
      const got =
        action.type === 'delete' ? `delete ${action.policy}` : action.type === 'removeOwnerRefs' ? `removeOwnerRefs ${action.uids.join(',')}` : 'none';
      assert.equal(got, want);
    });
  }
  it('a dependent already being deleted: nothing', () => {
    assert.deepEqual(planDependent(pod('p', [ref('a')], true), [{ ref: ref('a'), state: 'absent' }], false), { type: 'none' });
  });
});

describe('planOwner', () => {
  const owner = (finalizers: string[], deleting = true): KubeObject => ({
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name: 'rs-a', uid: 'a', finalizers, ...(deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
  });
  const cases: [string, KubeObject, KubeObject[], string[]][] = [
    ['not being deleted: nothing', owner(['orphan'], false), [pod('x', [ref('a')])], []],
    ['orphan with dependents: unlink each', owner(['orphan']), [pod('x', [ref('a')]), pod('y', [ref('a'), ref('b')])], ['unlink x', 'unlink y']],
    ['orphan, none left: release', owner(['orphan']), [], ['release orphan']],
    ['orphan ignores objects that no longer point here', owner(['orphan']), [pod('x', [ref('b')])], ['release orphan']],
    ['foreground with a blocking dependent: wait', owner(['foregroundDeletion']), [pod('x', [ref('a', true)])], []],
    ['foreground with a blocking dependent being deleted: wait', owner(['foregroundDeletion']), [pod('x', [ref('a', true)], true)], []],
    ['foreground with only non-blocking dependents: release', owner(['foregroundDeletion']), [pod('x', [ref('a')])], ['release foregroundDeletion']],
    ['foreground, none left: release', owner(['foregroundDeletion', 'other']), [], ['release foregroundDeletion']],
    ['other finalizers only: nothing', owner(['other']), [], []],
  ];
  for (const [name, o, deps, want] of cases) {
    it(name, () => {
      const got = planOwner(o, deps).map((a) => (a.type === 'removeOwnerRef' ? `unlink ${a.dependent.metadata.name}` : `release ${a.finalizer}`));
      assert.deepEqual(got, want);
    });
  }
});

async function gone(service: ObjectService, def: typeof podKind | typeof deploymentKind, name: string): Promise<boolean> {
  try {
    await service.get(def, 'default', name);
    return false;
  } catch (err) {
    if (err instanceof NotFoundError) return true;
    throw err;
  }
}

describe('GarbageCollector', () => {
  const rsBody = (name: string) => ({
    metadata: { name },
    spec: {
      replicas: 0,
      selector: { matchLabels: { app: `gc-${name}` } },
      template: { metadata: { labels: { app: `gc-${name}` } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } },
    },
  });
  const podBody = (name: string, owners: KubeObject[], block = false) => ({
    metadata: {
      name,
      labels: { role: 'hand-made' },
      ownerReferences: owners.map((o) => ({
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        name: o.metadata.name!,
        uid: o.metadata.uid!,
        ...(block ? { blockOwnerDeletion: true } : {}),
      })),
    },
    spec: { containers: [{ name: 'c', image: 'busybox' }] },
  });

  async function withCollector(body: (service: ObjectService) => Promise<void>): Promise<void> {
    const service = new ObjectService({ store: new MemoryStore() });
    await ensureSystemNamespaces(service);
    const controller = new AbortController();
    const { client, informers, run } = controllerFixture(new LocalClient(service));
    const running = run(controller.signal, new GarbageCollector({ client, informers }));
    try {
      await body(service);
    } finally {
      controller.abort();
      await running;
    }
  }

  it('background: deleting the owner deletes its dependents; a second live owner keeps one', async () => {
    await withCollector(async (service) => {
      const a = await service.create(replicaSetKind, 'default', rsBody('a'));
      const b = await service.create(replicaSetKind, 'default', rsBody('b'));
      await service.create(podKind, 'default', podBody('only-a', [a]));
      await service.create(podKind, 'default', podBody('a-and-b', [a, b]));
      await service.create(podKind, 'default', podBody('unowned', []));
      await service.delete(replicaSetKind, 'default', 'a');
      await waitFor(() => gone(service, podKind, 'only-a'), { description: 'only-a collected' });
      await waitFor(async () => (await service.get(podKind, 'default', 'a-and-b')).metadata.ownerReferences?.length === 1, {
        description: 'dangling reference dropped',
      });
      const shared = await service.get(podKind, 'default', 'a-and-b');
      assert.equal(shared.metadata.ownerReferences![0]!.uid, b.metadata.uid);
      assert.equal(shared.metadata.deletionTimestamp, undefined);
      assert.ok(!(await gone(service, podKind, 'unowned')));
    });
  });

  it('foreground: the owner stays, marked, until its blocking dependents are gone', async () => {
    await withCollector(async (service) => {
      const a = await service.create(replicaSetKind, 'default', rsBody('a'));
      // A finalizer of someone else holds the dependent, so the owner's wait can be seen.
      await service.create(podKind, 'default', {
        ...podBody('held', [a], true),
        metadata: { ...podBody('held', [a], true).metadata, finalizers: ['test/hold'] },
      });
      const marked = await service.delete(replicaSetKind, 'default', 'a', { propagationPolicy: 'Foreground' });
      assert.ok(marked.metadata.deletionTimestamp);
      assert.deepEqual(marked.metadata.finalizers, ['foregroundDeletion']);
      await waitFor(async () => Boolean((await service.get(podKind, 'default', 'held')).metadata.deletionTimestamp), {
        description: 'dependent marked for deletion',
      });
      assert.ok(!(await gone(service, replicaSetKind, 'a')));
      await service.patch(podKind, 'default', 'held', { metadata: { finalizers: null } });
      await waitFor(() => gone(service, replicaSetKind, 'a'), { description: 'owner removed after its dependent' });
    });
  });

  it('orphan: dependents lose the reference and stay; the owner goes', async () => {
    await withCollector(async (service) => {
      const a = await service.create(replicaSetKind, 'default', rsBody('a'));
      await service.create(podKind, 'default', podBody('x', [a]));
      const marked = await service.delete(replicaSetKind, 'default', 'a', { orphanDependents: true });
      assert.deepEqual(marked.metadata.finalizers, ['orphan']);
      await waitFor(() => gone(service, replicaSetKind, 'a'), { description: 'owner removed' });
      const x = await service.get(podKind, 'default', 'x');
      assert.equal(x.metadata.ownerReferences, undefined);
      assert.equal(x.metadata.deletionTimestamp, undefined);
    });
  });

  for (const policy of ['Background', 'Foreground'] as const) {
    it(`${policy.toLowerCase()}: deleting a Deployment removes its ReplicaSets and their pods, and nothing else`, async () => {
      await withCollector(async (service) => {
        const spec = rsBody('d').spec;
        const d = await service.create(deploymentKind, 'default', { metadata: { name: 'd' }, spec: { selector: spec.selector, template: spec.template } });
        const own = (o: KubeObject, kind: string) => [
          { apiVersion: 'apps/v1', kind, name: o.metadata.name!, uid: o.metadata.uid!, controller: true, blockOwnerDeletion: true },
        ];
        const r = await service.create(replicaSetKind, 'default', { ...rsBody('r'), metadata: { name: 'r', ownerReferences: own(d, 'Deployment') } });
        await service.create(podKind, 'default', { ...podBody('p', []), metadata: { name: 'p', ownerReferences: own(r, 'ReplicaSet') } });
        await service.create(replicaSetKind, 'default', rsBody('bystander'));
        await service.create(podKind, 'default', podBody('bystander-pod', []));
        await service.delete(deploymentKind, 'default', 'd', { propagationPolicy: policy });
        await waitFor(
          async () => (await gone(service, deploymentKind, 'd')) && (await gone(service, replicaSetKind, 'r')) && (await gone(service, podKind, 'p')),
          { description: 'the whole chain removed' },
        );
        assert.ok(!(await gone(service, replicaSetKind, 'bystander')));
        assert.ok(!(await gone(service, podKind, 'bystander-pod')));
      });
    });
  }

  it('a dependent created with an owner that never existed is collected', async () => {
    await withCollector(async (service) => {
      await service.create(podKind, 'default', { ...podBody('stray', []), metadata: { name: 'stray', ownerReferences: [ref('no-such-uid')] } });
      await waitFor(() => gone(service, podKind, 'stray'), { description: 'stray collected' });
    });
  });
});
