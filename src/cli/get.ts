// `minik8s get`: lists or fetches objects and prints them as a table, yaml, json or names; `-w` keeps watching.
import type { KindDefinition } from '../core/api/kind.js';
import type { KubeObject } from '../core/api/meta.js';
import { GoneError } from '../core/errors.js';
import { CliError, ConnectionError, formatError } from './cli-error.js';
import type { CliContext } from './context.js';
import {
  alignColumns,
  asList,
  columnWidths,
  formatRow,
  objectRef,
  parseOutputFormat,
  printJson,
  printYaml,
  tableHeader,
  tableRow,
  withTypeMeta,
  type OutputFormat,
  type TableOptions,
} from './printers.js';
import { parseResourceArgs, type ResourceTarget } from './resolve-kind.js';
import { customKindsFor } from './custom-kinds.js';
import { customColumnCell, executeJsonPath, parseCustomColumns, parseTemplate, type JsonPathTemplate } from './jsonpath.js';

export interface GetArgs {
  resources: string[];
  output?: string;
  selector?: string;
  fieldSelector?: string;
  allNamespaces?: boolean;
  watch?: boolean;
  showLabels?: boolean;
  noHeaders?: boolean;
}

interface Fetched {
  def: KindDefinition;
  objects: KubeObject[];
  resourceVersion?: string;
}

function namespaceFor(def: KindDefinition, ctx: CliContext, args: GetArgs): string | undefined {
  return def.namespaced && !args.allNamespaces ? ctx.namespace : undefined;
}

/** Gets named objects one by one (reporting misses and going on) or lists the kind. */
async function fetchTarget(ctx: CliContext, args: GetArgs, target: ResourceTarget, onError: (err: unknown) => void): Promise<Fetched> {
  const { def, names } = target;
  const namespace = namespaceFor(def, ctx, args);
  if (names.length === 0) {
    const list = await ctx.client().list(def, { namespace, labelSelector: args.selector, fieldSelector: args.fieldSelector });
    return { def, objects: list.items.map((o) => withTypeMeta(def, o)), resourceVersion: list.metadata.resourceVersion };
  }
  const objects: KubeObject[] = [];
  for (const name of names) {
    try {
      objects.push(withTypeMeta(def, await ctx.client().get(def, { namespace, name })));
    } catch (err) {
      if (err instanceof ConnectionError) throw err;
      onError(err);
    }
  }
  return { def, objects };
}

/** kubectl's message when a list comes back empty. */
export function noResourcesMessage(targets: readonly ResourceTarget[], namespace: string, allNamespaces: boolean): string {
  const scoped = !allNamespaces && targets.every((t) => t.def.namespaced);
  return scoped ? `No resources found in ${namespace} namespace.\n` : 'No resources found\n';
}

async function printObjects(format: OutputFormat | undefined, value: KubeObject | KubeObject[], def: KindDefinition): Promise<string> {
  if (format === 'json') return printJson(Array.isArray(value) ? asList(value) : value);
  if (format === 'yaml') return printYaml(Array.isArray(value) ? asList(value) : value);
  return (Array.isArray(value) ? value : [value]).map((o) => `${objectRef(def, o)}\n`).join('');
}

