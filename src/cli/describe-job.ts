// `minik8s describe job`: kubectl's layout for a Job: selector, parallelism and completions, times, pod counts, the pod template and events.
import type { Event } from '../core/api/event.js';
import type { Job } from '../core/api/job.js';
import { formatAge } from '../core/api/table.js';
import { eventLines, formatLabelSelector, multiline, podTemplateLines } from './describe-deployment.js';
import { describeTime } from './describe-writer.js';
import { alignTabs } from './tab-writer.js';
import { LAST_APPLIED_ANNOTATION } from './three-way-patch.js';

const HIDDEN_ANNOTATIONS = [LAST_APPLIED_ANNOTATION, 'kubectl.kubernetes.io/last-applied-configuration'];

/** kubectl's Completed Indexes cell: the list cut after the first comma past 50 characters, `<none>` when empty. */
export function capIndexes(indexes: string | undefined, softLimit = 50): string {
  if (!indexes) return '<none>';
  const comma = indexes.indexOf(',', softLimit);
  return comma < 0 ? indexes : `${indexes.slice(0, comma + 1)}...`;
}

export interface JobDescribeInput {
  job: Job;
  events: readonly Event[];
  now: Date;
}

/** The whole `describe job` text. */
export function describeJob(input: JobDescribeInput): string {
  const { job, now } = input;
  const meta = job.metadata;
  const spec = job.spec;
  const status = job.status ?? {};
  const lines = [
    `Name:\t${meta.name}`,
    `Namespace:\t${meta.namespace}`,
    `Selector:\t${formatLabelSelector(spec.selector)}`,
    ...multiline('', 'Labels', meta.labels, '='),
    ...multiline('', 'Annotations', meta.annotations, ': ', HIDDEN_ANNOTATIONS),
  ];
  const owner = meta.ownerReferences?.find((r) => r.controller);
  if (owner) lines.push(`Controlled By:\t${owner.kind}/${owner.name}`);
  if (spec.parallelism !== undefined) lines.push(`Parallelism:\t${spec.parallelism}`);
  lines.push(`Completions:\t${spec.completions ?? '<unset>'}`);
  if (spec.completionMode) lines.push(`Completion Mode:\t${spec.completionMode}`);
  if (spec.suspend !== undefined) lines.push(`Suspend:\t${spec.suspend}`);
  if (spec.backoffLimit !== undefined) lines.push(`Backoff Limit:\t${spec.backoffLimit}`);
  if (spec.ttlSecondsAfterFinished !== undefined) lines.push(`TTL Seconds After Finished:\t${spec.ttlSecondsAfterFinished}`);
  if (status.startTime) lines.push(`Start Time:\t${describeTime(status.startTime)}`);
  if (status.completionTime) lines.push(`Completed At:\t${describeTime(status.completionTime)}`);
  if (status.startTime && status.completionTime) lines.push(`Duration:\t${formatAge(Date.parse(status.completionTime) - Date.parse(status.startTime))}`);
  if (spec.activeDeadlineSeconds !== undefined) lines.push(`Active Deadline Seconds:\t${spec.activeDeadlineSeconds}s`);
  const active = status.active ?? 0;
  const counts = `${status.succeeded ?? 0} Succeeded / ${status.failed ?? 0} Failed`;
  lines.push(`Pods Statuses:\t${status.ready === undefined ? `${active} Active` : `${active} Active (${status.ready} Ready)`} / ${counts}`);
  if (spec.completionMode === 'Indexed') lines.push(`Completed Indexes:\t${capIndexes(status.completedIndexes)}`);
  lines.push(...podTemplateLines(spec.template as Parameters<typeof podTemplateLines>[0]));
  lines.push(...eventLines(input.events, now));
  return alignTabs(`${lines.join('\n')}\n`);
}
