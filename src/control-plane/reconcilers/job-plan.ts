// The Job controller's pure decision: from a Job and its pods, which pods to create or delete, the status, and when to look again.
import type { Condition } from '../../core/api/meta.js';
import { COMPLETION_INDEX_ANNOTATION, type Job, type JobStatus, type PodFailurePolicyRule } from '../../core/api/job.js';
import { isPodReady, type Pod } from '../../core/api/pod.js';
import { timestamp } from '../../core/api/timestamp.js';
import { compareByValue } from './replicaset.js';

/** Kubernetes' DefaultJobPodFailureBackOff and MaxJobPodFailureBackOff. */
export const JOB_BACKOFF_BASE_MS = 10_000;
export const JOB_BACKOFF_MAX_MS = 6 * 60_000;

export interface JobPlan {
  /** Pods to create: one entry each, with its completion index in Indexed mode. */
  create: { index?: number }[];
  /** Active pods to delete (job finished or suspended, or more running than wanted). */
  delete: Pod[];
  status: JobStatus;
  /** Look again after this long (backoff ending, deadline, TTL), if nothing else happens first. */
  requeueAfterMs?: number;
  /** ttlSecondsAfterFinished has run out: delete the Job (its pods follow through the garbage collector). */
  deleteJob?: boolean;
  /** Events to record, as Kubernetes' job controller emits them. */
  events: { type: 'Normal' | 'Warning'; reason: string; message: string }[];
}

/** The delay before the next pod after `failures` failures in a row: 10 s doubling, capped at 6 min. */
export function jobBackoffMs(failures: number): number {
  if (failures <= 0) return 0;
  return Math.min(JOB_BACKOFF_BASE_MS * 2 ** (failures - 1), JOB_BACKOFF_MAX_MS);
}

/** A pod's completion index (from its annotation), or undefined when it has none or a bad one. */
export function podIndex(pod: Pod): number | undefined {
  const raw = pod.metadata.annotations?.[COMPLETION_INDEX_ANNOTATION];
  if (raw === undefined || !/^\d+$/.test(raw)) return undefined;
  return Number(raw);
}

/** Kubernetes' compressed index list: "0-2,5,7-8". */
export function formatIndexes(indexes: Iterable<number>): string {
  const sorted = [...new Set(indexes)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j] + 1) j++;
    parts.push(i === j ? String(sorted[i]) : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  return parts.join(',');
}

/** The indexes a compressed list names (bad parts are skipped). */
export function parseIndexes(text: string | undefined): Set<number> {
  const out = new Set<number>();
  for (const part of (text ?? '').split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (!m) continue;
    const from = Number(m[1]);
    const to = m[2] === undefined ? from : Number(m[2]);
    for (let i = from; i <= to && i - from < 1_000_000; i++) out.add(i);
  }
  return out;
}

function isFinished(pod: Pod): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}

/** When a failed pod finished: its last container's finishedAt, else its creation time. */
function finishedAt(pod: Pod): number {
  let latest = 0;
  for (const c of [...(pod.status?.containerStatuses ?? []), ...(pod.status?.initContainerStatuses ?? [])]) {
    const t = c.state?.terminated?.finishedAt;
    if (t) latest = Math.max(latest, Date.parse(t));
  }
  return latest || Date.parse(pod.metadata.creationTimestamp ?? '') || 0;
}

/** The first podFailurePolicy rule a failed pod matches, with the message Kubernetes gives for FailJob. */
export function matchPodFailurePolicy(
  rules: readonly PodFailurePolicyRule[],
  pod: Pod,
): { rule: PodFailurePolicyRule; index: number; message: string } | undefined {
  const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
  for (const [index, rule] of rules.entries()) {
    if (rule.onExitCodes) {
      const { containerName, operator, values } = rule.onExitCodes;
      for (const c of statuses) {
        const code = c.state?.terminated?.exitCode;
        if (code === undefined || code === 0) continue;
        if (containerName && c.name !== containerName) continue;
        if (values.includes(code) === (operator === 'In')) {
          const message = `Container ${c.name} for pod ${pod.metadata.namespace}/${pod.metadata.name} failed with exit code ${code} matching ${rule.action} rule at index ${index}`;
          return { rule, index, message };
        }
      }
    }
    for (const want of rule.onPodConditions ?? []) {
      const has = (pod.status?.conditions ?? []).some((c) => c.type === want.type && c.status === (want.status ?? 'True'));
      if (has) {
        const message = `Pod ${pod.metadata.namespace}/${pod.metadata.name} has condition ${want.type} matching ${rule.action} rule at index ${index}`;
        return { rule, index, message };
      }
    }
  }
  return undefined;
}

