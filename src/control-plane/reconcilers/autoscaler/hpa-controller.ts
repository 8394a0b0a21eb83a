// HorizontalPodAutoscaler controller: every sync period per HPA, reads the target's scale, its pods and their samples, applies the plan.
import { horizontalPodAutoscalerKind, type HorizontalPodAutoscaler } from '../../../core/api/horizontalpodautoscaler.js';
import type { KindDefinition } from '../../../core/api/kind.js';
import { podKind, type Pod } from '../../../core/api/pod.js';
import { kindByApiVersion, kinds } from '../../../core/api/registry.js';
import { scaleOf } from '../../../core/api/scale.js';
import { parseSelector } from '../../../core/api/selector.js';
import type { Client } from '../../../core/client/client.js';
import { runController } from '../../../core/controller/controller.js';
import { NAMESPACE_INDEX, objectKey, type Informer } from '../../../core/controller/informer.js';
import type { InformerFactory } from '../../../core/controller/informer-factory.js';
import { WorkQueue } from '../../../core/controller/work-queue.js';
import { ConflictError, NotFoundError } from '../../../core/errors.js';
import { eventKind } from '../../../core/api/event.js';
import { AutoscalerEvents, type AutoscalerEventSink } from './hpa-events.js';
import {
  metricsNeeded,
  planAutoscaler,
  rescaleFailed,
  sameStatus,
  selectedPods,
  type AutoscalerSettings,
  type HorizontalPodAutoscalerStatus,
  type SamplesRead,
  type ScaleRead,
} from './plan-autoscaler.js';
import type { ResourceMetricsClient } from './resource-metrics.js';
import type { ScalingHistory } from './scaling-behavior.js';

/** Kubernetes' --horizontal-pod-autoscaler-sync-period. */
export const DEFAULT_HPA_SYNC_PERIOD_SECONDS = 15;

export interface HorizontalPodAutoscalerControllerOptions {
  client: Client;
  /** The process's shared informers: HPAs, and Pods selected through the label index. */
  informers: InformerFactory;
  metrics: ResourceMetricsClient;
  /** How often each HPA is looked at (default 15 s). */
  syncPeriodMs?: number;
  settings?: AutoscalerSettings;
  /** Where Events go (default: the client). */
  events?: AutoscalerEventSink;
  now?: () => Date;
  log?: (message: string) => void;
  workers?: number;
}

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** The kind a scaleTargetRef names, if it is one served a scale subresource. */
export function scaleTargetKind(ref: HorizontalPodAutoscaler['spec']['scaleTargetRef']): KindDefinition | { error: string } {
  const def = ref.apiVersion ? kindByApiVersion(ref.apiVersion, ref.kind) : kinds.find((k) => k.kind === ref.kind);
  const group = ref.apiVersion?.includes('/') ? ref.apiVersion.split('/')[0] : '';
  if (!def) return { error: `unable to determine resource for scale target reference: no matches for kind "${ref.kind}" in group "${group}"` };
  if (!def.subresources?.some((s) => s.name === 'scale'))
    return { error: `${def.resource}${def.group ? `.${def.group}` : ''} "${ref.name}" has no scale subresource` };
  return def;
}

export class HorizontalPodAutoscalerController {
  readonly hpas: Informer<HorizontalPodAutoscaler>;
  readonly pods: Informer<Pod>;
  readonly queue = new WorkQueue();
  readonly #o: HorizontalPodAutoscalerControllerOptions;
  readonly #events: AutoscalerEvents;
  readonly #history = new Map<string, ScalingHistory>();
  readonly #now: () => Date;
  readonly #log: (message: string) => void;
  readonly #syncPeriodMs: number;

