// The HPA controller shell over a memory store with a fake metrics client and a manual clock: rescales through the target, status and Events, few writes.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { deploymentKind } from '../../../core/api/deployment.js';
import { eventKind } from '../../../core/api/event.js';
import { horizontalPodAutoscalerKind, type HorizontalPodAutoscaler } from '../../../core/api/horizontalpodautoscaler.js';
import type { KindDefinition } from '../../../core/api/kind.js';
import type { KubeObject } from '../../../core/api/meta.js';
import { podKind, type Pod } from '../../../core/api/pod.js';
import { MemoryStore } from '../../../core/store/memory-store.js';
import { waitFor } from '../../../core/wait-for.js';
import { LocalClient } from '../../api-server/local-client.js';
import { ObjectService, type WriteOptions } from '../../api-server/object-service.js';
import { ensureSystemNamespaces } from '../../api-server/server.js';
import { controllerFixture } from '../controller-fixture.js';
import { HorizontalPodAutoscalerController, scaleTargetKind } from './hpa-controller.js';
import type { PodResourceSample, ResourceMetricsClient } from './resource-metrics.js';

/** Counts the writes the controller makes, by kind and subresource. */
class CountingService extends ObjectService {
  readonly writes: string[] = [];
  override async patch(
    def: KindDefinition,
    namespace: string | undefined,
    name: string,
    patch: Record<string, unknown>,
    options: WriteOptions = {},
  ): Promise<KubeObject> {
    this.writes.push(`patch ${def.resource}${options.subresource ? `/${options.subresource}` : ''}`);
    return super.patch(def, namespace, name, patch, options);
  }

  override async create(def: KindDefinition, namespace: string | undefined, body: Record<string, unknown>): Promise<KubeObject> {
    this.writes.push(`create ${def.resource}`);
    return super.create(def, namespace, body);
  }
}

/** Samples the test sets: millicores per pod, or an error. */
class FakeMetrics implements ResourceMetricsClient {
  cpuMilli = 0;
  failure?: string;
  calls = 0;
  constructor(private readonly clock: () => Date) {}
  async podSamples(_namespace: string, pods: readonly Pod[]): Promise<Map<string, PodResourceSample>> {
    this.calls++;
    if (this.failure) throw new Error(this.failure);
    return new Map(
      pods.map((p) => [
        p.metadata.name!,
        { timestampMs: this.clock().getTime(), windowMs: 10_000, containers: [{ name: 'c', cpuMilli: this.cpuMilli, memoryBytes: 1 }] },
      ]),
    );
  }
}

