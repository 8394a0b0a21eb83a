// Output formats for `get` and friends: kubectl-style tables, ages, and yaml/json/name renderings.
import { apiVersionOf, type KindDefinition } from '../core/api/kind.js';
import type { KubeObject } from '../core/api/meta.js';
import { cellValue, tableColumns } from '../core/api/table.js';
import { CliError } from './cli-error.js';

export { ageSince, formatAge } from '../core/api/table.js';

export const OUTPUT_FORMATS = ['json', 'name', 'wide', 'yaml'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** Checks `-o`; kubectl's wording for an unknown format. */
export function parseOutputFormat(value: string | undefined): OutputFormat | undefined {
  if (value === undefined || value === '') return undefined;
  if ((OUTPUT_FORMATS as readonly string[]).includes(value)) return value as OutputFormat;
  throw new CliError(`unable to match a printer suitable for the output format "${value}", allowed formats are: ${OUTPUT_FORMATS.join(',')}`);
}

/**
 * Aligns rows the way kubectl's tabwriter does (min width 6, padding 3, last column unpadded).
 * A few lines here rather than cli-table3: that library pads every cell on both sides, leaves
 * trailing spaces, and would be loaded on every `get`; kubectl's layout is this simple rule.
 */
export function alignColumns(rows: readonly (readonly string[])[], minWidths: readonly number[] = []): string {
  const widths = columnWidths(rows, minWidths);
  return rows.map((row) => formatRow(row, widths)).join('');
}

export function columnWidths(rows: readonly (readonly string[])[], minWidths: readonly number[] = []): number[] {
  const widths = [...minWidths];
  for (const row of rows) {
    row.forEach((cell, i) => {
      if (i < row.length - 1) widths[i] = Math.max(widths[i] ?? 0, cell.length + 3, 6);
    });
  }
  return widths;
}

/** One aligned line; cells wider than their column push the rest right rather than being cut. */
export function formatRow(row: readonly string[], widths: readonly number[]): string {
  const cells = row.map((cell, i) => (i < row.length - 1 ? cell.padEnd(Math.max(widths[i] ?? 0, cell.length + 3)) : cell));
  return `${cells.join('').trimEnd()}\n`;
}

/** `pod`, `deployment.apps`: how kubectl names a kind in `pod/web` and `pod "web" deleted`. */
export function kindRef(def: Pick<KindDefinition, 'kind' | 'group'>): string {
  const base = def.kind.toLowerCase();
  return def.group ? `${base}.${def.group}` : base;
}

export function objectRef(def: Pick<KindDefinition, 'kind' | 'group'>, obj: KubeObject): string {
  return `${kindRef(def)}/${obj.metadata.name ?? ''}`;
}

export interface TableOptions {
  now: Date;
  wide?: boolean;
  /** Adds NAMESPACE as the first column (`-A`). */
  withNamespace?: boolean;
  /** Names print as `pod/web` (several kinds at once, or TYPE/NAME arguments). */
  withKind?: boolean;
  showLabels?: boolean;
}

function labelsCell(obj: KubeObject): string {
  const labels = obj.metadata.labels ?? {};
  const pairs = Object.keys(labels)
    .sort()
    .map((k) => `${k}=${labels[k]}`);
  return pairs.length ? pairs.join(',') : '<none>';
}

/** The header row of a kind's table: the columns the API server's Table has, in kubectl's order. */
export function tableHeader(def: KindDefinition, options: TableOptions): string[] {
  return [
    ...(options.withNamespace ? ['NAMESPACE'] : []),
    ...tableColumns(def, { wide: options.wide }).map((c) => c.header),
    ...(options.showLabels ? ['LABELS'] : []),
  ];
}

/** One object's table row, matching tableHeader. */
export function tableRow(def: KindDefinition, obj: KubeObject, options: TableOptions): string[] {
  return [
    ...(options.withNamespace ? [obj.metadata.namespace ?? ''] : []),
    ...tableColumns(def, { wide: options.wide }).map((c) => (c.header === 'NAME' && options.withKind ? objectRef(def, obj) : cellValue(c, obj, options.now))),
    ...(options.showLabels ? [labelsCell(obj)] : []),
  ];
}

/** A whole table: header then one row per object. */
export function printTable(def: KindDefinition, objects: readonly KubeObject[], options: TableOptions & { noHeaders?: boolean }): string {
  const rows = objects.map((o) => tableRow(def, o, options));
  return alignColumns(options.noHeaders ? rows : [tableHeader(def, options), ...rows]);
}

/** What `-o json|yaml` prints for several objects: a v1 List, as kubectl does. */
export function asList(items: readonly KubeObject[]): Record<string, unknown> {
  return { apiVersion: 'v1', kind: 'List', items, metadata: { resourceVersion: '' } };
}

/** Makes sure each object says what it is (list items from some servers omit kind). */
export function withTypeMeta(def: KindDefinition, obj: KubeObject): KubeObject {
  return { ...obj, apiVersion: obj.apiVersion ?? apiVersionOf(def), kind: obj.kind ?? def.kind };
}

/** JSON as kubectl prints it (four-space indent). */
export function printJson(value: unknown): string {
  return `${JSON.stringify(value, null, 4)}\n`;
}

/** YAML; the library is loaded only when asked for, to keep other commands' startup lean. */
export async function printYaml(value: unknown): Promise<string> {
  const { stringify } = await import('yaml');
  // indentSeq false: list items sit under their key, as kubectl writes them.
  return stringify(value, { lineWidth: 0, aliasDuplicateObjects: false, indentSeq: false });
}
