// `minik8s invoke NAME [--data JSON|@file]` and `minik8s invoke workflow NAME --data JSON`: one call through the activator, the answer printed.
import { readFile } from 'node:fs/promises';
import { functionKind } from '../core/api/function.js';
import { ACTIVATOR_INFO_PATH, functionUrl, workflowUrl } from '../core/api/activator-paths.js';
import { CliError } from './cli-error.js';
import { clusterCa, requestTrustingCa, type HttpAnswer } from './cluster-https.js';
import type { CliContext } from './context.js';

export interface InvokeArgs {
  /** The function's name, or `workflow` / `function` followed by `name`. */
  target?: string;
  name?: string;
  /** JSON (or any text), `@FILE`, or `@-` for stdin. */
  data?: string;
  /** Sub-path the handler sees as context.path, e.g. /users/7?x=1. */
  path?: string;
  method?: string;
  /** The activator's URL (default: $MINIK8S_ACTIVATOR, the function's status.url, what the master says). */
  activator?: string;
  env?: NodeJS.ProcessEnv;
}

export interface InvokeTarget {
  type: 'function' | 'workflow';
  name: string;
}

/** `NAME`, `function NAME`, `workflow NAME` (also `fn`, `wf`). */
export function invokeTarget(target: string | undefined, name: string | undefined): InvokeTarget {
  if (!target) throw new CliError('invoke needs a function: minik8s invoke NAME [--data JSON], or a workflow: minik8s invoke workflow NAME --data JSON');
  const word = target.toLowerCase();
  if (name !== undefined) {
    if (['workflow', 'workflows', 'wf'].includes(word)) return { type: 'workflow', name };
    if (['function', 'functions', 'fn'].includes(word)) return { type: 'function', name };
    throw new CliError(`unexpected argument "${name}": use minik8s invoke NAME, or minik8s invoke workflow NAME`);
  }
  if (['workflow', 'workflows', 'wf'].includes(word)) throw new CliError('invoke workflow needs a name: minik8s invoke workflow NAME --data JSON');
  return { type: 'function', name: target };
}

async function readStdin(stdin: NodeJS.ReadableStream): Promise<string> {
  let text = '';
  for await (const chunk of stdin) text += chunk.toString();
  return text;
}

