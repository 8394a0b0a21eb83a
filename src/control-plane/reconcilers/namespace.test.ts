// Namespace deletion: the pure plan, and the reconciler emptying a namespace over a memory store.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { podKind } from '../../core/api/pod.js';
import type { Namespace } from '../../core/api/namespace.js';
import type { KubeObject } from '../../core/api/meta.js';
import { namespaceKind } from '../../core/api/namespace.js';
import { MemoryStore } from '../../core/store/memory-store.js';
import { NotFoundError } from '../../core/errors.js';
import { waitFor } from '../../core/wait-for.js';
import { LocalClient } from '../api-server/local-client.js';
import { ObjectService } from '../api-server/object-service.js';
import { ensureSystemNamespaces } from '../api-server/server.js';
import { controllerFixture } from './controller-fixture.js';
import { NamespaceReconciler, planNamespace } from './namespace.js';

const ns = (deleting: boolean, finalizers = ['kubernetes']): Namespace => ({
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: { name: 'team', ...(deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
  spec: { finalizers },
  status: {},
});
const item = (name: string, deleting = false): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, ...(deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
});

describe('planNamespace', () => {
  const cases: [string, Namespace | undefined, KubeObject[], string[]][] = [
    ['absent namespace: nothing', undefined, [], []],
    ['live namespace: nothing', ns(false), [item('a')], []],
    ['deleting with contents: delete each', ns(true), [item('a'), item('b')], ['delete a', 'delete b']],
    ['only objects already deleting: wait', ns(true), [item('a', true)], ['wait']],
    ['mixed: delete the live one', ns(true), [item('a', true), item('b')], ['delete b']],
    ['empty: finalize', ns(true), [], ['finalize']],
    ['already finalized: nothing', ns(true, []), [], []],
  ];
  for (const [name, namespace, items, want] of cases) {
    it(name, () => {
      const actions = planNamespace(namespace, [{ def: podKind, items }]);
      assert.deepEqual(
        actions.map((a) => (a.type === 'delete' ? `delete ${a.name}` : a.type)),
        want,
      );
    });
  }
});

describe('NamespaceReconciler', () => {
  it('deletes everything in a deleted namespace, then the namespace, and nothing else', async () => {
    const service = new ObjectService({ store: new MemoryStore() });
    await ensureSystemNamespaces(service);
    await service.create(namespaceKind, undefined, { metadata: { name: 'team' } });
    const podBody = (name: string) => ({ metadata: { name }, spec: { containers: [{ name: 'c', image: 'busybox' }] } });
    for (const name of ['a', 'b', 'c']) await service.create(podKind, 'team', podBody(name));
    await service.create(podKind, 'default', podBody('bystander'));

    const controller = new AbortController();
    const { client, informers, run } = controllerFixture(new LocalClient(service));
    const running = run(controller.signal, new NamespaceReconciler({ client, informers }));
    try {
      await service.delete(namespaceKind, undefined, 'team');
      await waitFor(
        async () => {
          try {
            await service.get(namespaceKind, undefined, 'team');
            return false;
          } catch (err) {
            return err instanceof NotFoundError;
          }
        },
        { description: 'namespace team to be removed' },
      );
      assert.equal((await service.list(podKind, 'team')).items.length, 0);
      assert.equal((await service.get(podKind, 'default', 'bystander')).metadata.name, 'bystander');
    } finally {
      controller.abort();
      await running;
    }
  });
});
