// `minik8s function logs NAME [-f] [--tail N]`: the logs of a function's pods (every version), each line prefixed with its pod; -f follows pods as they come and go.
import { FUNCTION_LABEL, functionKind } from '../core/api/function.js';
import { podKind, type Pod } from '../core/api/pod.js';
import { kindObjectPath } from '../core/client/api-client.js';
import { streamRequest } from '../core/client/stream-request.js';
import { ApiError, GoneError, NotFoundError } from '../core/errors.js';
import { CliError } from './cli-error.js';
import type { CliContext } from './context.js';
import { parseTail } from './logs.js';

export interface FunctionLogsArgs {
  name?: string;
  follow: boolean;
  tail?: string;
}

/** Splits streamed text into whole lines, each prefixed; a partial last line waits for its end. */
export class LinePrefixer {
  #partial = '';
  readonly #decoder = new TextDecoder();
  constructor(
    readonly prefix: string,
    readonly write: (text: string) => void,
  ) {}

  push(chunk: Buffer): void {
    const text = this.#partial + this.#decoder.decode(chunk, { stream: true });
    const lines = text.split('\n');
    this.#partial = lines.pop() ?? '';
    if (lines.length) this.write(lines.map((l) => `${this.prefix}${l}\n`).join(''));
  }

  end(): void {
    const rest = this.#partial + this.#decoder.decode();
    this.#partial = '';
    if (rest) this.write(`${this.prefix}${rest}\n`);
  }
}

function started(pod: Pod): boolean {
  return (pod.status?.containerStatuses ?? []).some((c) => c.name === 'function' && (c.state?.running || c.state?.terminated || c.lastState?.terminated));
}

export async function runFunctionLogs(ctx: CliContext, args: FunctionLogsArgs): Promise<number> {
  const name = args.name;
  if (!name) throw new CliError('function logs needs a name: minik8s function logs NAME');
  const tailLines = parseTail(args.tail);
  const client = ctx.client();
  try {
    await client.get(functionKind, { namespace: ctx.namespace, name });
  } catch (err) {
    if (err instanceof NotFoundError) throw new CliError(`function "${name}" not found${ctx.namespace !== 'default' ? ` in namespace ${ctx.namespace}` : ''}`);
    throw err;
  }
  const selector = `${FUNCTION_LABEL}=${name}`;
  const list = await client.list(podKind, { namespace: ctx.namespace, labelSelector: selector });
  const pods = (list.items as Pod[]).sort((a, b) => String(a.metadata.creationTimestamp).localeCompare(String(b.metadata.creationTimestamp)));
  const following = new Map<string, Promise<void>>();

  const stream = async (podName: string, follow: boolean) => {
    const out = new LinePrefixer(`[${podName}] `, ctx.out);
    try {
      const res = await streamRequest(client, 'GET', `${kindObjectPath(podKind, podName, ctx.namespace)}/log`, {
        query: { container: 'function', follow: follow ? 'true' : undefined, tailLines },
        signal: ctx.signal,
      });
      try {
        for await (const chunk of res) out.push(chunk as Buffer);
      } finally {
        res.destroy();
      }
    } catch (err) {
      // A pod that went (scaled to zero) or has not started yet has no log to show: not an error.
      if (!(err instanceof ApiError) && !ctx.signal?.aborted) throw err;
    } finally {
      out.end();
    }
  };

  if (!args.follow) {
    if (pods.length === 0) ctx.err(`function ${name} has no pods now (it is scaled to zero; invoke it to start one)\n`);
    for (const pod of pods) if (started(pod)) await stream(pod.metadata.name!, false);
    return 0;
  }

  const start = (pod: Pod) => {
    const podName = pod.metadata.name!;
    if (following.has(podName) || !started(pod) || pod.metadata.deletionTimestamp) return;
    following.set(
      podName,
      stream(podName, true).finally(() => following.delete(podName)),
    );
  };
  for (const pod of pods) start(pod);
  if (pods.length === 0) ctx.err(`function ${name} has no pods now; waiting for some (Ctrl-C to stop)\n`);
  // New pods (scale-out, a new version) join the output once their container runs.
  let resourceVersion = list.metadata.resourceVersion;
  while (!ctx.signal?.aborted) {
    try {
      for await (const event of client.watch(podKind, { namespace: ctx.namespace, labelSelector: selector, resourceVersion, signal: ctx.signal })) {
        resourceVersion = event.object?.metadata?.resourceVersion ?? resourceVersion;
        if (event.type === 'ADDED' || event.type === 'MODIFIED') start(event.object as Pod);
      }
    } catch (err) {
      if (ctx.signal?.aborted) break;
      if (err instanceof GoneError) {
        resourceVersion = (await client.list(podKind, { namespace: ctx.namespace, labelSelector: selector })).metadata.resourceVersion;
        continue;
      }
      throw err;
    }
  }
  await Promise.allSettled([...following.values()]);
  return 0;
}
