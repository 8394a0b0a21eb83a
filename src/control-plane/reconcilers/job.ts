// Job controller: the thin shell around planJob: informers, pod creates and deletes, batched status writes, TTL deletion.
import { isDeepStrictEqual } from 'node:util';
import { COMPLETION_INDEX_ANNOTATION, jobKind, type Job } from '../../core/api/job.js';
import type { OwnerReference } from '../../core/api/meta.js';
import { podKind, type Pod } from '../../core/api/pod.js';
import type { Client } from '../../core/client/client.js';
import { runController } from '../../core/controller/controller.js';
import { objectKey, OWNER_UID_INDEX, type Informer } from '../../core/controller/informer.js';
import type { InformerFactory } from '../../core/controller/informer-factory.js';
import { WorkQueue } from '../../core/controller/work-queue.js';
import { NotFoundError } from '../../core/errors.js';
import { ControllerExpectations } from './expectations.js';
import { planJob } from './job-plan.js';
import { recordEvent } from './record-event.js';
import { controllerRef, slowStart } from './replicaset.js';

/** Kubernetes' syncJobBatchPeriod: pod changes within this window make one sync, so one status write. */
export const JOB_SYNC_BATCH_MS = 1000;

export function jobOwnerReference(job: Job): OwnerReference {
  return { apiVersion: 'batch/v1', kind: 'Job', name: job.metadata.name!, uid: job.metadata.uid!, controller: true, blockOwnerDeletion: true };
}

/** The pod a create makes: the template, the Job as controller, and in Indexed mode its index as annotation, label, env and hostname. */
export function jobPodFromTemplate(job: Job, index?: number): Record<string, unknown> {
  const meta = job.spec.template.metadata;
  const spec = job.spec.template.spec;
  const name = job.metadata.name!;
  if (index === undefined) {
    return {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        generateName: `${name}-`,
        namespace: job.metadata.namespace,
        ...(meta.labels ? { labels: meta.labels } : {}),
        ...(meta.annotations ? { annotations: meta.annotations } : {}),
        ownerReferences: [jobOwnerReference(job)],
      },
      spec,
    };
  }
  const withIndex = (c: (typeof spec.containers)[number]) => ({
    ...c,
    env: [...(c.env ?? []).filter((e) => e.name !== 'JOB_COMPLETION_INDEX'), { name: 'JOB_COMPLETION_INDEX', value: String(index) }],
  });
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: `${name}-${index}-`,
      namespace: job.metadata.namespace,
      labels: { ...meta.labels, [COMPLETION_INDEX_ANNOTATION]: String(index) },
      annotations: { ...meta.annotations, [COMPLETION_INDEX_ANNOTATION]: String(index) },
      ownerReferences: [jobOwnerReference(job)],
    },
    spec: {
      ...spec,
      hostname: spec.hostname ?? `${name}-${index}`.slice(0, 63).replace(/-+$/, ''),
      containers: spec.containers.map(withIndex),
      ...(spec.initContainers ? { initContainers: spec.initContainers.map(withIndex) } : {}),
    },
  };
}

export interface JobControllerOptions {
  client: Client;
  informers: InformerFactory;
  log?: (message: string) => void;
  workers?: number;
  now?: () => Date;
  /** Pod changes are gathered this long before a sync (default JOB_SYNC_BATCH_MS). */
  batchMs?: number;
}

export class JobController {
  readonly jobs: Informer<Job>;
  readonly pods: Informer<Pod>;
  readonly queue = new WorkQueue();
  readonly expectations = new ControllerExpectations();
  readonly #client: Client;
  readonly #log: (message: string) => void;
  readonly #workers: number;
  readonly #now: () => Date;
  readonly #batchMs: number;
  readonly #batched = new Map<string, NodeJS.Timeout>();

  constructor(options: JobControllerOptions) {
    this.#client = options.client;
    this.#log = options.log ?? (() => {});
    this.#workers = options.workers ?? 4;
    this.#now = options.now ?? (() => new Date());
    this.#batchMs = options.batchMs ?? JOB_SYNC_BATCH_MS;
    this.jobs = options.informers.informer<Job>(jobKind);
    this.pods = options.informers.informer<Pod>(podKind);
    this.jobs.addHandlers({
      onAdd: (job) => this.queue.add(objectKey(job)),
      onUpdate: (_old, job) => this.queue.add(objectKey(job)),
      onDelete: (job) => this.expectations.forget(objectKey(job)),
    });
    this.pods.addHandlers({
      onAdd: (pod) => {
        const owner = this.#owner(pod);
        if (!owner) return;
        this.expectations.creationObserved(owner);
        this.#enqueueBatched(owner);
      },
      onUpdate: (_old, pod) => {
        const owner = this.#owner(pod);
        if (owner) this.#enqueueBatched(owner);
      },
      onDelete: (pod) => {
        const owner = this.#owner(pod);
        if (!owner) return;
        this.expectations.deletionObserved(owner, objectKey(pod));
        this.#enqueueBatched(owner);
      },
    });
  }

