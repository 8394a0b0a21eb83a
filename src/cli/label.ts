// `minik8s label|annotate TYPE NAME KEY=VAL KEY-`: sets or removes labels or annotations with a merge patch, as kubectl label/annotate do.
import { CliError } from './cli-error.js';
import type { CliContext } from './context.js';
import { objectRef } from './printers.js';
import { fetchTargets } from './targets.js';

export type MetadataField = 'labels' | 'annotations';

export interface LabelArgs {
  field: MetadataField;
  /** Resources and KEY=VAL / KEY- pairs, in any order after the resource arguments. */
  args: string[];
  overwrite?: boolean;
  selector?: string;
  all?: boolean;
}

export interface MetadataChanges {
  set: Record<string, string>;
  remove: string[];
}

const NOUN: Record<MetadataField, string> = { labels: 'label', annotations: 'annotation' };

/** Splits arguments into resources and KEY=VAL / KEY- updates, as kubectl does (an update holds `=` or ends in `-`). */
export function splitUpdates(args: readonly string[], field: MetadataField): { resources: string[]; changes: MetadataChanges } {
  const resources: string[] = [];
  const changes: MetadataChanges = { set: {}, remove: [] };
  for (const arg of args) {
    const eq = arg.indexOf('=');
    if (eq > 0) {
      changes.set[arg.slice(0, eq)] = arg.slice(eq + 1);
    } else if (arg.length > 1 && arg.endsWith('-')) {
      changes.remove.push(arg.slice(0, -1));
    } else if (eq === 0) {
      throw new CliError(`invalid ${NOUN[field]} spec: ${arg}`);
    } else {
      resources.push(arg);
    }
  }
  if (Object.keys(changes.set).length === 0 && changes.remove.length === 0) {
    throw new CliError(`at least one ${NOUN[field]} update is required`);
  }
  const both = changes.remove.filter((k) => k in changes.set);
  if (both.length) throw new CliError(`can not both modify and remove the following ${NOUN[field]}(s) in the same command: ${both.join(', ')}`);
  if (field === 'labels') {
    for (const [k, v] of Object.entries(changes.set)) {
      if (v.length > 63 || !/^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$/.test(v)) throw new CliError(`invalid label value: "${k}=${v}"`);
    }
  }
  return { resources, changes };
}

/**
 * The merge patch that applies `changes` to `current`, or the error kubectl gives when a
 * key already has another value and --overwrite is false. `null` removes a key.
 */
export function metadataPatch(
  current: Record<string, string> | undefined,
  changes: MetadataChanges,
  field: MetadataField,
  overwrite: boolean,
): { patch: Record<string, string | null>; changed: boolean; missing: string[] } {
  const have = current ?? {};
  if (!overwrite) {
    const clashes = Object.entries(changes.set)
      .filter(([k, v]) => k in have && have[k] !== v)
      .map(([k]) => `'${k}' already has a value (${have[k]}), and --overwrite is false`);
    if (clashes.length && field === 'annotations') {
      throw new CliError(
        `--overwrite is false but found the following declared annotation(s): ${clashes.map((c) => c.replace(', and --overwrite is false', '')).join('; ')}`,
      );
    }
    if (clashes.length) throw new CliError(clashes.length === 1 ? clashes[0]! : `[${clashes.join(', ')}]`);
  }
  const patch: Record<string, string | null> = {};
  for (const [k, v] of Object.entries(changes.set)) if (have[k] !== v) patch[k] = v;
  const missing: string[] = [];
  for (const k of changes.remove) {
    if (k in have) patch[k] = null;
    else missing.push(k);
  }
  return { patch, changed: Object.keys(patch).length > 0, missing };
}

export async function runLabel(ctx: CliContext, args: LabelArgs): Promise<number> {
  const { resources, changes } = splitUpdates(args.args, args.field);
  if (resources.length === 0) throw new CliError('one or more resources must be specified as <resource> <name> or <resource>/<name>');
  const targets = await fetchTargets(ctx, { resources, selector: args.selector, all: args.all });
  for (const { def, obj } of targets) {
    const { patch, changed, missing } = metadataPatch(obj.metadata[args.field], changes, args.field, Boolean(args.overwrite));
    for (const key of missing) ctx.out(`${NOUN[args.field]} "${key}" not found.\n`);
    let verb: string;
    if (changed) {
      const namespace = def.namespaced ? obj.metadata.namespace : undefined;
      await ctx.client().patch(def, { namespace, name: obj.metadata.name ?? '' }, { metadata: { [args.field]: patch } });
      const onlyRemoved = Object.values(patch).every((v) => v === null);
      verb = args.field === 'annotations' ? 'annotated' : onlyRemoved ? 'unlabeled' : 'labeled';
    } else {
      verb = args.field === 'annotations' ? 'annotated' : 'not labeled';
    }
    ctx.out(`${objectRef(def, obj)} ${verb}\n`);
  }
  return 0;
}
