// CronJob controller: the thin shell around planCronJob: creates the scheduled Job, replaces or prunes Jobs, writes status on change.
import { isDeepStrictEqual } from 'node:util';
import { cronJobKind, type CronJob } from '../../core/api/cronjob.js';
import { jobKind, type Job } from '../../core/api/job.js';
import type { OwnerReference } from '../../core/api/meta.js';
import { timestamp } from '../../core/api/timestamp.js';
import type { Client } from '../../core/client/client.js';
import { runController } from '../../core/controller/controller.js';
import { objectKey, OWNER_UID_INDEX, type Informer } from '../../core/controller/informer.js';
import type { InformerFactory } from '../../core/controller/informer-factory.js';
import { WorkQueue } from '../../core/controller/work-queue.js';
import { AlreadyExistsError, NotFoundError } from '../../core/errors.js';
import { planCronJob, SCHEDULED_TIMESTAMP_ANNOTATION } from './cronjob-plan.js';
import { recordEvent } from './record-event.js';
import { controllerRef } from './replicaset.js';

function ownerReferenceTo(cj: CronJob): OwnerReference {
  return { apiVersion: 'batch/v1', kind: 'CronJob', name: cj.metadata.name!, uid: cj.metadata.uid!, controller: true, blockOwnerDeletion: true };
}

/** The Job a CronJob runs for one scheduled time: its jobTemplate, named and annotated as Kubernetes does. */
export function jobFromCronJob(cj: CronJob, name: string, scheduledTime: Date): Record<string, unknown> {
  const meta = cj.spec.jobTemplate.metadata;
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name,
      namespace: cj.metadata.namespace,
      ...(meta.labels ? { labels: meta.labels } : {}),
      annotations: { ...meta.annotations, [SCHEDULED_TIMESTAMP_ANNOTATION]: timestamp(scheduledTime) },
      ownerReferences: [ownerReferenceTo(cj)],
    },
    spec: cj.spec.jobTemplate.spec,
  };
}

export interface CronJobControllerOptions {
  client: Client;
  informers: InformerFactory;
  log?: (message: string) => void;
  /** The clock schedules are read against (tests move it). */
  now?: () => Date;
}

export class CronJobController {
  readonly cronJobs: Informer<CronJob>;
  readonly jobs: Informer<Job>;
  readonly queue = new WorkQueue();
  readonly #client: Client;
  readonly #log: (message: string) => void;
  readonly #now: () => Date;

  constructor(options: CronJobControllerOptions) {
    this.#client = options.client;
    this.#log = options.log ?? (() => {});
    this.#now = options.now ?? (() => new Date());
    this.cronJobs = options.informers.informer<CronJob>(cronJobKind);
    this.jobs = options.informers.informer<Job>(jobKind);
    this.cronJobs.addHandlers({ onAdd: (cj) => this.queue.add(objectKey(cj)), onUpdate: (_o, cj) => this.queue.add(objectKey(cj)) });
    const byJob = (job: Job) => {
      const ref = controllerRef(job);
      if (ref?.kind === 'CronJob') this.queue.add(`${job.metadata.namespace}/${ref.name}`);
    };
    this.jobs.addHandlers({ onAdd: byJob, onUpdate: (_o, j) => byJob(j), onDelete: byJob });
  }

  async start(signal: AbortSignal): Promise<void> {
    await runController(
      { name: 'cronjob', queue: this.queue, informers: [this.cronJobs, this.jobs], reconcile: (key) => this.reconcile(key), workers: 2, log: this.#log },
      signal,
    );
  }

  async reconcile(key: string): Promise<{ requeueAfterMs?: number } | void> {
    const cj = this.cronJobs.get(key);
    if (!cj) return;
    const namespace = cj.metadata.namespace!;
    const jobs = this.jobs.byIndex(OWNER_UID_INDEX, cj.metadata.uid!).filter((j) => controllerRef(j)?.uid === cj.metadata.uid);
    const now = this.#now();
    const plan = planCronJob(cj, jobs, now);
    const event = (type: 'Normal' | 'Warning', reason: string, message: string) =>
      void recordEvent({ client: this.#client, object: cj, type, reason, message, component: 'cronjob-controller', now }, this.#log);
    const deleteJob = async (job: Job) => {
      try {
        await this.#client.delete(
          jobKind,
          { namespace, name: job.metadata.name! },
          { preconditions: { uid: job.metadata.uid }, propagationPolicy: 'Background' },
        );
        return true;
      } catch (err) {
        if (!(err instanceof NotFoundError)) throw err;
        return false;
      }
    };
    for (const job of plan.replace) if (await deleteJob(job)) event('Normal', 'SuccessfulDelete', `Deleted job ${job.metadata.name}`);
    let status = plan.status;
    if (plan.run) {
      try {
        const created = (await this.#client.create(jobKind, jobFromCronJob(cj, plan.run.jobName, plan.run.scheduledTime), { namespace })) as Job;
        event('Normal', 'SuccessfulCreate', `Created job ${plan.run.jobName}`);
        const ref = {
          apiVersion: 'batch/v1',
          kind: 'Job',
          name: created.metadata.name,
          namespace,
          uid: created.metadata.uid,
          resourceVersion: created.metadata.resourceVersion,
        };
        status = { ...status, active: [...(status.active ?? []), ref].sort((a, b) => (a.name ?? '').localeCompare(b.name ?? '')) };
      } catch (err) {
        // Made before a restart whose status write was lost: it counts as run.
        if (!(err instanceof AlreadyExistsError)) throw err;
      }
    }
    for (const job of plan.prune) if (await deleteJob(job)) event('Normal', 'SuccessfulDelete', `Deleted job ${job.metadata.name}`);
    // Plan events (missed times, Forbid) are said when the status moves, not on every look.
    if (!isDeepStrictEqual(cj.status ?? {}, status)) {
      const body: Record<string, unknown> = { ...status };
      for (const k of Object.keys(cj.status ?? {})) if (!(k in status)) body[k] = null;
      try {
        await this.#client.patch(cronJobKind, { namespace, name: cj.metadata.name! }, { status: body }, { subresource: 'status' });
      } catch (err) {
        if (!(err instanceof NotFoundError)) throw err;
      }
      for (const e of plan.events) event(e.type, e.reason, e.message);
    }
    if (plan.requeueAfterMs !== undefined) return { requeueAfterMs: plan.requeueAfterMs };
  }
}