  /** Kubernetes' enqueueSyncJobBatched: the first pod change starts the window, later ones ride along. */
  #enqueueBatched(key: string): void {
    if (this.#batchMs <= 0) {
      this.queue.add(key);
      return;
    }
    if (this.#batched.has(key)) return;
    const timer = setTimeout(() => {
      this.#batched.delete(key);
      this.queue.add(key);
    }, this.#batchMs);
    timer.unref();
    this.#batched.set(key, timer);
  }

  #owner(pod: Pod): string | undefined {
    const ref = controllerRef(pod);
    if (ref?.kind !== 'Job') return undefined;
    const key = `${pod.metadata.namespace}/${ref.name}`;
    return this.jobs.get(key)?.metadata.uid === ref.uid ? key : undefined;
  }

  async start(signal: AbortSignal): Promise<void> {
    signal.addEventListener(
      'abort',
      () => {
        for (const t of this.#batched.values()) clearTimeout(t);
        this.#batched.clear();
      },
      { once: true },
    );
    await runController(
      { name: 'job', queue: this.queue, informers: [this.jobs, this.pods], reconcile: (key) => this.reconcile(key), workers: this.#workers, log: this.#log },
      signal,
    );
  }

  async reconcile(key: string): Promise<{ requeueAfterMs?: number } | void> {
    const job = this.jobs.get(key);
    if (!job) {
      this.expectations.forget(key);
      return;
    }
    if (job.metadata.deletionTimestamp) return;
    const namespace = job.metadata.namespace!;
    const mayScale = this.expectations.satisfied(key);
    const pods = this.pods.byIndex(OWNER_UID_INDEX, job.metadata.uid!).filter((p) => controllerRef(p)?.uid === job.metadata.uid);
    const now = this.#now();
    const plan = planJob(job, pods, now);
    if (plan.deleteJob) {
      try {
        await this.#client.delete(
          jobKind,
          { namespace, name: job.metadata.name! },
          { preconditions: { uid: job.metadata.uid }, propagationPolicy: 'Background' },
        );
        this.#log(`job ${key}: deleted after ttlSecondsAfterFinished`);
      } catch (err) {
        if (!(err instanceof NotFoundError)) throw err;
      }
      return;
    }

    let firstError: unknown;
    if (mayScale && plan.create.length > 0) {
      this.expectations.expect(key, plan.create.length);
      const queue = [...plan.create];
      const result = await slowStart(plan.create.length, async () => {
        const { index } = queue.shift()!;
        try {
          await this.#client.create(podKind, jobPodFromTemplate(job, index), { namespace });
        } catch (err) {
          this.expectations.creationObserved(key);
          throw err;
        }
      });
      if (result.skipped > 0) this.expectations.creationObserved(key, result.skipped);
      if (result.error) firstError = result.error;
      if (result.created > 0) {
        void recordEvent({
          client: this.#client,
          object: job,
          type: 'Normal',
          reason: 'SuccessfulCreate',
          message: `Created ${result.created} pod(s)`,
          component: 'job-controller',
          now,
        });
      }
    }
    if (mayScale && plan.delete.length > 0) {
      this.expectations.expect(
        key,
        0,
        plan.delete.map((p) => objectKey(p)),
      );
      await Promise.all(
        plan.delete.map(async (pod) => {
          try {
            await this.#client.delete(podKind, { namespace, name: pod.metadata.name! }, { preconditions: { uid: pod.metadata.uid } });
          } catch (err) {
            this.expectations.deletionObserved(key, objectKey(pod));
            if (!(err instanceof NotFoundError)) firstError ??= err;
          }
        }),
      );
    }
    // Counts as they will be when the creates and deletes are seen; written only when they changed.
    const status = mayScale ? plan.status : { ...plan.status, active: job.status?.active, terminating: job.status?.terminating };
    if (!mayScale) for (const k of ['active', 'terminating'] as const) if (status[k] === undefined) delete status[k];
    if (!isDeepStrictEqual(job.status ?? {}, status)) {
      try {
        // A merge patch: fields the plan dropped (startTime while suspended) are sent as null.
        const body: Record<string, unknown> = { ...status };
        for (const k of Object.keys(job.status ?? {})) if (!(k in status)) body[k] = null;
        await this.#client.patch(jobKind, { namespace, name: job.metadata.name! }, { status: body }, { subresource: 'status' });
      } catch (err) {
        if (!(err instanceof NotFoundError)) throw err;
      }
      for (const e of plan.events) void recordEvent({ client: this.#client, object: job, ...e, component: 'job-controller', now });
    }
    if (firstError) throw firstError;
    const waits = [plan.requeueAfterMs, mayScale ? undefined : this.expectations.remainingMs(key)].filter((n): n is number => n !== undefined);
    if (waits.length > 0) return { requeueAfterMs: Math.min(...waits) };
  }
}
