// `minik8s wait TYPE/NAME --for=condition=C|delete|create|jsonpath='{...}'=V --timeout=D`: polls the objects until each meets the condition, as kubectl wait does.
import type { KindDefinition } from '../core/api/kind.js';
import type { KubeObject } from '../core/api/meta.js';
import { NotFoundError } from '../core/errors.js';
import { CliError } from './cli-error.js';
import type { CliContext } from './context.js';
import { evaluate, formatValue, parsePath } from './jsonpath.js';
import { objectRef } from './printers.js';
import { parseResourceArgs } from './resolve-kind.js';

export interface WaitArgs {
  resources: string[];
  for?: string;
  timeout?: string;
  selector?: string;
  all?: boolean;
  /** Poll interval; tests shorten it. */
  intervalMs?: number;
}

export type WaitCondition =
  | { type: 'delete' }
  | { type: 'create' }
  | { type: 'condition'; name: string; value: string }
  | { type: 'jsonpath'; path: ReturnType<typeof parsePath>; value?: string };

/** Parses --for as kubectl does; its errors for the rest. */
export function parseFor(text: string | undefined): WaitCondition {
  if (!text)
    throw new CliError(
      "--for must be specified: delete, create, condition=condition-name[=condition-value] or jsonpath='{JSONPath expression}'=[JSONPath value]",
    );
  const lower = text.toLowerCase();
  if (lower === 'delete') return { type: 'delete' };
  if (lower === 'create') return { type: 'create' };
  if (lower.startsWith('condition=')) {
    const [name, value] = text.slice('condition='.length).split('=', 2);
    if (!name) throw new CliError('--for=condition needs a condition name, e.g. --for=condition=Ready');
    return { type: 'condition', name, value: value ?? 'true' };
  }
  if (lower.startsWith('jsonpath=')) {
    let rest = text.slice('jsonpath='.length);
    // The expression is in braces (kubectl also takes it bare); the value, if any, follows the last '='.
    const close = rest.lastIndexOf('}');
    let expr: string;
    let value: string | undefined;
    if (rest.startsWith('{') && close > 0) {
      expr = rest.slice(1, close);
      rest = rest.slice(close + 1);
      if (rest !== '' && !rest.startsWith('=')) throw new CliError(`unrecognized condition: "${text}"`);
      value = rest === '' ? undefined : rest.slice(1);
    } else {
      const eq = rest.lastIndexOf('=');
      [expr, value] = eq >= 0 ? [rest.slice(0, eq), rest.slice(eq + 1)] : [rest, undefined];
    }
    if (expr.trim() === '') throw new CliError('jsonpath expression cannot be empty');
    return { type: 'jsonpath', path: parsePath(expr.startsWith('.') || expr.startsWith('$') || expr.startsWith('@') ? expr : `.${expr}`), value };
  }
  throw new CliError(`unrecognized condition: "${text}"`);
}

/** A Go duration (`30s`, `1m30s`, `0`) in milliseconds. */
export function parseTimeout(text: string | undefined): number {
  if (text === undefined) return 30_000;
  const t = text.trim();
  if (/^-/.test(t)) return 7 * 24 * 3600_000;
  if (/^\d+$/.test(t)) return Number(t) * 1000;
  const re = /(\d+(?:\.\d+)?)(ms|h|m|s)/gy;
  let total = 0;
  let at = 0;
  for (let m = re.exec(t); m; m = re.exec(t)) {
    total += Number(m[1]) * { ms: 1, s: 1000, m: 60_000, h: 3600_000 }[m[2]!]!;
    at = re.lastIndex;
  }
  if (t === '' || at !== t.length) throw new CliError(`invalid argument "${text}" for "--timeout" flag: time: invalid duration "${text}"`);
  return total;
}

/** Whether an object (undefined: absent) meets the condition. */
export function conditionMet(condition: WaitCondition, obj: KubeObject | undefined): boolean {
  if (condition.type === 'delete') return obj === undefined;
  if (obj === undefined) return false;
  if (condition.type === 'create') return true;
  if (condition.type === 'condition') {
    const conditions = ((obj.status as { conditions?: { type?: string; status?: string }[] } | undefined)?.conditions ?? []) as {
      type?: string;
      status?: string;
    }[];
    return conditions.some((c) => c.type?.toLowerCase() === condition.name.toLowerCase() && c.status?.toLowerCase() === condition.value.toLowerCase());
  }
  const values = evaluate(condition.path, obj);
  if (condition.value === undefined) return values.length > 0;
  return values.length === 1 && formatValue(values[0]) === condition.value;
}

interface Watched {
  def: KindDefinition;
  name: string;
  namespace?: string;
}

async function fetchOne(ctx: CliContext, w: Watched): Promise<KubeObject | undefined> {
  try {
    return await ctx.client().get(w.def, { namespace: w.namespace, name: w.name });
  } catch (err) {
    if (err instanceof NotFoundError) return undefined;
    throw err;
  }
}

export async function runWait(ctx: CliContext, args: WaitArgs): Promise<number> {
  const condition = parseFor(args.for);
  const timeoutMs = parseTimeout(args.timeout);
  const deadline = Date.now() + timeoutMs;
  const interval = args.intervalMs ?? 500;
  const { targets } = parseResourceArgs(args.resources);
  const watched: Watched[] = [];
  for (const { def, names } of targets) {
    const namespace = def.namespaced ? ctx.namespace : undefined;
    if (names.length) for (const name of names) watched.push({ def, name, namespace });
    else if (args.selector !== undefined || args.all) {
      const list = await ctx.client().list(def, { namespace, labelSelector: args.selector || undefined });
      for (const o of list.items) watched.push({ def, name: o.metadata.name ?? '', namespace });
    } else throw new CliError('resource(s) were provided, but no name was specified');
  }
  if (watched.length === 0) throw new CliError('no matching resources found');
  for (const w of watched) {
    let first = true;
    for (;;) {
      const obj = await fetchOne(ctx, w);
      // Waiting for a condition on an object that is not there is an error at once; delete and create are about that.
      if (first && obj === undefined && condition.type !== 'delete' && condition.type !== 'create') {
        throw new NotFoundError(`${w.def.resource} "${w.name}" not found`);
      }
      // kubectl says nothing for an object already gone when asked to wait for its deletion.
      if (first && obj === undefined && condition.type === 'delete') break;
      first = false;
      if (conditionMet(condition, obj)) {
        ctx.out(`${objectRef(w.def, { metadata: { name: w.name } } as KubeObject)} ${condition.type === 'delete' ? 'deleted' : 'condition met'}\n`);
        break;
      }
      if (Date.now() >= deadline) throw new CliError(`timed out waiting for the condition on ${w.def.resource}/${w.name}`);
      if (ctx.signal?.aborted) return 1;
      await new Promise((resolve) => setTimeout(resolve, Math.min(interval, Math.max(0, deadline - Date.now()))));
    }
  }
  return 0;
}
