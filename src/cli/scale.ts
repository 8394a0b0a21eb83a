// `minik8s scale rs/NAME --replicas=N`: sets spec.replicas through the /scale subresource, as kubectl scale does.
import type { KindDefinition } from '../core/api/kind.js';
import { kindObjectPath } from '../core/client/api-client.js';
import { CliError } from './cli-error.js';
import type { CliContext } from './context.js';
import { parseResourceArgs } from './resolve-kind.js';

export interface ScaleArgs {
  resources: string[];
  replicas?: string;
  /** --current-replicas: only scale if spec.replicas is this now. */
  currentReplicas?: string;
}

interface ScaleLike {
  metadata?: { resourceVersion?: string };
  spec?: { replicas?: number };
}

const REPLICAS_REQUIRED = 'The --replicas=COUNT flag is required, and COUNT must be greater than or equal to 0';

/** A count flag: a whole number of at least 0, or undefined when absent. */
export function parseCount(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(Number(value))) {
    throw new CliError(flag === 'replicas' ? REPLICAS_REQUIRED : `invalid argument "${value}" for "--${flag}" flag: must be a whole number`);
  }
  return Number(value);
}

/** What is scaled: one kind with a scale subresource and its names. */
export function scaleTargets(resources: readonly string[]): { def: KindDefinition; name: string }[] {
  const targets = parseResourceArgs(resources).targets.flatMap((t) => t.names.map((name) => ({ def: t.def, name })));
  if (targets.length === 0) throw new CliError('resource(s) were provided, but no name was specified');
  for (const { def } of targets) {
    if (!def.subresources?.some((s) => s.name === 'scale')) throw new CliError(`${def.resource} cannot be scaled: the resource has no scale subresource`);
  }
  return targets;
}

/** kubectl's name for an object in messages: `replicaset.apps/web`, `pod/x`. */
export function qualifiedName(def: KindDefinition, name: string): string {
  return `${def.singular}${def.group ? `.${def.group}` : ''}/${name}`;
}

export async function runScale(ctx: CliContext, args: ScaleArgs): Promise<number> {
  const replicas = parseCount(args.replicas, 'replicas');
  if (replicas === undefined) throw new CliError(REPLICAS_REQUIRED);
  const current = parseCount(args.currentReplicas, 'current-replicas');
  const targets = scaleTargets(args.resources);
  const client = ctx.client();
  for (const { def, name } of targets) {
    const path = `${kindObjectPath(def, name, ctx.namespace)}/scale`;
    if (current === undefined) {
      await client.request('PATCH', path, { body: { spec: { replicas } }, contentType: 'application/merge-patch+json' });
    } else {
      // The precondition holds for the write: the resourceVersion read makes a change in between a conflict.
      const scale = (await client.request('GET', path)) as ScaleLike;
      if ((scale.spec?.replicas ?? 0) !== current) throw new CliError(`Expected replicas to be ${current}, was ${scale.spec?.replicas ?? 0}`);
      await client.request('PUT', path, {
        body: {
          apiVersion: 'autoscaling/v1',
          kind: 'Scale',
          metadata: { name, namespace: ctx.namespace, resourceVersion: scale.metadata?.resourceVersion },
          spec: { replicas },
        },
      });
    }
    ctx.out(`${qualifiedName(def, name)} scaled\n`);
  }
  return 0;
}
