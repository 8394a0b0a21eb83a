// Job (batch/v1): pods run to completion, counted, retried with backoff, with Kubernetes' defaults, generated selector and status.
import * as v from 'valibot';
import type { KindDefinition } from './kind.js';
import { workloadPatchMeta } from './patch-meta.js';
import { conditionSchema, kindSchema, timestampSchema, type Condition } from './meta.js';
import { intSchema, podTemplateSpecSchema, selectorMatchesTemplate } from './pod.js';
import { workloadWideColumns } from './replicaset.js';
import { labelSelectorSchema, type LabelSelector } from './selector.js';
import { formatAge } from './table.js';
import { withChecks, type FieldProblem } from './validate.js';

const count = intSchema({ min: 0 });

/** Labels Kubernetes puts on a Job's pods (and in its generated selector). */
export const CONTROLLER_UID_LABEL = 'batch.kubernetes.io/controller-uid';
export const JOB_NAME_LABEL = 'batch.kubernetes.io/job-name';
/** The pre-1.27 spellings Kubernetes still adds beside the prefixed ones. */
export const LEGACY_CONTROLLER_UID_LABEL = 'controller-uid';
export const LEGACY_JOB_NAME_LABEL = 'job-name';
/** An Indexed Job's pod carries its index here (annotation and label) and in JOB_COMPLETION_INDEX. */
export const COMPLETION_INDEX_ANNOTATION = 'batch.kubernetes.io/job-completion-index';

const podFailurePolicyRuleSchema = v.strictObject({
  action: v.picklist(['FailJob', 'FailIndex', 'Ignore', 'Count']),
  onExitCodes: v.optional(
    v.strictObject({
      containerName: v.optional(v.string()),
      operator: v.picklist(['In', 'NotIn']),
      values: v.pipe(v.array(v.pipe(v.number(), v.integer('must be an integer'))), v.minLength(1, 'must have at least one value'), v.maxLength(255)),
    }),
  ),
  onPodConditions: v.optional(v.array(v.strictObject({ type: v.string(), status: v.optional(v.picklist(['True', 'False', 'Unknown']), 'True') }))),
});
export type PodFailurePolicyRule = v.InferOutput<typeof podFailurePolicyRuleSchema>;

export const jobSpecBaseSchema = v.strictObject({
  parallelism: v.optional(count),
  completions: v.optional(count),
  activeDeadlineSeconds: v.optional(intSchema({ min: 1 })),
  podFailurePolicy: v.optional(v.strictObject({ rules: v.pipe(v.array(podFailurePolicyRuleSchema), v.maxLength(20)) })),
  backoffLimit: v.optional(count, 6),
  selector: v.optional(labelSelectorSchema),
  manualSelector: v.optional(v.boolean()),
  template: podTemplateSpecSchema,
  ttlSecondsAfterFinished: v.optional(count),
  completionMode: v.optional(v.picklist(['NonIndexed', 'Indexed']), 'NonIndexed'),
  suspend: v.optional(v.boolean(), false),
  podReplacementPolicy: v.optional(v.picklist(['TerminatingOrFailed', 'Failed'])),
});
export type JobSpec = v.InferOutput<typeof jobSpecBaseSchema>;

export const jobStatusSchema = v.strictObject({
  conditions: v.optional(v.array(conditionSchema)),
  startTime: v.optional(timestampSchema),
  completionTime: v.optional(timestampSchema),
  active: v.optional(count),
  succeeded: v.optional(count),
  failed: v.optional(count),
  terminating: v.optional(count),
  ready: v.optional(count),
  completedIndexes: v.optional(v.string()),
  failedIndexes: v.optional(v.string()),
  uncountedTerminatedPods: v.optional(v.strictObject({ succeeded: v.optional(v.array(v.string())), failed: v.optional(v.array(v.string())) })),
  observedGeneration: v.optional(v.number()),
});
export type JobStatus = v.InferOutput<typeof jobStatusSchema>;

const jobBaseSchema = kindSchema('batch/v1', 'Job', { spec: jobSpecBaseSchema, status: v.optional(jobStatusSchema, {}) });
type JobBase = v.InferOutput<typeof jobBaseSchema>;