describe('HorizontalPodAutoscalerController', () => {
  let now = new Date('2026-01-01T00:00:00Z');
  const clock = () => now;
  const service = new CountingService({ store: new MemoryStore() });
  const metrics = new FakeMetrics(clock);
  const { client, informers } = controllerFixture(new LocalClient(service));
  const controller = new HorizontalPodAutoscalerController({ client, informers, metrics, now: clock });
  const stop = new AbortController();
  // Only the informers run: each test syncs by hand.
  let running: Promise<unknown>;
  const hpa = () => service.get(horizontalPodAutoscalerKind, 'default', 'web') as Promise<HorizontalPodAutoscaler>;
  const replicas = async () => ((await service.get(deploymentKind, 'default', 'web')) as { spec: { replicas: number } }).spec.replicas;
  const events = async () => (await service.list(eventKind, 'default')).items as unknown as { reason: string; message: string; count: number }[];
  /** Syncs once the cache has caught up with the store (as the next periodic sync would find it). */
  const sync = async () => {
    const stored = await hpa();
    await waitFor(() => controller.hpas.get('default/web')?.metadata.resourceVersion === stored.metadata.resourceVersion, {
      description: 'the HPA cache to catch up',
    });
    return controller.reconcile('default/web');
  };

  before(async () => {
    await ensureSystemNamespaces(service);
    await service.create(deploymentKind, 'default', {
      metadata: { name: 'web' },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'x' }] } },
      },
    });
    for (const name of ['p0', 'p1']) {
      await service.create(podKind, 'default', {
        metadata: { name, labels: { app: 'web' } },
        spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'x', resources: { requests: { cpu: '1' } } }] },
      });
      await service.patch(
        podKind,
        'default',
        name,
        {
          status: {
            phase: 'Running',
            startTime: '2025-12-31T00:00:00Z',
            conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2025-12-31T00:00:10Z' }],
          },
        },
        { subresource: 'status' },
      );
    }
    await service.create(horizontalPodAutoscalerKind, 'default', {
      metadata: { name: 'web' },
      spec: {
        scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
        minReplicas: 1,
        maxReplicas: 5,
        metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } }],
        behavior: { scaleDown: { stabilizationWindowSeconds: 30 } },
      },
    });
    running = informers.start(stop.signal);
    await informers.whenSynced();
    await waitFor(() => controller.pods.list().filter((p) => p.status?.phase === 'Running').length === 2, { description: 'pods in the cache' });
  });

  after(async () => {
    stop.abort();
    await running;
  });

  it('scales the Deployment up through its scale, records SuccessfulRescale and the status', async () => {
    metrics.cpuMilli = 900;
    service.writes.length = 0;
    assert.deepEqual(await sync(), { requeueAfterMs: 15_000 });
    assert.equal(await replicas(), 4);
    const status = (await hpa()).status!;
    assert.deepEqual([status.currentReplicas, status.desiredReplicas, status.lastScaleTime], [2, 4, '2026-01-01T00:00:00Z']);
    assert.deepEqual(status.currentMetrics, [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 90, averageValue: '900m' } } }]);
    assert.deepEqual(
      (await events()).map((e) => [e.reason, e.message]),
      [['SuccessfulRescale', 'New size: 4; reason: cpu resource utilization (percentage of request) above target']],
    );
    assert.deepEqual(service.writes, ['patch deployments', 'create events', 'patch horizontalpodautoscalers/status']);
  });

  it('writes nothing when nothing changed', async () => {
    // The target now says 4; make the two pods look like plenty at 4.
    metrics.cpuMilli = 500;
    now = new Date(now.getTime() + 15_000);
    await sync();
    service.writes.length = 0;
    now = new Date(now.getTime() + 15_000);
    await sync();
    assert.deepEqual(service.writes, []);
  });

  it('metrics that cannot be had: ScalingActive False, Warning events folded, the size kept', async () => {
    metrics.failure = 'no metrics returned from resource metrics API';
    now = new Date(now.getTime() + 15_000);
    await sync();
    const active = (await hpa()).status!.conditions!.find((c) => c.type === 'ScalingActive')!;
    assert.deepEqual([active.status, active.reason], ['False', 'FailedGetResourceMetric']);
    const before = (await events()).length;
    service.writes.length = 0;
    now = new Date(now.getTime() + 15_000);
    await sync();
    assert.equal((await events()).length, before, 'a repeat within a minute is only counted');
    assert.deepEqual(service.writes, []);
    now = new Date(now.getTime() + 60_000);
    await sync();
    const failed = (await events()).find((e) => e.reason === 'FailedGetResourceMetric')!;
    assert.equal(failed.count, 3);
    assert.equal(await replicas(), 4);
    metrics.failure = undefined;
  });

  it('scales down once the stabilization window has passed', async () => {
    metrics.cpuMilli = 500;
    now = new Date(now.getTime() + 15_000);
    await sync();
    metrics.cpuMilli = 100;
    now = new Date(now.getTime() + 15_000);
    await sync();
    assert.equal(await replicas(), 4, 'held by the window');
    now = new Date(now.getTime() + 31_000);
    await sync();
    assert.equal(await replicas(), 1);
    assert.ok((await events()).some((e) => e.message === 'New size: 1; reason: All metrics below target'));
  });

  it('a missing target: AbleToScale False FailedGetScale', async () => {
    await service.delete(deploymentKind, 'default', 'web');
    now = new Date(now.getTime() + 15_000);
    await sync();
    const able = (await hpa()).status!.conditions!.find((c) => c.type === 'AbleToScale')!;
    assert.deepEqual(
      [able.status, able.reason, able.message],
      ['False', 'FailedGetScale', 'the HPA controller was unable to get the target\'s current scale: deployments.apps "web" not found'],
    );
  });

  it('resolves scale target kinds', () => {
    assert.equal(scaleTargetKind({ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'x' }), scaleTargetKind({ kind: 'ReplicaSet', name: 'x' }));
    assert.deepEqual(scaleTargetKind({ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'x' }), {
      error: 'unable to determine resource for scale target reference: no matches for kind "StatefulSet" in group "apps"',
    });
    assert.deepEqual(scaleTargetKind({ apiVersion: 'v1', kind: 'Pod', name: 'x' }), { error: 'pods "x" has no scale subresource' });
  });
});
