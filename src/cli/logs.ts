// `minik8s logs POD [-c C] [-f] [--tail N] [-p] [--timestamps]`: a container's log from its node, streamed to stdout.
import { podKind, type Pod } from '../core/api/pod.js';
import { kindObjectPath } from '../core/client/api-client.js';
import { streamRequest } from '../core/client/stream-request.js';
import { CliError } from './cli-error.js';
import type { CliContext } from './context.js';
import { logsPod } from './logs-target.js';

export interface LogsArgs {
  pod?: string;
  container?: string;
  follow?: boolean;
  tail?: string;
  previous?: boolean;
  timestamps?: boolean;
}

/** The annotation kubectl reads to pick a container when none is named. */
export const DEFAULT_CONTAINER_ANNOTATION = 'kubectl.kubernetes.io/default-container';

/** `web`, `pod/web`, `pods/web` or `po/web` -> `web`; other types are not supported here. */
export function podName(arg: string | undefined, command: string): string {
  if (!arg) throw new CliError(`${command} requires a pod name: minik8s ${command} POD`);
  const slash = arg.indexOf('/');
  if (slash < 0) return arg;
  const type = arg.slice(0, slash).toLowerCase();
  const name = arg.slice(slash + 1);
  if (!['pod', 'pods', 'po'].includes(type) || !name) throw new CliError(`cannot ${command} "${arg}": only pods are supported (POD or pod/POD)`);
  return name;
}

/**
 * The container meant when none is named, as kubectl picks it: the annotated default, else
 * the only or first one; with several, says which it chose (on stderr) so the user knows.
 */
export function defaultContainer(pod: Pod): { name: string; notice?: string } {
  const names = pod.spec.containers.map((c) => c.name);
  const annotated = pod.metadata.annotations?.[DEFAULT_CONTAINER_ANNOTATION];
  const name = annotated && names.includes(annotated) ? annotated : names[0];
  if (!name) throw new CliError(`pod ${pod.metadata.name ?? ''} has no containers`);
  return names.length > 1 ? { name, notice: `Defaulted container "${name}" out of: ${names.join(', ')}\n` } : { name };
}

/** The container named with -c, or the pod's default (one GET of the pod). */
export async function containerFor(ctx: CliContext, name: string, container: string | undefined): Promise<string> {
  if (container) return container;
  const pod = (await ctx.client().get(podKind, { namespace: ctx.namespace, name })) as Pod;
  const chosen = defaultContainer(pod);
  if (chosen.notice) ctx.err(chosen.notice);
  return chosen.name;
}

/** `--tail`: -1 (the default) means everything. */
export function parseTail(value: string | undefined): string | undefined {
  if (value === undefined || value === '' || value === '-1') return undefined;
  if (!/^\d+$/.test(value)) throw new CliError(`invalid argument "${value}" for "--tail" flag: must be a whole number (or -1 for all lines)`);
  return value;
}

export async function runLogs(ctx: CliContext, args: LogsArgs): Promise<number> {
  const name = await logsPod(ctx, args.pod);
  const tailLines = parseTail(args.tail);
  const container = await containerFor(ctx, name, args.container);
  const res = await streamRequest(ctx.client(), 'GET', `${kindObjectPath(podKind, name, ctx.namespace)}/log`, {
    query: {
      container,
      follow: args.follow ? 'true' : undefined,
      tailLines,
      previous: args.previous ? 'true' : undefined,
      timestamps: args.timestamps ? 'true' : undefined,
    },
    signal: ctx.signal,
  });
  // stream: true keeps a character split across chunks whole.
  const decoder = new TextDecoder();
  try {
    for await (const chunk of res) {
      const text = decoder.decode(chunk as Buffer, { stream: true });
      if (text) ctx.out(text);
    }
    const rest = decoder.decode();
    if (rest) ctx.out(rest);
  } catch (err) {
    // Ctrl-C (or the caller's signal) ends a follow; that is success, not an error.
    if (ctx.signal?.aborted) return 0;
    throw err;
  } finally {
    res.destroy();
  }
  return 0;
}