/**
 * Kubernetes' defaults and generated selector: parallelism 1, completions 1 when neither is
 * set (parallelism alone is a work queue with no completion count), and, unless
 * manualSelector, a selector on the Job's uid whose labels go onto the template. The uid
 * exists once the server prepares the create; without it (a client-side check) nothing is generated.
 */
export function defaultJob(job: JobBase): JobBase {
  const spec = { ...job.spec };
  if (spec.completions === undefined && spec.parallelism === undefined) spec.completions = 1;
  spec.parallelism ??= 1;
  const uid = job.metadata.uid;
  if (spec.manualSelector !== true && uid && spec.selector === undefined) {
    spec.selector = { matchLabels: { [CONTROLLER_UID_LABEL]: uid } };
    const labels = {
      ...spec.template.metadata.labels,
      [CONTROLLER_UID_LABEL]: uid,
      [JOB_NAME_LABEL]: job.metadata.name ?? '',
      [LEGACY_CONTROLLER_UID_LABEL]: uid,
      [LEGACY_JOB_NAME_LABEL]: job.metadata.name ?? '',
    };
    spec.template = { ...spec.template, metadata: { ...spec.template.metadata, labels } };
  }
  return { ...job, spec };
}

/** Checks of a Job spec that need no metadata (a CronJob's jobTemplate has them too), at paths under `spec`. */
export function jobSpecProblems(spec: JobSpec): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const restartPolicy = spec.template.spec.restartPolicy;
  if (restartPolicy !== 'OnFailure' && restartPolicy !== 'Never') {
    problems.push({ path: ['spec', 'template', 'spec', 'restartPolicy'], reason: 'FieldValueNotSupported', detail: 'supported values: "OnFailure", "Never"' });
  }
  if (spec.completionMode === 'Indexed' && spec.completions === undefined) {
    problems.push({ path: ['spec', 'completions'], reason: 'FieldValueRequired', detail: 'when completion mode is Indexed' });
  }
  if (spec.podFailurePolicy && restartPolicy !== 'Never') {
    problems.push({
      path: ['spec', 'template', 'spec', 'restartPolicy'],
      reason: 'FieldValueInvalid',
      detail: 'only "Never" is supported when podFailurePolicy is specified',
    });
  }
  for (const [i, rule] of (spec.podFailurePolicy?.rules ?? []).entries()) {
    if (!!rule.onExitCodes === !!rule.onPodConditions) {
      problems.push({
        path: ['spec', 'podFailurePolicy', 'rules', i],
        reason: 'FieldValueInvalid',
        detail: 'specifying one of onExitCodes and onPodConditions is required',
        value: '',
      });
    }
    if (rule.onExitCodes?.operator === 'In' && rule.onExitCodes.values.includes(0)) {
      problems.push({
        path: ['spec', 'podFailurePolicy', 'rules', i, 'onExitCodes', 'values'],
        reason: 'FieldValueInvalid',
        detail: 'must not be 0 for the In operator',
        value: 0,
      });
    }
  }
  return problems;
}

function jobProblems(job: JobBase): FieldProblem[] {
  const spec = job.spec;
  const problems = jobSpecProblems(spec);
  if (spec.selector === undefined) {
    if (job.metadata.uid && spec.manualSelector !== true) return problems;
    if (job.metadata.uid) problems.push({ path: ['spec', 'selector'], reason: 'FieldValueRequired', detail: '' });
    return problems;
  }
  for (const p of selectorMatchesTemplate({ selector: spec.selector, template: spec.template })) problems.push({ ...p, path: ['spec', ...p.path] });
  if (spec.manualSelector !== true && job.metadata.uid) {
    const generated =
      spec.selector.matchLabels?.[CONTROLLER_UID_LABEL] === job.metadata.uid || spec.selector.matchLabels?.[LEGACY_CONTROLLER_UID_LABEL] === job.metadata.uid;
    if (!generated) problems.push({ path: ['spec', 'selector'], reason: 'FieldValueInvalid', detail: '`selector` not auto-generated', value: spec.selector });
  }
  return problems;
}