/** The request body: the text given, a file's contents (@FILE) or stdin (@-). */
export async function readData(data: string | undefined, stdin: NodeJS.ReadableStream): Promise<string | undefined> {
  if (data === undefined) return undefined;
  if (data === '@-') return readStdin(stdin);
  if (data.startsWith('@')) {
    try {
      return await readFile(data.slice(1), 'utf8');
    } catch (err) {
      throw new CliError(`cannot read --data file ${data.slice(1)}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  }
  return data;
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** The activator's base URL when the function's own URL is not used: flag, environment, the master's answer, the API host on 8090 (the API's scheme). */
async function activatorBase(ctx: CliContext, args: InvokeArgs): Promise<string> {
  const explicit = args.activator ?? (args.env ?? process.env).MINIK8S_ACTIVATOR;
  if (explicit) return explicit;
  const client = ctx.client();
  try {
    const info = (await client.request('GET', ACTIVATOR_INFO_PATH)) as { url?: unknown };
    if (typeof info.url === 'string' && info.url) return info.url;
  } catch {
    /* an older master: guess below */
  }
  return `${client.server.protocol}//${client.hostPort.replace(/:\d+$/, '')}:8090`;
}

/** The full URL to call, before the sub-path and query. */
export async function invokeUrl(ctx: CliContext, args: InvokeArgs, target: InvokeTarget): Promise<string> {
  const explicit = args.activator ?? (args.env ?? process.env).MINIK8S_ACTIVATOR;
  if (target.type === 'workflow') return workflowUrl(await activatorBase(ctx, args), ctx.namespace, target.name);
  if (explicit) return functionUrl(explicit, ctx.namespace, target.name);
  // Reading the Function also says clearly when there is none.
  const fn = (await ctx.client().get(functionKind, { name: target.name, namespace: ctx.namespace })) as { status?: { url?: string } };
  if (fn.status?.url) return fn.status.url;
  return functionUrl(await activatorBase(ctx, args), ctx.namespace, target.name);
}

/** `sub/path?x=1` -> `/sub/path?x=1`. */
export function withSubPath(url: string, path: string | undefined): string {
  if (!path) return url;
  return `${url.replace(/\/+$/, '')}${path.startsWith('/') || path.startsWith('?') ? '' : '/'}${path}`;
}

/** The error line (and the function's traceback) for an answer of 400 or more. */
export function failureMessage(target: InvokeTarget, status: number, bodyText: string, invocationId: string | null, execution: string | null): string {
  let body: { message?: unknown; error?: unknown; cause?: unknown; traceback?: unknown; execution?: unknown; invocationId?: unknown } = {};
  try {
    const parsed = JSON.parse(bodyText) as unknown;
    if (parsed && typeof parsed === 'object') body = parsed as typeof body;
  } catch {
    /* not JSON */
  }
  const what = `${target.type} ${target.name}`;
  const reason =
    typeof body.error === 'string' ? body.error : typeof body.message === 'string' ? body.message : bodyText.trim().slice(0, 500) || `HTTP ${status}`;
  const cause = typeof body.cause === 'string' && body.cause ? `: ${body.cause}` : '';
  const id = invocationId ?? (typeof body.invocationId === 'string' ? body.invocationId : null);
  const exec = execution ?? (typeof body.execution === 'string' ? body.execution : null);
  const refs = [id ? `invocation ${id}` : '', exec ? `execution ${exec}` : ''].filter(Boolean).join(', ');
  let text = `error: ${what} failed (HTTP ${status}): ${reason}${cause}${refs ? ` (${refs})` : ''}\n`;
  if (typeof body.traceback === 'string' && body.traceback) text += body.traceback.endsWith('\n') ? body.traceback : `${body.traceback}\n`;
  return text;
}

/** TLS verification failures: the activator's certificate is not one the CA we trust signed, or does not name the host. */
const CERT_ERRORS = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

export async function runInvoke(ctx: CliContext, args: InvokeArgs): Promise<number> {
  const target = invokeTarget(args.target, args.name);
  const data = await readData(args.data, ctx.stdin);
  if (target.type === 'workflow' && data !== undefined && data.trim() && !isJson(data)) {
    throw new CliError('a workflow\'s input must be JSON: --data \'{"key": "value"}\'');
  }
  const method = (args.method ?? 'POST').toUpperCase();
  if (!/^[A-Z]+$/.test(method)) throw new CliError(`invalid --method "${args.method}"`);
  const url = withSubPath(await invokeUrl(ctx, args, target), target.type === 'function' ? args.path : undefined);
  const hasBody = data !== undefined && method !== 'GET' && method !== 'HEAD';
  let res: HttpAnswer;
  try {
    res = await requestTrustingCa(url, {
      method,
      headers: hasBody ? { 'content-type': isJson(data!) ? 'application/json' : 'text/plain; charset=utf-8' } : {},
      body: hasBody ? data : undefined,
      ca: url.startsWith('https:') ? clusterCa(ctx) : undefined,
      signal: ctx.signal,
    });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    const code = (err as NodeJS.ErrnoException).code;
    const origin = new URL(url).origin;
    if (code && CERT_ERRORS.has(code)) {
      throw new CliError(
        `cannot verify the activator at ${origin}: ${(err as Error).message} (its certificate must be signed by the cluster CA of your kubeconfig or config)`,
      );
    }
    throw new CliError(
      `cannot reach the activator at ${origin}: ${code ?? (err as Error).message} (is the master running? set --activator or $MINIK8S_ACTIVATOR)`,
    );
  }
  const text = res.text;
  if (res.status >= 400) {
    ctx.err(failureMessage(target, res.status, text, res.header('x-minik8s-invocation-id'), res.header('x-minik8s-execution')));
    return 1;
  }
  ctx.out(text.endsWith('\n') || text === '' ? text : `${text}\n`);
  return 0;
}