/** `-o jsonpath=TEMPLATE` or `-o custom-columns=SPEC`, which carry their template in the format; undefined for the others. */
function templateOutput(output: string | undefined): { jsonpath?: JsonPathTemplate; columns?: ReturnType<typeof parseCustomColumns> } | undefined {
  const m = /^(jsonpath|custom-columns)=(.*)$/s.exec(output ?? '');
  if (!m) return undefined;
  // The shell usually strips kubectl's quotes; a template quoted once more is taken as kubectl takes it.
  const text = /^(['"]).*\1$/s.test(m[2]!) ? m[2]!.slice(1, -1) : m[2]!;
  return m[1] === 'jsonpath' ? { jsonpath: parseTemplate(text) } : { columns: parseCustomColumns(text) };
}

export async function runGet(ctx: CliContext, args: GetArgs): Promise<number> {
  const template = templateOutput(args.output);
  const format = template ? undefined : parseOutputFormat(args.output);
  await customKindsFor(ctx, args.resources);
  const { targets, typeNameForm } = parseResourceArgs(args.resources);
  if ((args.selector || args.fieldSelector) && targets.some((t) => t.names.length > 0)) {
    throw new CliError('name cannot be provided when a selector is specified');
  }
  if (args.watch && targets.length > 1) {
    throw new CliError(`watch is only supported on individual resources and resource collections, but ${targets.length} resource types were given`);
  }
  let failed = false;
  const onError = (err: unknown) => {
    failed = true;
    ctx.err(formatError(err));
  };
  const fetched: Fetched[] = [];
  for (const target of targets) fetched.push(await fetchTarget(ctx, args, target, onError));
  const all = fetched.flatMap((f) => f.objects);
  const tableOptions = (def: KindDefinition): TableOptions => ({
    now: ctx.now(),
    wide: format === 'wide',
    withNamespace: args.allNamespaces && def.namespaced,
    withKind: typeNameForm || targets.length > 1,
    showLabels: args.showLabels,
  });

  let widths: number[] | undefined;
  if (template?.jsonpath) {
    const single = targets.length === 1 && targets[0]!.names.length === 1;
    ctx.out(executeJsonPath(template.jsonpath, single && all.length === 1 ? all[0] : asList(all)));
    return failed ? 1 : 0;
  }
  if (template?.columns && all.length > 0) {
    const columns = template.columns;
    const rows = all.map((o) => columns.map((c) => customColumnCell(c.steps, o)));
    ctx.out(alignColumns(args.noHeaders ? rows : [columns.map((c) => c.header), ...rows]));
    return failed ? 1 : 0;
  }
  if (format === 'json' || format === 'yaml') {
    // One named object prints bare; anything else is wrapped in a List, as kubectl does.
    const single = targets.length === 1 && targets[0]!.names.length === 1 && !args.watch;
    if (single && all.length === 1) ctx.out(await printObjects(format, all[0]!, fetched[0]!.def));
    else if (!single || all.length > 0) ctx.out(await printObjects(format, all, fetched[0]!.def));
  } else if (all.length === 0) {
    if (!failed) ctx.err(noResourcesMessage(targets, ctx.namespace, args.allNamespaces ?? false));
  } else if (format === 'name') {
    for (const f of fetched) ctx.out(await printObjects(format, f.objects, f.def));
  } else {
    const tables: string[] = [];
    for (const f of fetched) {
      if (f.objects.length === 0) continue;
      const options = tableOptions(f.def);
      const rows = [...(args.noHeaders ? [] : [tableHeader(f.def, options)]), ...f.objects.map((o) => tableRow(f.def, o, options))];
      widths = columnWidths(rows);
      tables.push(alignColumns(rows));
    }
    ctx.out(tables.join('\n'));
  }

  if (args.watch) await watchTarget(ctx, args, { target: targets[0]!, fetched: fetched[0]!, format, widths, tableOptions });
  return failed ? 1 : 0;
}

interface WatchState {
  target: ResourceTarget;
  fetched: Fetched;
  format: OutputFormat | undefined;
  /** Column widths of the table already printed; undefined when no header has been printed yet. */
  widths: number[] | undefined;
  tableOptions: (def: KindDefinition) => TableOptions;
}

/** Prints each change as it arrives, resuming after stream ends and relisting after 410 Gone. */
async function watchTarget(ctx: CliContext, args: GetArgs, state: WatchState): Promise<void> {
  const { def, names } = state.target;
  const namespace = namespaceFor(def, ctx, args);
  const client = ctx.client();
  let resourceVersion = state.fetched.resourceVersion;
  let widths = state.widths;
  const print = async (obj: KubeObject) => {
    if (state.format === 'json') ctx.out(printJson(obj));
    else if (state.format === 'yaml') ctx.out(`---\n${await printYaml(obj)}`);
    else if (state.format === 'name') ctx.out(`${objectRef(def, obj)}\n`);
    else {
      const options = state.tableOptions(def);
      const row = tableRow(def, obj, options);
      if (!widths) {
        const header = tableHeader(def, options);
        widths = columnWidths([header, row]);
        if (!args.noHeaders) ctx.out(formatRow(header, widths));
      }
      ctx.out(formatRow(row, widths));
    }
  };
  while (!ctx.signal?.aborted) {
    try {
      if (resourceVersion === undefined) {
        // Named gets carry no list revision: start from a fresh list's.
        const list = await client.list(def, { namespace, labelSelector: args.selector, fieldSelector: args.fieldSelector });
        resourceVersion = list.metadata.resourceVersion;
      }
      for await (const event of client.watch(def, {
        namespace,
        labelSelector: args.selector,
        fieldSelector: args.fieldSelector,
        resourceVersion,
        signal: ctx.signal,
      })) {
        resourceVersion = event.object?.metadata?.resourceVersion ?? resourceVersion;
        if (event.type === 'BOOKMARK') continue;
        if (names.length > 0 && !names.includes(event.object.metadata.name ?? '')) continue;
        await print(withTypeMeta(def, event.object));
      }
    } catch (err) {
      if (ctx.signal?.aborted) return;
      // Our revision was compacted away: relist to get a current one; changes in between are not replayed.
      if (err instanceof GoneError) {
        resourceVersion = undefined;
        continue;
      }
      throw err;
    }
  }
}