export const jobSchema = withChecks(v.pipe(jobBaseSchema, v.transform(defaultJob)), jobProblems);
export type Job = JobBase & { spec: JobSpec & { selector?: LabelSelector } };

/** True when the Job has the condition with status True. */
export function hasJobCondition(job: Pick<Job, 'status'>, type: string): boolean {
  return (job.status?.conditions ?? []).some((c: Condition) => c.type === type && c.status === 'True');
}

/** kubectl's STATUS cell of a Job. */
export function jobStatusCell(job: Job): string {
  if (hasJobCondition(job, 'Complete')) return 'Complete';
  if (hasJobCondition(job, 'Failed')) return 'Failed';
  if (job.metadata.deletionTimestamp) return 'Terminating';
  if (hasJobCondition(job, 'Suspended')) return 'Suspended';
  if (hasJobCondition(job, 'FailureTarget')) return 'FailureTarget';
  if (hasJobCondition(job, 'SuccessCriteriaMet')) return 'SuccessCriteriaMet';
  return 'Running';
}

/** kubectl's COMPLETIONS cell: succeeded/completions, or succeeded/1 (of parallelism) for a work queue. */
export function jobCompletionsCell(job: Job): string {
  const succeeded = job.status?.succeeded ?? 0;
  if (job.spec.completions !== undefined) return `${succeeded}/${job.spec.completions}`;
  const parallelism = job.spec.parallelism ?? 0;
  return parallelism > 1 ? `${succeeded}/1 of ${parallelism}` : `${succeeded}/1`;
}

/** kubectl's DURATION cell: start to completion, or start to now while running; empty before it starts. */
export function jobDurationCell(job: Job, now: Date): string {
  const start = job.status?.startTime;
  if (!start) return '';
  const end = job.status?.completionTime ? Date.parse(job.status.completionTime) : now.getTime();
  return formatAge(end - Date.parse(start));
}

export const jobKind: KindDefinition = {
  patchMeta: workloadPatchMeta(),
  kind: 'Job',
  group: 'batch',
  version: 'v1',
  resource: 'jobs',
  singular: 'job',
  shortNames: [],
  namespaced: true,
  schema: jobSchema as unknown as KindDefinition['schema'],
  statusSubresource: true,
  validateUpdate(existing, next) {
    const a = (existing as Job).spec;
    const b = (next as Job).spec;
    const problems: FieldProblem[] = [];
    const same = (x: unknown, y: unknown) => JSON.stringify(x) === JSON.stringify(y);
    if (!same(a.selector, b.selector))
      problems.push({ path: ['spec', 'selector'], reason: 'FieldValueInvalid', detail: 'field is immutable', value: b.selector });
    if (a.completionMode !== b.completionMode) problems.push({ path: ['spec', 'completionMode'], reason: 'FieldValueInvalid', detail: 'field is immutable' });
    if (a.completions !== b.completions) problems.push({ path: ['spec', 'completions'], reason: 'FieldValueInvalid', detail: 'field is immutable' });
    if (!same(a.podFailurePolicy, b.podFailurePolicy))
      problems.push({ path: ['spec', 'podFailurePolicy'], reason: 'FieldValueInvalid', detail: 'field is immutable', value: '' });
    // As Kubernetes: the template may change only while the Job is suspended (so pods not yet made follow it).
    if (!same(a.template, b.template) && !b.suspend) {
      problems.push({ path: ['spec', 'template'], reason: 'FieldValueInvalid', detail: 'field is immutable', value: '' });
    }
    return problems;
  },
  columns: [
    { name: 'STATUS', value: (o) => jobStatusCell(o as Job) },
    { name: 'COMPLETIONS', value: (o) => jobCompletionsCell(o as Job) },
    { name: 'DURATION', value: (o) => jobDurationCell(o as Job, new Date()) },
    ...workloadWideColumns((o) => {
      const spec = (o as Job).spec;
      return { selector: spec.selector ?? {}, template: spec.template };
    }),
  ],
};
