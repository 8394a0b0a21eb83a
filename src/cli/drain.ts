// `minik8s drain NODE`: cordons the node, then evicts its pods (refusing unmanaged and emptyDir ones unless told) and waits until they are gone, as kubectl drain does.
import type { Pod } from '../core/api/pod.js';
import { kindCollectionPath, type ApiClient } from '../core/client/api-client.js';
import { ApiError, NotFoundError } from '../core/errors.js';
import { CliError, ConnectionError } from './cli-error.js';
import type { CliContext } from './context.js';
import { setUnschedulable } from './cordon.js';

const PODS = { group: '', version: 'v1', resource: 'pods', namespaced: true } as const;
const MIRROR_ANNOTATION = 'kubernetes.io/config.mirror';

export interface DrainArgs {
  node?: string;
  /** Evict pods that no controller manages (they will not come back). */
  force?: boolean;
  /** Evict pods with emptyDir volumes (their data is lost). */
  deleteEmptydirData?: boolean;
  /** Leave DaemonSet-managed pods in place (a DaemonSet would recreate them here anyway). */
  ignoreDaemonsets?: boolean;
  /** Seconds each pod gets to stop; negative or unset: the pod's own terminationGracePeriodSeconds. */
  gracePeriod?: string;
  /** How long evicting and waiting may take in all, e.g. 90s or 5m; 0 or unset: no limit, as kubectl. */
  timeout?: string;
}

/** What drain does with a node's pods: which to evict, and what stops it or deserves a warning. */
export interface DrainPlan {
  evict: Pod[];
  /** Each `reason: ns/a, ns/b`, as kubectl words them. */
  errors: string[];
  warnings: string[];
}

const FATAL = {
  daemonSet: 'cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore)',
  localStorage: 'cannot delete Pods with local storage (use --delete-emptydir-data to override)',
  unmanaged: 'cannot delete Pods that declare no controller (use --force to override)',
};
const WARNING = {
  daemonSet: 'ignoring DaemonSet-managed Pods',
  localStorage: 'deleting Pods with local storage',
  unmanaged: 'deleting Pods that declare no controller',
};

function finished(pod: Pod): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}

/**
 * Pure: kubectl's drain filters in its order (mirror pods skipped, DaemonSet pods, local
 * storage, unmanaged pods). The first filter that refuses a pod decides its error; finished
 * pods lose nothing by going, so only the DaemonSet rule applies to them.
 */
export function planDrain(pods: readonly Pod[], flags: Pick<DrainArgs, 'force' | 'deleteEmptydirData' | 'ignoreDaemonsets'>): DrainPlan {
  const errors = new Map<string, string[]>();
  const warnings = new Map<string, string[]>();
  const note = (to: Map<string, string[]>, reason: string, pod: Pod) => {
    const list = to.get(reason) ?? [];
    list.push(`${pod.metadata.namespace}/${pod.metadata.name}`);
    to.set(reason, list);
  };
  const evict: Pod[] = [];
  for (const pod of pods) {
    if (pod.metadata.annotations?.[MIRROR_ANNOTATION] !== undefined) continue;
    const controller = pod.metadata.ownerReferences?.find((o) => o.controller);
    if (controller?.kind === 'DaemonSet') {
      if (flags.ignoreDaemonsets) note(warnings, WARNING.daemonSet, pod);
      else note(errors, FATAL.daemonSet, pod);
      continue;
    }
    if (!finished(pod) && pod.spec.volumes?.some((vol) => vol.emptyDir !== undefined)) {
      if (!flags.deleteEmptydirData) {
        note(errors, FATAL.localStorage, pod);
        continue;
      }
      note(warnings, WARNING.localStorage, pod);
    }
    if (!finished(pod) && !controller) {
      if (!flags.force) {
        note(errors, FATAL.unmanaged, pod);
        continue;
      }
      note(warnings, WARNING.unmanaged, pod);
    }
    evict.push(pod);
  }
  // In the filters' order, whatever order the pods came in.
  const lines = (m: Map<string, string[]>, order: Record<string, string>) =>
    Object.values(order)
      .filter((reason) => m.has(reason))
      .map((reason) => `${reason}: ${m.get(reason)!.join(', ')}`);
  return { evict, errors: lines(errors, FATAL), warnings: lines(warnings, WARNING) };
}

/** A Go duration as kubectl takes it (`90s`, `5m`, `1m30s`, `500ms`, `0`) in ms; undefined for 0 (no limit). */
export function parseDrainTimeout(text: string | undefined): number | undefined {
  if (text === undefined || text.trim() === '' || /^0+$/.test(text.trim())) return undefined;
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;
  let ms = 0;
  let rest = text.trim();
  while (rest) {
    const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)/.exec(rest);
    if (!m) throw new CliError(`invalid --timeout "${text}": use a duration such as 90s, 5m or 1m30s (0: no limit)`);
    ms += Number(m[1]) * unit[m[2] as keyof typeof unit];
    rest = rest.slice(m[0].length);
  }
  return ms > 0 ? ms : undefined;
}

