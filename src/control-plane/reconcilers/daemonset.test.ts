// DaemonSet controller shell over a memory store: a pod per node, a node that joins later, a cordoned node, a template change rolled out.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CONTROLLER_REVISION_HASH_LABEL, daemonSetKind, type DaemonSet } from '../../core/api/daemonset.js';
import { nodeKind } from '../../core/api/node.js';
import { podKind, type Pod } from '../../core/api/pod.js';
import { MemoryStore } from '../../core/store/memory-store.js';
import { waitFor } from '../../core/wait-for.js';
import { LocalClient } from '../api-server/local-client.js';
import { ObjectService } from '../api-server/object-service.js';
import { ensureSystemNamespaces } from '../api-server/server.js';
import { controllerFixture } from './controller-fixture.js';
import { DaemonSetController } from './daemonset.js';
import { targetNodeName } from './daemonset-plan.js';

describe('DaemonSetController', () => {
  it('keeps one pod per node, follows new and cordoned nodes, and rolls a template change out', async () => {
    const service = new ObjectService({ store: new MemoryStore() });
    await ensureSystemNamespaces(service);
    const controller = new AbortController();
    const { client, informers, run } = controllerFixture(new LocalClient(service));
    const running = run(controller.signal, new DaemonSetController({ client, informers }));
    const pods = async () => ((await service.list(podKind, 'default')).items as Pod[]).filter((p) => !p.metadata.deletionTimestamp);
    const nodesOf = async () => (await pods()).map((p) => targetNodeName(p)).sort();
    try {
      for (const name of ['n1', 'n2']) await service.create(nodeKind, undefined, { metadata: { name } });
      await service.create(daemonSetKind, 'default', {
        metadata: { name: 'agent' },
        spec: {
          selector: { matchLabels: { app: 'agent' } },
          template: { metadata: { labels: { app: 'agent' } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } },
        },
      });
      await waitFor(async () => (await nodesOf()).join() === 'n1,n2', { description: 'a pod on n1 and n2' });

      await service.create(nodeKind, undefined, { metadata: { name: 'n3' } });
      await waitFor(async () => (await nodesOf()).join() === 'n1,n2,n3', { description: 'a pod on the new node n3' });

      await service.patch(nodeKind, undefined, 'n2', {
        spec: { unschedulable: true, taints: [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }] },
      });
      const status = await waitFor(
        async () => {
          const ds = (await service.get(daemonSetKind, 'default', 'agent')) as DaemonSet;
          return ds.status?.desiredNumberScheduled === 3 && ds.status.currentNumberScheduled === 3 ? ds.status : undefined;
        },
        { description: 'status: 3 desired and current' },
      );
      assert.equal(status.observedGeneration, 1);
      assert.deepEqual(await nodesOf(), ['n1', 'n2', 'n3'], 'the cordoned node keeps its pod');

      const before = new Set((await pods()).map((p) => p.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL]));
      assert.equal(before.size, 1);
      await service.patch(daemonSetKind, 'default', 'agent', { spec: { template: { spec: { containers: [{ name: 'c', image: 'busybox:1.36' }] } } } });
      await waitFor(
        async () => {
          const now = await pods();
          return (
            now.length === 3 &&
            now.every((p) => !before.has(p.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL]) && p.spec.containers[0]!.image === 'busybox:1.36')
          );
        },
        { description: 'every pod made from the new template' },
      );
      const rolled = await waitFor(
        async () => {
          const ds = (await service.get(daemonSetKind, 'default', 'agent')) as DaemonSet;
          return ds.status?.updatedNumberScheduled === 3 && ds.status.observedGeneration === 2 ? ds.status : undefined;
        },
        { description: 'status: 3 updated at generation 2' },
      );
      assert.equal(rolled.numberReady, 0, 'no kubelet here: nothing is Ready');
    } finally {
      controller.abort();
      await running;
    }
  });
});
