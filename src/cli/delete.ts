// `minik8s delete KIND NAME... | -f FILE`: deletes objects, with kubectl's --cascade policies.
import type { KindDefinition } from '../core/api/kind.js';
import { NotFoundError } from '../core/errors.js';
import type { PropagationPolicy } from '../core/client/client.js';
import { CliError, ConnectionError, formatError } from './cli-error.js';
import type { CliContext } from './context.js';
import { manifestNamespace, readManifests } from './manifests.js';
import { kindRef } from './printers.js';
import { parseResourceArgs } from './resolve-kind.js';
import { customKindsFor, loadCustomKinds } from './custom-kinds.js';

export interface DeleteArgs {
  resources: string[];
  filename?: string[];
  recursive?: boolean;
  cascade?: string;
  selector?: string;
  all?: boolean;
  ignoreNotFound?: boolean;
  /** Seconds a pod gets to stop (-1 or unset: its own terminationGracePeriodSeconds). */
  gracePeriod?: string;
  /** --now: a grace period of 1 s. */
  now?: boolean;
  /** --force with --grace-period=0: gone from the API at once, without waiting for the kubelet. */
  force?: boolean;
  /** Wait until the objects are gone (default true, as kubectl). */
  wait?: boolean;
  /** How long --wait may take, e.g. 60s, 2m (default: no limit). */
  timeout?: string;
}

/** kubectl's --grace-period, --now and --force, as the DeleteOptions grace period to send (undefined: the object's own). */
export function gracePeriodOf(args: Pick<DeleteArgs, 'gracePeriod' | 'now' | 'force'>): number | undefined {
  if (args.now && args.gracePeriod !== undefined && args.gracePeriod !== '-1') throw new CliError('--now and --grace-period cannot be specified together');
  if (args.now) return 1;
  if (args.gracePeriod === undefined || args.gracePeriod === '-1') {
    if (args.force) throw new CliError('--force needs --grace-period=0 (delete immediately, without waiting for the containers to stop)');
    return undefined;
  }
  if (!/^\d+$/.test(args.gracePeriod)) throw new CliError(`invalid --grace-period "${args.gracePeriod}": a whole number of seconds, or -1`);
  const seconds = Number(args.gracePeriod);
  // As in kubectl: 0 without --force means "as fast as possible" (1 s), since the kubelet still has to stop the containers.
  if (seconds === 0 && !args.force) return 1;
  return seconds;
}

/** A duration such as 30s, 2m, 1h or 500ms; 0 means no limit. */
export function parseTimeout(text: string | undefined): number | undefined {
  if (text === undefined || text === '' || text === '0') return undefined;
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(text.trim());
  if (!m) throw new CliError(`invalid --timeout "${text}": use a duration such as 30s, 2m or 1h`);
  return Number(m[1]) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] as 'ms' | 's' | 'm' | 'h'];
}

/** `--cascade`: kubectl's words, plus its older true/false. */
export function propagationPolicyOf(cascade: string | undefined): PropagationPolicy | undefined {
  switch ((cascade ?? '').toLowerCase()) {
    case '':
      return undefined;
    case 'background':
    case 'true':
      return 'Background';
    case 'foreground':
      return 'Foreground';
    case 'orphan':
    case 'false':
      return 'Orphan';
    default:
      throw new CliError(`invalid cascade value (${cascade}). Must be "background", "foreground", or "orphan"`);
  }
}

interface Victim {
  def: KindDefinition;
  name: string;
  namespace?: string;
}

async function victimsFromArgs(ctx: CliContext, args: DeleteArgs): Promise<Victim[]> {
  if (args.filename?.length) {
    if (args.resources.length) throw new CliError('resource(s) were provided, but no name was specified; use either -f or resource arguments, not both');
    const manifests = await readManifests(args.filename, {
      stdin: ctx.stdin,
      recursive: args.recursive,
      verb: 'delete',
      loadCustomKinds: () => loadCustomKinds(ctx),
    });
    return manifests.map((m) => {
      if (!m.object.metadata.name) throw new CliError(`resource name may not be empty (from "${m.source}")`);
      return { def: m.def, name: m.object.metadata.name, namespace: manifestNamespace(m, ctx) };
    });
  }
  if (args.resources.length === 0) throw new CliError('You must provide one or more resources by argument or filename.');
  await customKindsFor(ctx, args.resources);
  const { targets } = parseResourceArgs(args.resources);
  const victims: Victim[] = [];
  for (const { def, names } of targets) {
    const namespace = def.namespaced ? ctx.namespace : undefined;
    if (names.length > 0) {
      if (args.selector || args.all) throw new CliError('name cannot be provided when a selector or --all is specified');
      victims.push(...names.map((name) => ({ def, name, namespace })));
    } else if (args.selector || args.all) {
      const list = await ctx.client().list(def, { namespace, labelSelector: args.selector });
      victims.push(...list.items.map((o) => ({ def, name: o.metadata.name ?? '', namespace })));
    } else {
      throw new CliError('resource(s) were provided, but no name was specified');
    }
  }
  return victims;
}

export async function runDelete(ctx: CliContext, args: DeleteArgs): Promise<number> {
  const propagationPolicy = propagationPolicyOf(args.cascade);
  const gracePeriodSeconds = gracePeriodOf(args);
  const timeoutMs = parseTimeout(args.timeout);
  const victims = await victimsFromArgs(ctx, args);
  if (victims.length === 0) {
    // Only a selector or --all can match nothing; kubectl says so on stderr and succeeds.
    ctx.err('No resources found\n');
    return 0;
  }
  let failed = false;
  const deleted: { victim: Victim; uid?: string }[] = [];
  for (const victim of victims) {
    const { def, name, namespace } = victim;
    try {
      const obj = await ctx.client().delete(def, { name, namespace }, { propagationPolicy, gracePeriodSeconds });
      ctx.out(`${kindRef(def)} "${name}" deleted\n`);
      deleted.push({ victim, uid: obj?.metadata?.uid });
    } catch (err) {
      if (err instanceof ConnectionError) throw err;
      if (err instanceof NotFoundError && args.ignoreNotFound) continue;
      failed = true;
      ctx.err(formatError(err));
    }
  }
  if (args.wait !== false && deleted.length > 0) {
    const deadline = timeoutMs === undefined ? Infinity : Date.now() + timeoutMs;
    for (const { victim, uid } of deleted) {
      if (!(await waitGone(ctx, victim, uid, deadline))) {
        ctx.err(`error: timed out waiting for ${kindRef(victim.def)} "${victim.name}" to be deleted\n`);
        return 1;
      }
    }
  }
  return failed ? 1 : 0;
}

/**
 * Polls until the object is gone (or replaced by a new one of the same name), as kubectl's
 * --wait does: a pod on a node lingers until its kubelet has stopped the containers.
 */
async function waitGone(ctx: CliContext, { def, name, namespace }: Victim, uid: string | undefined, deadline: number): Promise<boolean> {
  for (let delay = 50; ; delay = Math.min(delay * 2, 500)) {
    try {
      const obj = await ctx.client().get(def, { name, namespace });
      if (uid && obj.metadata.uid !== uid) return true;
    } catch (err) {
      if (err instanceof NotFoundError) return true;
      throw err;
    }
    if (Date.now() + delay > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}
