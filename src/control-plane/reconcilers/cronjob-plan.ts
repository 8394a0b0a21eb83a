// The CronJob controller's pure decision: which scheduled time to run now (only the latest missed one), concurrency, history, status.
import { Cron } from 'croner';
import { cronJobZone, splitSchedule, type CronJob, type CronJobStatus, type ObjectReference } from '../../core/api/cronjob.js';
import { hasJobCondition, type Job } from '../../core/api/job.js';
import { timestamp } from '../../core/api/timestamp.js';

/** Kubernetes' limit: more missed start times than this since the last run earns a warning event. */
export const MAX_MISSED_SCHEDULES = 100;
/** Annotation Kubernetes puts on each Job with the time it was scheduled for. */
export const SCHEDULED_TIMESTAMP_ANNOTATION = 'batch.kubernetes.io/cronjob-scheduled-timestamp';

export interface CronJobPlan {
  /** Run the Job of this scheduled time now. */
  run?: { scheduledTime: Date; jobName: string };
  /** Active Jobs to delete first (concurrencyPolicy Replace). */
  replace: Job[];
  /** Finished Jobs beyond the history limits, oldest first. */
  prune: Job[];
  status: CronJobStatus;
  /** When to look again: the next schedule time (plus a little, so the time has passed). */
  requeueAfterMs?: number;
  events: { type: 'Normal' | 'Warning'; reason: string; message: string }[];
}

function parse(cj: CronJob): Cron {
  const zone = cronJobZone(cj.spec);
  return new Cron(splitSchedule(cj.spec.schedule).fields, { paused: true, mode: '5-part', domAndDow: false, ...(zone ? { timezone: zone } : {}) });
}

/** The Job name for a scheduled time: NAME-<minutes since the epoch>, as Kubernetes names them. */
export function jobNameFor(cronJobName: string, scheduledTime: Date): string {
  return `${cronJobName}-${Math.floor(scheduledTime.getTime() / 60_000)}`;
}

/**
 * The most recent schedule time in (earliest, now] and how many there were (counted up to
 * MAX_MISSED_SCHEDULES + 1): a master that was down for a week starts one Job, not thousands.
 */
export function mostRecentScheduleTime(cron: Cron, earliest: Date, now: Date): { time?: Date; missed: number } {
  const latest = cron.previousRuns(1, now)[0];
  if (!latest || latest.getTime() <= earliest.getTime()) return { missed: 0 };
  let missed = 0;
  const first = cron.nextRun(earliest);
  for (let t = first; t && t.getTime() <= now.getTime() && missed <= MAX_MISSED_SCHEDULES; t = cron.nextRun(t)) missed++;
  if (missed > MAX_MISSED_SCHEDULES && first) {
    // Past the limit, estimate from the first interval (as Kubernetes does) rather than walk every time.
    const second = cron.nextRun(first);
    const interval = second ? second.getTime() - first.getTime() : 0;
    if (interval > 0) missed = Math.max(missed, Math.floor((now.getTime() - first.getTime()) / interval) + 1);
  }
  return { time: latest, missed };
}

function finished(job: Job): 'Complete' | 'Failed' | undefined {
  if (hasJobCondition(job, 'Complete')) return 'Complete';
  if (hasJobCondition(job, 'Failed')) return 'Failed';
  return undefined;
}

function reference(job: Job): ObjectReference {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    name: job.metadata.name,
    namespace: job.metadata.namespace,
    uid: job.metadata.uid,
    resourceVersion: job.metadata.resourceVersion,
  };
}

function startOf(job: Job): number {
  return Date.parse(job.status?.startTime ?? job.metadata.creationTimestamp ?? '') || 0;
}

/**
 * Decides one step for a CronJob given the Jobs it controls. Runs at most one Job a step: the
 * most recent schedule time missed since lastScheduleTime (or creation), and only if
 * startingDeadlineSeconds has not passed for it. Forbid skips while a Job is active (the time
 * stays missed, so it runs when the active one ends if still within its deadline); Replace
 * deletes the active Jobs first.
 */
export function planCronJob(cj: CronJob, jobs: readonly Job[], now: Date): CronJobPlan {
  const plan: CronJobPlan = { replace: [], prune: [], status: {}, events: [] };
  const old = cj.status ?? {};
  const active = jobs.filter((j) => !finished(j) && !j.metadata.deletionTimestamp);
  let lastSuccessful = old.lastSuccessfulTime ? Date.parse(old.lastSuccessfulTime) : 0;
  for (const j of jobs) {
    if (finished(j) === 'Complete' && j.status?.completionTime) lastSuccessful = Math.max(lastSuccessful, Date.parse(j.status.completionTime));
  }

  // History: the newest N of each kind of finished Job stay.
  const byStart = (a: Job, b: Job) => startOf(a) - startOf(b);
  const succeeded = jobs.filter((j) => finished(j) === 'Complete' && !j.metadata.deletionTimestamp).sort(byStart);
  const failed = jobs.filter((j) => finished(j) === 'Failed' && !j.metadata.deletionTimestamp).sort(byStart);
  plan.prune.push(...succeeded.slice(0, Math.max(0, succeeded.length - cj.spec.successfulJobsHistoryLimit)));
  plan.prune.push(...failed.slice(0, Math.max(0, failed.length - cj.spec.failedJobsHistoryLimit)));

  let stillActive = active;
  let lastSchedule = old.lastScheduleTime;
  const cron = parse(cj);
  if (!cj.spec.suspend && !cj.metadata.deletionTimestamp) {
    let earliest = Date.parse(old.lastScheduleTime ?? cj.metadata.creationTimestamp ?? '') || now.getTime();
    const deadline = cj.spec.startingDeadlineSeconds;
    if (deadline !== undefined) earliest = Math.max(earliest, now.getTime() - deadline * 1000);
    const { time, missed } = mostRecentScheduleTime(cron, new Date(earliest), now);
    if (missed > MAX_MISSED_SCHEDULES) {
      plan.events.push({
        type: 'Warning',
        reason: 'TooManyMissedTimes',
        message: `too many missed start times: ${missed}. Set or decrease .spec.startingDeadlineSeconds or check clock skew`,
      });
    }
    if (time) {
      const jobName = jobNameFor(cj.metadata.name!, time);
      const exists = jobs.some((j) => j.metadata.name === jobName);
      if (exists) {
        // Already run (the status write after the create was lost): just record it.
        lastSchedule = timestamp(time);
      } else if (cj.spec.concurrencyPolicy === 'Forbid' && active.length > 0) {
        plan.events.push({
          type: 'Normal',
          reason: 'JobAlreadyActive',
          message: 'Not starting job because prior execution is running and concurrency policy is Forbid',
        });
      } else {
        if (cj.spec.concurrencyPolicy === 'Replace' && active.length > 0) {
          plan.replace = active;
          stillActive = [];
        }
        plan.run = { scheduledTime: time, jobName };
        lastSchedule = timestamp(time);
      }
    }
    const next = cron.nextRun(now);
    // 100 ms past the time, as Kubernetes waits, so that the time has surely come.
    if (next) plan.requeueAfterMs = Math.max(0, next.getTime() - now.getTime() + 100);
  }

  const refs = stillActive.map(reference).sort((a, b) => (a.name ?? '').localeCompare(b.name ?? ''));
  const status: CronJobStatus = {};
  if (refs.length > 0) status.active = refs;
  if (lastSchedule) status.lastScheduleTime = lastSchedule;
  if (lastSuccessful > 0) status.lastSuccessfulTime = timestamp(new Date(lastSuccessful));
  plan.status = status;
  return plan;
}