/** kubectl's --grace-period: a whole number of seconds; negative means the pod's own. */
export function parseDrainGracePeriod(text: string | undefined): number | undefined {
  if (text === undefined || text === '') return undefined;
  if (!/^-?\d+$/.test(text.trim())) throw new CliError(`invalid --grace-period "${text}": a whole number of seconds (-1: each pod's own)`);
  const n = Number(text);
  return n < 0 ? undefined : n;
}

/** kubectl's closing words when a node could not be drained. */
export function drainFailure(node: string, errors: readonly string[]): string {
  const summary = errors.length === 1 ? errors[0] : `[${errors.join(', ')}]`;
  return `error: unable to drain node "${node}" due to error: ${summary}, continuing command...\nThere are pending nodes to be drained:\n ${node}\n${errors.join('\n')}\n`;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Posts the pod's Eviction; false when it is gone already. A 429 (a disruption budget, elsewhere) is retried every 5 s, as kubectl does. */
async function evict(ctx: CliContext, pod: Pod, gracePeriodSeconds: number | undefined, deadline: number): Promise<boolean> {
  const { namespace, name } = pod.metadata as { namespace: string; name: string };
  const body = {
    apiVersion: 'policy/v1',
    kind: 'Eviction',
    metadata: { name, namespace },
    ...(gracePeriodSeconds !== undefined ? { deleteOptions: { gracePeriodSeconds } } : {}),
  };
  for (;;) {
    try {
      await ctx.client().request('POST', `${kindCollectionPath(PODS, namespace)}/${encodeURIComponent(name)}/eviction`, { body });
      return true;
    } catch (err) {
      if (err instanceof NotFoundError) return false;
      if (err instanceof ApiError && err.code === 429 && Date.now() + 5000 < deadline) {
        ctx.err(`error when evicting pods/"${name}" -n "${namespace}" (will retry after 5s): ${err.message}\n`);
        await sleep(5000);
        continue;
      }
      throw err;
    }
  }
}

/** Waits until the pod is gone (or replaced by a new one of the same name); false at the deadline. */
async function waitGone(client: ApiClient, pod: Pod, deadline: number): Promise<boolean> {
  const path = `${kindCollectionPath(PODS, pod.metadata.namespace)}/${encodeURIComponent(pod.metadata.name!)}`;
  for (let delay = 50; ; delay = Math.min(delay * 2, 500)) {
    try {
      const current = (await client.request('GET', path)) as Pod;
      if (current.metadata.uid !== pod.metadata.uid) return true;
    } catch (err) {
      if (err instanceof NotFoundError) return true;
      throw err;
    }
    if (Date.now() + delay > deadline) return false;
    await sleep(delay);
  }
}

export async function runDrain(ctx: CliContext, args: DrainArgs): Promise<number> {
  const node = args.node;
  if (!node) throw new CliError("USAGE: drain NODE [flags]\nSee 'minik8s drain --help' for help and examples");
  const gracePeriodSeconds = parseDrainGracePeriod(args.gracePeriod);
  const timeoutMs = parseDrainTimeout(args.timeout);
  const client = ctx.client();

  const changed = await setUnschedulable(client, node, true);
  ctx.out(`node/${node} ${changed ? '' : 'already '}cordoned\n`);

  const list = (await client.request('GET', kindCollectionPath(PODS), { query: { fieldSelector: `spec.nodeName=${node}` } })) as { items?: Pod[] };
  const plan = planDrain(list.items ?? [], args);
  if (plan.errors.length > 0) {
    ctx.err(drainFailure(node, plan.errors));
    return 1;
  }
  if (plan.warnings.length > 0) ctx.err(`Warning: ${plan.warnings.join('; ')}\n`);

  const deadline = timeoutMs === undefined ? Infinity : Date.now() + timeoutMs;
  const failures: string[] = [];
  const evicted: Pod[] = [];
  for (const pod of plan.evict) {
    ctx.out(`evicting pod ${pod.metadata.namespace}/${pod.metadata.name}\n`);
    try {
      await evict(ctx, pod, gracePeriodSeconds, deadline);
      evicted.push(pod);
    } catch (err) {
      if (err instanceof ConnectionError) throw err;
      failures.push(`error when evicting pods/"${pod.metadata.name}" -n "${pod.metadata.namespace}": ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  await Promise.all(
    evicted.map(async (pod) => {
      if (await waitGone(client, pod, deadline)) {
        ctx.out(`pod/${pod.metadata.name} evicted\n`);
      } else {
        failures.push(
          `error when waiting for pod "${pod.metadata.name}" in namespace "${pod.metadata.namespace}" to terminate: global timeout reached: ${args.timeout}`,
        );
      }
    }),
  );
  if (failures.length > 0) {
    ctx.err(drainFailure(node, failures));
    return 1;
  }
  ctx.out(`node/${node} drained\n`);
  return 0;
}
