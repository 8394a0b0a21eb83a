// `minik8s function invocations NAME`: the function's last calls as a table (ID, VERSION, TRIGGER, STATUS, COLD, DURATION, AGE), or in full with -o json|yaml.
import { kindObjectPath } from '../core/client/api-client.js';
import { functionKind } from '../core/api/function.js';
import type { InvocationRecord } from '../core/api/invocation-record.js';
import { CliError } from './cli-error.js';
import type { CliContext } from './context.js';
import { ageSince, alignColumns, parseOutputFormat, printJson, printYaml } from './printers.js';

export interface FunctionInvocationsArgs {
  name?: string;
  /** One record by its id, in full. */
  id?: string;
  output?: string;
  limit?: string;
  noHeaders?: boolean;
}

/** `850ms`, `1.25s`, `2m3s`. */
export function formatDurationMs(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${Number((ms / 1000).toFixed(2))}s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)}m${s % 60}s`;
}

/** The table; `wide` adds the pod and the error. */
export function invocationsTable(records: readonly InvocationRecord[], now: Date, options: { wide?: boolean; noHeaders?: boolean } = {}): string {
  const header = ['ID', 'VERSION', 'TRIGGER', 'STATUS', 'COLD', 'DURATION', 'AGE', ...(options.wide ? ['POD', 'ERROR'] : [])];
  const rows = records.map((r) => [
    r.id,
    r.version === undefined ? '<none>' : `v${r.version}`,
    r.trigger,
    String(r.status),
    r.coldStart ? 'yes' : 'no',
    formatDurationMs(r.durationMs),
    ageSince(r.start, now),
    ...(options.wide ? [r.pod ?? '<none>', (r.error ?? '').split('\n')[0]!.slice(0, 80) || '<none>'] : []),
  ]);
  return alignColumns(options.noHeaders ? rows : [header, ...rows]);
}

export async function runFunctionInvocations(ctx: CliContext, args: FunctionInvocationsArgs): Promise<number> {
  if (!args.name) throw new CliError('function invocations needs a name: minik8s function invocations NAME');
  const format = parseOutputFormat(args.output);
  if (format === 'name') throw new CliError('-o name is not supported for invocations; use json, yaml or wide');
  if (args.limit !== undefined && !/^\d+$/.test(args.limit)) throw new CliError(`invalid --limit "${args.limit}": a whole number`);
  const base = `${kindObjectPath(functionKind, args.name, ctx.namespace)}/invocations`;
  if (args.id) {
    const record = await ctx.client().request('GET', `${base}/${encodeURIComponent(args.id)}`);
    ctx.out(format === 'yaml' ? await printYaml(record) : printJson(record));
    return 0;
  }
  const list = (await ctx.client().request('GET', base, { query: { limit: args.limit } })) as { items?: InvocationRecord[] };
  const items = list.items ?? [];
  if (format === 'json') ctx.out(printJson(list));
  else if (format === 'yaml') ctx.out(await printYaml(list));
  else if (items.length === 0) ctx.err(`No invocations of function ${args.name} in ${ctx.namespace} namespace.\n`);
  else ctx.out(invocationsTable(items, ctx.now(), { wide: format === 'wide', noHeaders: args.noHeaders }));
  return 0;
}