function condition(type: string, status: 'True' | 'False', reason: string, message: string, now: Date): Condition {
  const t = timestamp(now);
  return { type, status, reason, message, lastProbeTime: t, lastTransitionTime: t };
}

/** Sets a condition, keeping its times when its status did not change. */
function withCondition(conditions: readonly Condition[], next: Condition): Condition[] {
  const old = conditions.find((c) => c.type === next.type);
  if (old && old.status === next.status && old.reason === next.reason) return [...conditions];
  const merged = old && old.status === next.status ? { ...next, lastTransitionTime: old.lastTransitionTime } : next;
  return [...conditions.filter((c) => c.type !== next.type), merged];
}

function finishedCondition(job: Job): Condition | undefined {
  return (job.status?.conditions ?? []).find((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True');
}

/**
 * Decides one step for a Job given the pods it controls. Counting is finalizer-free: the Job's
 * finished pods are kept (as Kubernetes keeps them) and counted, and the counts never go down,
 * so a finished pod someone deletes stays counted. A failed pod that a podFailurePolicy Ignore
 * rule matches is not counted. Pods being deleted are neither active nor counted (Kubernetes'
 * podReplacementPolicy TerminatingOrFailed: they are replaced at once).
 */
export function planJob(job: Job, pods: readonly Pod[], now: Date): JobPlan {
  const spec = job.spec;
  const old = job.status ?? {};
  const plan: JobPlan = { create: [], delete: [], status: { ...old }, events: [] };
  const conditionsIn = old.conditions ?? [];
  let conditions = [...conditionsIn];
  const waits: number[] = [];
  const indexed = spec.completionMode === 'Indexed';

  const terminating = pods.filter((p) => !!p.metadata.deletionTimestamp && !isFinished(p));
  const active = pods.filter((p) => !p.metadata.deletionTimestamp && !isFinished(p));
  const succeededPods = pods.filter((p) => p.status?.phase === 'Succeeded');
  const failedPods = pods.filter((p) => p.status?.phase === 'Failed');

  // Failures, with the pod failure policy's verdict on each.
  let failJob: string | undefined;
  const counted: Pod[] = [];
  for (const pod of failedPods) {
    const match = spec.podFailurePolicy ? matchPodFailurePolicy(spec.podFailurePolicy.rules, pod) : undefined;
    if (match?.rule.action === 'Ignore') continue;
    if (match?.rule.action === 'FailJob') failJob ??= match.message;
    counted.push(pod);
  }
  const restarts =
    spec.template.spec.restartPolicy === 'OnFailure'
      ? active.reduce((n, p) => n + Math.max(0, ...(p.status?.containerStatuses ?? []).map((c) => c.restartCount ?? 0)), 0)
      : 0;
  const failed = Math.max(old.failed ?? 0, counted.length);

  const completed = parseIndexes(old.completedIndexes);
  if (indexed) {
    for (const p of succeededPods) {
      const i = podIndex(p);
      if (i !== undefined && i < (spec.completions ?? 0)) completed.add(i);
    }
  }
  const succeeded = indexed ? completed.size : Math.max(old.succeeded ?? 0, succeededPods.length);

  const finishedBefore = finishedCondition(job);
  let finishing: 'Complete' | 'Failed' | undefined = finishedBefore?.type as 'Complete' | 'Failed' | undefined;
  const suspended = spec.suspend === true;

  if (!finishing) {
    const completions = spec.completions;
    const done = completions === undefined ? succeeded > 0 && active.length === 0 : succeeded >= completions;
    if (done) {
      finishing = 'Complete';
      conditions = withCondition(conditions, condition('Complete', 'True', 'CompletionsReached', 'Reached expected number of succeeded pods', now));
      plan.status.completionTime = timestamp(now);
      plan.events.push({ type: 'Normal', reason: 'Completed', message: 'Job completed' });
    } else if (failJob) {
      finishing = 'Failed';
      conditions = withCondition(conditions, condition('Failed', 'True', 'PodFailurePolicy', failJob, now));
    } else if (failed + restarts > spec.backoffLimit) {
      finishing = 'Failed';
      conditions = withCondition(conditions, condition('Failed', 'True', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit', now));
    } else if (!suspended && spec.activeDeadlineSeconds !== undefined && old.startTime) {
      const deadline = Date.parse(old.startTime) + spec.activeDeadlineSeconds * 1000;
      if (now.getTime() >= deadline) {
        finishing = 'Failed';
        conditions = withCondition(conditions, condition('Failed', 'True', 'DeadlineExceeded', 'Job was active longer than specified deadline', now));
      } else waits.push(deadline - now.getTime());
    }
    if (finishing === 'Failed') {
      const c = conditions.find((x) => x.type === 'Failed')!;
      plan.events.push({ type: 'Warning', reason: c.reason!, message: c.message! });
    }
  }

  if (finishing) {
    // A finished Job keeps no pod running.
    plan.delete = active;
  } else if (suspended) {
    plan.delete = active;
    if (!conditionsIn.some((c) => c.type === 'Suspended' && c.status === 'True')) {
      conditions = withCondition(conditions, condition('Suspended', 'True', 'JobSuspended', 'Job suspended', now));
      plan.events.push({ type: 'Normal', reason: 'Suspended', message: 'Job suspended' });
    }
  } else {
    if (conditionsIn.some((c) => c.type === 'Suspended' && c.status === 'True')) {
      conditions = withCondition(conditions, condition('Suspended', 'False', 'JobResumed', 'Job resumed', now));
      // As Kubernetes: a resumed Job's activeDeadlineSeconds counts from the resume.
      plan.status.startTime = timestamp(now);
      plan.events.push({ type: 'Normal', reason: 'Resumed', message: 'Job resumed' });
    }
    plan.status.startTime ??= timestamp(now);

    // Backoff: after n failures in a row, wait 10 s * 2^(n-1) from the last failure before a new pod.
    let backoffLeft = 0;
    if (failed > 0 && counted.length > 0) {
      const lastFailure = Math.max(...counted.map(finishedAt));
      backoffLeft = lastFailure + jobBackoffMs(failed) - now.getTime();
    }

    if (indexed) {
      const completions = spec.completions ?? 0;
      const running = new Map<number, Pod[]>();
      for (const p of active) {
        const i = podIndex(p);
        if (i === undefined || i >= completions || completed.has(i)) {
          plan.delete.push(p);
          continue;
        }
        running.set(i, [...(running.get(i) ?? []), p]);
      }
      // One pod per index: extra ones go.
      for (const list of running.values()) plan.delete.push(...list.sort(compareByValue).slice(0, list.length - 1));
      const want = Math.min(spec.parallelism ?? 1, completions - completed.size);
      const runningCount = running.size;
      if (runningCount > want) {
        const highest = [...running.keys()].sort((a, b) => b - a).slice(0, runningCount - want);
        for (const i of highest) plan.delete.push(...running.get(i)!);
      } else if (runningCount < want) {
        if (backoffLeft > 0) waits.push(backoffLeft);
        else
          for (let i = 0; i < completions && plan.create.length < want - runningCount; i++) {
            if (!completed.has(i) && !running.has(i)) plan.create.push({ index: i });
          }
      }
    } else {
      const parallelism = spec.parallelism ?? 1;
      const want = spec.completions === undefined ? (succeeded > 0 ? 0 : parallelism) : Math.max(0, Math.min(parallelism, spec.completions - succeeded));
      // In a work queue, once one pod succeeded the others finish on their own; none is removed.
      if (active.length > want && !(spec.completions === undefined && succeeded > 0)) {
        plan.delete = [...active].sort(compareByValue).slice(0, active.length - want);
      } else if (active.length < want) {
        if (backoffLeft > 0) waits.push(backoffLeft);
        else for (let i = active.length; i < want; i++) plan.create.push({});
      }
    }
  }

  const deleting = new Set(plan.delete);
  const stillActive = active.filter((p) => !deleting.has(p));
  const status: JobStatus = { ...plan.status, conditions: conditions.length ? conditions : undefined };
  status.active = stillActive.length + plan.create.length || undefined;
  status.succeeded = succeeded || undefined;
  status.failed = failed || undefined;
  status.ready = stillActive.filter((p) => isPodReady(p)).length;
  status.terminating = terminating.length + plan.delete.length;
  if (indexed) status.completedIndexes = formatIndexes(completed);
  if (!status.conditions) delete status.conditions;
  for (const k of ['active', 'succeeded', 'failed'] as const) if (status[k] === undefined) delete status[k];
  if (suspended && !finishing) delete status.startTime;
  plan.status = status;

  // ttlSecondsAfterFinished: counted from the finishing condition's time.
  if (finishing && spec.ttlSecondsAfterFinished !== undefined) {
    const c = (status.conditions ?? []).find((x) => x.type === finishing && x.status === 'True');
    const since = c?.lastTransitionTime ? Date.parse(c.lastTransitionTime) : now.getTime();
    const left = since + spec.ttlSecondsAfterFinished * 1000 - now.getTime();
    if (left <= 0) plan.deleteJob = true;
    else waits.push(left);
  }
  if (waits.length) plan.requeueAfterMs = Math.max(0, Math.min(...waits));
  return plan;
}