  constructor(options: HorizontalPodAutoscalerControllerOptions) {
    this.#o = options;
    this.#now = options.now ?? (() => new Date());
    this.#log = options.log ?? (() => {});
    this.#syncPeriodMs = options.syncPeriodMs ?? DEFAULT_HPA_SYNC_PERIOD_SECONDS * 1000;
    const { client } = options;
    this.#events = new AutoscalerEvents({
      sink: options.events ?? {
        create: async (namespace, event) => {
          await client.create(eventKind, event, { namespace });
        },
        patch: async (namespace, name, patch) => {
          await client.patch(eventKind, { namespace, name }, patch);
        },
      },
      now: this.#now,
      log: this.#log,
    });
    this.hpas = options.informers.informer<HorizontalPodAutoscaler>(horizontalPodAutoscalerKind);
    this.pods = options.informers.informer<Pod>(podKind);
    this.hpas.addHandlers({
      onAdd: (hpa) => this.queue.add(objectKey(hpa)),
      // Our own status writes come back as updates: only a changed spec is worth a sync before the period is up.
      onUpdate: (old, hpa) => {
        if (old.metadata.generation !== hpa.metadata.generation) this.queue.add(objectKey(hpa));
      },
      onDelete: (hpa) => {
        this.#history.delete(objectKey(hpa));
        this.#events.forget(hpa.metadata.uid);
      },
    });
    // Pods are read from the cache at each sync; their changes do not trigger one (as in Kubernetes).
  }

  /** Runs the workers once the informers (started by the process's factory) have synced. */
  async start(signal: AbortSignal): Promise<void> {
    await runController(
      {
        name: 'horizontal-pod-autoscaler',
        queue: this.queue,
        informers: [this.hpas, this.pods],
        reconcile: (key) => this.reconcile(key),
        workers: this.#o.workers ?? 4,
        log: this.#log,
      },
      signal,
    );
  }

  async #readScale(hpa: HorizontalPodAutoscaler): Promise<{ read: ScaleRead; def?: KindDefinition }> {
    const def = scaleTargetKind(hpa.spec.scaleTargetRef);
    if ('error' in def) return { read: def };
    try {
      return { read: { scale: scaleOf(await this.#o.client.get(def, { namespace: hpa.metadata.namespace, name: hpa.spec.scaleTargetRef.name })) }, def };
    } catch (err) {
      if (err instanceof NotFoundError) return { read: { error: err.message } };
      throw err;
    }
  }

  /**
   * The pods the plan looks at: those the target's selector picks, from the label index; the
   * namespace's when there is no usable selector (the plan then reports that, and uses none).
   */
  #podsFor(read: ScaleRead, namespace: string): Pod[] {
    const text = 'scale' in read ? read.scale.status.selector : undefined;
    if (text) {
      try {
        return this.pods.select(parseSelector(text), namespace);
      } catch {
        // A bad selector: planAutoscaler words the problem.
      }
    }
    return this.pods.byIndex(NAMESPACE_INDEX, namespace);
  }

  /** One sync of one HPA; throwing retries it with backoff, returning schedules the next sync. */
  async reconcile(key: string): Promise<{ requeueAfterMs: number } | void> {
    const hpa = this.hpas.get(key);
    if (!hpa) {
      this.#history.delete(key);
      return;
    }
    if (hpa.metadata.deletionTimestamp) return;
    const namespace = hpa.metadata.namespace!;
    const now = this.#now();
    const { read, def } = await this.#readScale(hpa);
    const pods = this.#podsFor(read, namespace);
    let metrics: SamplesRead | undefined;
    if (metricsNeeded(hpa, read) && 'scale' in read) {
      const selected = selectedPods(read.scale, pods, namespace);
      if ('pods' in selected) {
        metrics = await this.#o.metrics.podSamples(namespace, selected.pods).then(
          (samples) => ({ samples }),
          (err: unknown) => ({ error: message(err) }),
        );
      }
    }
    let plan = planAutoscaler({ hpa, target: read, pods, metrics, history: this.#history.get(key), now, settings: this.#o.settings });

    if (plan.rescale && def && 'scale' in read) {
      try {
        // Guarded by the version read: a target changed meanwhile (a user's `scale`) is looked at again, never overwritten.
        await this.#o.client.patch(
          def,
          { namespace, name: hpa.spec.scaleTargetRef.name },
          { metadata: { resourceVersion: read.scale.metadata.resourceVersion }, spec: { replicas: plan.rescale.to } },
        );
        this.#log(
          `horizontal-pod-autoscaler ${key}: ${hpa.spec.scaleTargetRef.kind}/${hpa.spec.scaleTargetRef.name} ${plan.rescale.from} -> ${plan.rescale.to} (${plan.rescale.reason})`,
        );
      } catch (err) {
        // Nothing was decided on stale state: retry at once rather than report a failure.
        if (err instanceof ConflictError) throw err;
        plan = rescaleFailed(plan, message(err), now);
      }
    }
    this.#history.set(key, plan.history);
    for (const event of plan.events) await this.#events.record(hpa, event);
    if (!sameStatus(hpa.status, plan.status)) await this.#writeStatus(hpa, plan.status);
    return { requeueAfterMs: this.#syncPeriodMs };
  }

  /** A merge patch of the status, with fields the new status no longer has set to null. */
  async #writeStatus(hpa: HorizontalPodAutoscaler, status: HorizontalPodAutoscalerStatus): Promise<void> {
    const patch: Record<string, unknown> = { ...status };
    for (const field of Object.keys(hpa.status ?? {})) if (!(field in status)) patch[field] = null;
    try {
      await this.#o.client.patch(
        horizontalPodAutoscalerKind,
        { namespace: hpa.metadata.namespace, name: hpa.metadata.name! },
        { status: patch },
        { subresource: 'status' },
      );
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err;
    }
  }
}
