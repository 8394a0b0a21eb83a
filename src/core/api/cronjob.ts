// CronJob (batch/v1): a Job template run on a cron schedule in a time zone, with Kubernetes' defaults, validation and columns.
import { Cron } from 'croner';
import * as v from 'valibot';
import { cronProblem } from './cron.js';
import { jobSpecBaseSchema, jobSpecProblems } from './job.js';
import type { KindDefinition } from './kind.js';
import { podTemplatePatchMeta, workloadPatchMeta } from './patch-meta.js';
import { kindSchema, objectMetaSchema, timestampSchema } from './meta.js';
import { intSchema } from './pod.js';
import { workloadWideColumns } from './replicaset.js';
import { ageSince } from './table.js';
import { withChecks, type FieldProblem } from './validate.js';

const count = intSchema({ min: 0 });

/** Kubernetes caps a CronJob's name so that NAME-<minutes since epoch> still fits a Job (and its pods' labels). */
export const MAX_CRONJOB_NAME_LENGTH = 52;

const objectReferenceSchema = v.strictObject({
  apiVersion: v.optional(v.string()),
  kind: v.optional(v.string()),
  name: v.optional(v.string()),
  namespace: v.optional(v.string()),
  uid: v.optional(v.string()),
  resourceVersion: v.optional(v.string()),
  fieldPath: v.optional(v.string()),
});
export type ObjectReference = v.InferOutput<typeof objectReferenceSchema>;

const cronJobSpecSchema = v.strictObject({
  schedule: v.string(),
  timeZone: v.optional(v.string()),
  startingDeadlineSeconds: v.optional(count),
  concurrencyPolicy: v.optional(v.picklist(['Allow', 'Forbid', 'Replace']), 'Allow'),
  suspend: v.optional(v.boolean(), false),
  jobTemplate: v.strictObject({ metadata: v.optional(objectMetaSchema, {}), spec: jobSpecBaseSchema }),
  successfulJobsHistoryLimit: v.optional(count, 3),
  failedJobsHistoryLimit: v.optional(count, 1),
});
export type CronJobSpec = v.InferOutput<typeof cronJobSpecSchema>;

const cronJobStatusSchema = v.strictObject({
  active: v.optional(v.array(objectReferenceSchema)),
  lastScheduleTime: v.optional(timestampSchema),
  lastSuccessfulTime: v.optional(timestampSchema),
});
export type CronJobStatus = v.InferOutput<typeof cronJobStatusSchema>;

const cronJobBaseSchema = kindSchema('batch/v1', 'CronJob', { spec: cronJobSpecSchema, status: v.optional(cronJobStatusSchema, {}) });
export type CronJob = v.InferOutput<typeof cronJobBaseSchema>;

/** A schedule split into its optional `CRON_TZ=`/`TZ=` prefix and the cron fields. */
export function splitSchedule(schedule: string): { zone?: string; fields: string } {
  const m = /^\s*(?:CRON_TZ|TZ)=(\S+)\s+(.*)$/.exec(schedule);
  return m ? { zone: m[1], fields: m[2].trim() } : { fields: schedule.trim() };
}

/** True when the IANA zone name is one this runtime knows. */
export function isKnownTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** The zone a CronJob's times are read in: spec.timeZone, the schedule's CRON_TZ, or the master's local zone. */
export function cronJobZone(spec: Pick<CronJobSpec, 'schedule' | 'timeZone'>): string | undefined {
  return spec.timeZone ?? splitSchedule(spec.schedule).zone;
}

/**
 * The schedule times in (after, until], oldest first, at most `limit` of them (the count says
 * how many there were in all, up to `limit + 1`, so callers can tell "too many").
 */
export function scheduleTimesBetween(spec: Pick<CronJobSpec, 'schedule' | 'timeZone'>, after: Date, until: Date, limit: number): Date[] {
  const zone = cronJobZone(spec);
  const cron = new Cron(splitSchedule(spec.schedule).fields, { paused: true, mode: '5-part', domAndDow: false, ...(zone ? { timezone: zone } : {}) });
  const times: Date[] = [];
  let t: Date | null = after;
  while (times.length <= limit) {
    t = cron.nextRun(t);
    if (!t || t.getTime() > until.getTime()) break;
    times.push(t);
  }
  return times;
}

/** The first schedule time strictly after `after`, or undefined when the schedule never fires. */
export function nextScheduleTime(spec: Pick<CronJobSpec, 'schedule' | 'timeZone'>, after: Date): Date | undefined {
  const zone = cronJobZone(spec);
  const cron = new Cron(splitSchedule(spec.schedule).fields, { paused: true, mode: '5-part', domAndDow: false, ...(zone ? { timezone: zone } : {}) });
  return cron.nextRun(after) ?? undefined;
}

function cronJobProblems(cj: CronJob): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const name = cj.metadata.name ?? '';
  if (name.length > MAX_CRONJOB_NAME_LENGTH) {
    problems.push({ path: ['metadata', 'name'], reason: 'FieldValueInvalid', detail: `must be no more than ${MAX_CRONJOB_NAME_LENGTH} characters` });
  }
  const { zone, fields } = splitSchedule(cj.spec.schedule);
  if (zone !== undefined && cj.spec.timeZone !== undefined) {
    problems.push({ path: ['spec', 'schedule'], reason: 'FieldValueInvalid', detail: 'cannot use both timeZone field and TZ or CRON_TZ in schedule' });
  } else {
    const problem = cronProblem(fields);
    if (problem) problems.push({ path: ['spec', 'schedule'], reason: 'FieldValueInvalid', detail: problem });
  }
  if (zone !== undefined && !isKnownTimeZone(zone)) {
    problems.push({ path: ['spec', 'schedule'], reason: 'FieldValueInvalid', detail: `unknown time zone ${zone}` });
  }
  if (cj.spec.timeZone !== undefined && !isKnownTimeZone(cj.spec.timeZone)) {
    problems.push({ path: ['spec', 'timeZone'], reason: 'FieldValueInvalid', detail: `unknown time zone ${cj.spec.timeZone}` });
  }
  for (const p of jobSpecProblems(cj.spec.jobTemplate.spec)) problems.push({ ...p, path: ['spec', 'jobTemplate', ...p.path] });
  return problems;
}

export const cronJobSchema = withChecks(cronJobBaseSchema, cronJobProblems);

export const cronJobKind: KindDefinition = {
  patchMeta: workloadPatchMeta({ jobTemplate: { fields: { spec: { fields: { template: podTemplatePatchMeta } } } } }),
  kind: 'CronJob',
  group: 'batch',
  version: 'v1',
  resource: 'cronjobs',
  singular: 'cronjob',
  shortNames: ['cj'],
  namespaced: true,
  schema: cronJobSchema as unknown as KindDefinition['schema'],
  statusSubresource: true,
  columns: [
    { name: 'SCHEDULE', value: (o) => (o as CronJob).spec.schedule },
    { name: 'TIMEZONE', value: (o) => (o as CronJob).spec.timeZone ?? '' },
    { name: 'SUSPEND', value: (o) => ((o as CronJob).spec.suspend ? 'True' : 'False') },
    { name: 'ACTIVE', value: (o) => String((o as CronJob).status?.active?.length ?? 0) },
    {
      name: 'LAST SCHEDULE',
      value: (o) => {
        const t = (o as CronJob).status?.lastScheduleTime;
        return t ? ageSince(t, new Date()) : '';
      },
    },
    ...workloadWideColumns((o) => {
      const spec = (o as CronJob).spec.jobTemplate.spec;
      return { selector: spec.selector ?? {}, template: spec.template };
    }),
  ],
};
