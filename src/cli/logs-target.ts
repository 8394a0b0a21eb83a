// Which pod `logs TYPE/NAME` reads: the pod itself, or one pod of a workload or service picked as kubectl picks it.
import type { Pod } from '../core/api/pod.js';
import { podKind } from '../core/api/pod.js';
import { formatSelector, selectorFromLabelSelector, selectorFromMap } from '../core/api/selector.js';
import { CliError } from './cli-error.js';
import type { CliContext } from './context.js';
import { resolveKind } from './resolve-kind.js';

/**
 * kubectl's order for choosing among a workload's pods: scheduled before not, running before
 * pending before the rest, ready before not, then the one that has been ready longest, the
 * most restarted last, and the newest first.
 */
export function byLoggingPreference(a: Pod, b: Pod): number {
  const phaseRank = (p: Pod) => ({ Running: 0, Pending: 1 })[(p.status as { phase?: string } | undefined)?.phase ?? ''] ?? 2;
  const ready = (p: Pod) =>
    ((p.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
  const restarts = (p: Pod) =>
    ((p.status as { containerStatuses?: { restartCount?: number }[] } | undefined)?.containerStatuses ?? []).reduce((n, c) => n + (c.restartCount ?? 0), 0);
  const scheduled = (p: Pod) => Boolean((p.spec as { nodeName?: string }).nodeName);
  return (
    Number(scheduled(b)) - Number(scheduled(a)) ||
    phaseRank(a) - phaseRank(b) ||
    Number(ready(b)) - Number(ready(a)) ||
    restarts(a) - restarts(b) ||
    (b.metadata.creationTimestamp ?? '').localeCompare(a.metadata.creationTimestamp ?? '')
  );
}

/** The label selector of a workload (spec.selector as a LabelSelector) or a service (spec.selector as a map). */
function selectorOf(kind: string, spec: Record<string, unknown> | undefined): string {
  const sel = spec?.selector as Record<string, unknown> | undefined;
  if (!sel) throw new CliError(`cannot get logs of a ${kind} without a selector`);
  const selector = kind === 'Service' ? selectorFromMap(sel as Record<string, string>) : selectorFromLabelSelector(sel);
  return formatSelector(selector);
}

/** The pod name for `logs ARG`: POD, pod/POD, or deploy|rs|svc|job/NAME resolved to one of its pods (said on stderr when there are several). */
export async function logsPod(ctx: CliContext, arg: string | undefined): Promise<string> {
  if (!arg) throw new CliError('logs requires a pod name: minik8s logs POD or TYPE/NAME');
  const slash = arg.indexOf('/');
  if (slash < 0) return arg;
  const def = resolveKind(arg.slice(0, slash));
  const name = arg.slice(slash + 1);
  if (!name) throw new CliError('arguments in resource/name form must have a single resource and name');
  if (def.kind === 'Pod') return name;
  const owner = await ctx.client().get(def, { namespace: ctx.namespace, name });
  const labelSelector = selectorOf(def.kind, owner.spec as Record<string, unknown> | undefined);
  const pods = (await ctx.client().list(podKind, { namespace: ctx.namespace, labelSelector })).items as unknown as Pod[];
  if (pods.length === 0) throw new CliError(`no pods found for ${def.singular} ${name}`);
  const chosen = [...pods].sort(byLoggingPreference)[0]!;
  if (pods.length > 1) ctx.err(`Found ${pods.length} pods, using pod/${chosen.metadata.name}\n`);
  return chosen.metadata.name ?? '';
}
