// `minik8s create job|cronjob NAME`: a Job from an image or from a CronJob's template, and a CronJob from an image, built as kubectl create job|cronjob builds them.
import { type CronJob, cronJobKind } from '../core/api/cronjob.js';
import { jobKind } from '../core/api/job.js';
import { CliError } from './cli-error.js';
import type { CliContext } from './context.js';
import { objectRef } from './printers.js';
import { resolveKind } from './resolve-kind.js';

export interface CreateJobArgs {
  name: string;
  image?: string;
  /** `--from=cronjob/NAME`. */
  from?: string;
  /** The words after `--`: the container's command (kubectl create job/cronjob set command, not args). */
  command: string[];
}

export interface CreateCronJobArgs {
  name: string;
  image?: string;
  schedule?: string;
  restart?: string;
  command: string[];
}

/** One container named after the object, as kubectl names it, with the command only when one was given. */
function container(name: string, image: string, command: readonly string[]): Record<string, unknown> {
  return { name, image, ...(command.length ? { command: [...command] } : {}) };
}

/** The Job `create job NAME --image=IMG [-- CMD]` sends: one container, restartPolicy Never. */
export function jobFromImage(args: CreateJobArgs, namespace: string): Record<string, unknown> {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: args.name, namespace },
    spec: { template: { metadata: {}, spec: { containers: [container(args.name, args.image ?? '', args.command)], restartPolicy: 'Never' } } },
  };
}

/**
 * The Job `create job NAME --from=cronjob/CJ` sends: the CronJob's job template, its labels and
 * annotations, the manual-instantiation annotation, and the CronJob as controller (without
 * blockOwnerDeletion, as kubectl leaves it out so no finalizer permission is needed).
 */
export function jobFromCronJob(name: string, cronJob: CronJob, namespace: string): Record<string, unknown> {
  const template = cronJob.spec.jobTemplate;
  const labels = template.metadata?.labels;
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name,
      namespace,
      ...(labels && Object.keys(labels).length ? { labels: { ...labels } } : {}),
      annotations: { 'cronjob.kubernetes.io/instantiate': 'manual', ...(template.metadata?.annotations ?? {}) },
      ownerReferences: [{ apiVersion: 'batch/v1', kind: 'CronJob', name: cronJob.metadata.name, uid: cronJob.metadata.uid, controller: true }],
    },
    spec: structuredClone(template.spec),
  };
}

/** The CronJob `create cronjob NAME --image=IMG --schedule=S [--restart=P] [-- CMD]` sends. */
export function cronJobFromImage(args: CreateCronJobArgs, namespace: string): Record<string, unknown> {
  if (!args.image) throw new CliError('--image must be specified');
  if (!args.schedule) throw new CliError('--schedule must be specified');
  return {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name: args.name, namespace },
    spec: {
      schedule: args.schedule,
      jobTemplate: {
        metadata: { name: args.name },
        spec: {
          template: { metadata: {}, spec: { containers: [container(args.name, args.image, args.command)], restartPolicy: args.restart || 'OnFailure' } },
        },
      },
    },
  };
}

/** The CronJob `--from` names: only `cronjob/NAME` (any of the kind's names) is accepted, as kubectl accepts. */
export function parseFrom(from: string): string {
  const slash = from.indexOf('/');
  if (slash <= 0 || slash === from.length - 1) throw new CliError(`--from must be of the form cronjob/NAME, not "${from}"`);
  const def = resolveKind(from.slice(0, slash));
  if (def !== cronJobKind) throw new CliError(`unknown object type ${def.kind}: --from takes a cronjob, as cronjob/NAME`);
  return from.slice(slash + 1);
}

export async function runCreateJob(ctx: CliContext, args: CreateJobArgs): Promise<number> {
  // kubectl's checks and wording: exactly one source, and no command with a CronJob's template.
  if (Boolean(args.image) === Boolean(args.from)) throw new CliError('either --image or --from must be specified');
  if (args.from && args.command.length) throw new CliError('cannot specify --from and command');
  let body: Record<string, unknown>;
  if (args.from) {
    const cronJob = (await ctx.client().get(cronJobKind, { namespace: ctx.namespace, name: parseFrom(args.from) })) as CronJob;
    body = jobFromCronJob(args.name, cronJob, ctx.namespace);
  } else {
    body = jobFromImage(args, ctx.namespace);
  }
  const created = await ctx.client().create(jobKind, body, { namespace: ctx.namespace });
  ctx.out(`${objectRef(jobKind, created)} created\n`);
  return 0;
}

export async function runCreateCronJob(ctx: CliContext, args: CreateCronJobArgs): Promise<number> {
  const created = await ctx.client().create(cronJobKind, cronJobFromImage(args, ctx.namespace), { namespace: ctx.namespace });
  ctx.out(`${objectRef(cronJobKind, created)} created\n`);
  return 0;
}
