// Follows a Function after a create, update or rollback until its version serves or its build fails, printing the build's steps.
import { functionKind, type FunctionObject } from '../core/api/function.js';
import { ApiError, GoneError, NotFoundError } from '../core/errors.js';
import { CliError } from './cli-error.js';
import type { CliContext } from './context.js';

export interface WaitTarget {
  name: string;
  namespace: string;
  /** The build request the command sent (annotation): the status must answer this one. */
  request: string;
  /** The generation the command's write produced: the controller must have seen it. */
  generation: number;
  /** For rollback: the version that must end up serving. */
  version?: number;
}

export type WaitOutcome =
  | { done: false; progress?: string }
  | { done: true; ok: true; version: number; url?: string; note?: string }
  | { done: true; ok: false; version: number; message: string };

/** Where a Function stands for the command that wrote it: still building (with the step to show), serving, or failed. Pure. */
export function waitOutcome(fn: FunctionObject, target: WaitTarget): WaitOutcome {
  const status = fn.status ?? {};
  const build = status.build;
  if ((status.observedGeneration ?? 0) < target.generation || !build || build.request !== target.request) return { done: false };
  if (build.phase === 'Failed') return { done: true, ok: false, version: build.version, message: build.message ?? 'the build failed' };
  if (build.phase === 'Building') return { done: false, progress: `building version ${build.version}: ${build.step ?? 'queued'}` };
  const wanted = target.version ?? build.version;
  if (status.version !== wanted) return { done: false, progress: `rolling to version ${wanted}` };
  return { done: true, ok: true, version: wanted, ...(status.url ? { url: status.url } : {}), ...(build.message ? { note: build.message } : {}) };
}

/** Watches the Function until waitOutcome says done; prints each new progress line. Throws a CliError for a failed build. */
export async function waitForFunction(ctx: CliContext, target: WaitTarget): Promise<Extract<WaitOutcome, { done: true; ok: true }>> {
  const client = ctx.client();
  let last = '';
  const check = (fn: FunctionObject) => {
    const outcome = waitOutcome(fn, target);
    if (!outcome.done) {
      if (outcome.progress && outcome.progress !== last) {
        last = outcome.progress;
        ctx.out(`${outcome.progress}\n`);
      }
      return undefined;
    }
    if (!outcome.ok) throw new CliError(`function ${target.name}: version ${outcome.version} could not be built: ${outcome.message}`);
    return outcome;
  };
  const gone = () => new CliError(`function ${target.name} was deleted while waiting for it`);
  for (;;) {
    if (ctx.signal?.aborted) throw new CliError('interrupted: the build goes on in the cluster (see minik8s describe function)');
    let fn: FunctionObject;
    try {
      fn = (await client.get(functionKind, { namespace: target.namespace, name: target.name })) as FunctionObject;
    } catch (err) {
      if (err instanceof NotFoundError) throw gone();
      throw err;
    }
    const first = check(fn);
    if (first) return first;
    try {
      for await (const event of client.watch(functionKind, {
        namespace: target.namespace,
        fieldSelector: `metadata.name=${target.name}`,
        resourceVersion: fn.metadata.resourceVersion,
        signal: ctx.signal,
      })) {
        if (event.type === 'BOOKMARK') continue;
        if (event.type === 'DELETED') throw gone();
        const result = check(event.object as FunctionObject);
        if (result) return result;
      }
    } catch (err) {
      // A compacted revision or a dropped watch: read again and go on watching; refusals and our own verdicts end it.
      if (err instanceof CliError || ctx.signal?.aborted || (err instanceof ApiError && !(err instanceof GoneError))) throw err;
      if (!(err instanceof GoneError)) await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}
