// `minik8s autoscale deployment NAME --min N --max M --cpu-percent P`: creates a HorizontalPodAutoscaler for a scalable workload, as kubectl autoscale does.
import { horizontalPodAutoscalerKind } from '../core/api/horizontalpodautoscaler.js';
import { apiVersionOf } from '../core/api/kind.js';
import { CliError } from './cli-error.js';
import type { CliContext } from './context.js';
import { qualifiedName, scaleTargets } from './scale.js';

export interface AutoscaleArgs {
  resources: string[];
  min?: string;
  max?: string;
  cpuPercent?: string;
  /** The HPA's name (default: the target's). */
  name?: string;
}

function wholeNumber(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^-?\d+$/.test(value.trim()) || !Number.isSafeInteger(Number(value)))
    throw new CliError(`invalid argument "${value}" for "--${flag}" flag: must be a whole number`);
  return Number(value);
}

/** The HPA `autoscale` creates for one target: kubectl's flags and checks, an autoscaling/v2 object. */
export function autoscalerFor(
  target: { apiVersion: string; kind: string; name: string },
  args: Omit<AutoscaleArgs, 'resources'>,
  namespace: string,
): Record<string, unknown> {
  const max = wholeNumber(args.max, 'max');
  const min = wholeNumber(args.min, 'min');
  const cpu = wholeNumber(args.cpuPercent, 'cpu-percent');
  if (max === undefined || max < 1) throw new CliError(`--max=MAXPODS is required and must be at least 1, max: ${max ?? -1}`);
  if (min !== undefined && min !== -1 && min < 1) throw new CliError(`--min=MINPODS must be at least 1, min: ${min}`);
  if (min !== undefined && min !== -1 && max < min) throw new CliError(`--max=MAXPODS must be larger or equal to --min=MINPODS, max: ${max}, min: ${min}`);
  if (cpu !== undefined && cpu !== -1 && cpu < 1) throw new CliError(`--cpu-percent must be at least 1, cpu-percent: ${cpu}`);
  return {
    apiVersion: apiVersionOf(horizontalPodAutoscalerKind),
    kind: horizontalPodAutoscalerKind.kind,
    metadata: { name: args.name ?? target.name, namespace },
    spec: {
      scaleTargetRef: target,
      ...(min !== undefined && min !== -1 ? { minReplicas: min } : {}),
      maxReplicas: max,
      // Without --cpu-percent the server's default applies (80% of the pods' cpu requests).
      ...(cpu !== undefined && cpu !== -1
        ? { metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: cpu } } }] }
        : {}),
    },
  };
}

export async function runAutoscale(ctx: CliContext, args: AutoscaleArgs): Promise<number> {
  const targets = scaleTargets(args.resources);
  if (args.name !== undefined && targets.length > 1) throw new CliError('--name can only be used with a single resource');
  // Checked for every target before anything is created.
  const bodies = targets.map(({ def, name }) => ({
    def,
    name,
    body: autoscalerFor({ apiVersion: apiVersionOf(def), kind: def.kind, name }, args, ctx.namespace),
  }));
  const client = ctx.client();
  for (const { def, name, body } of bodies) {
    // As kubectl: the target must exist (its NotFound is the error shown).
    await client.get(def, { namespace: ctx.namespace, name });
    await client.create(horizontalPodAutoscalerKind, body, { namespace: ctx.namespace });
    ctx.out(`${qualifiedName(horizontalPodAutoscalerKind, (body.metadata as { name: string }).name)} autoscaled\n`);
  }
  return 0;
}
