// Tables of objects as kubectl shows them, from each kind's one column definition: the cells the CLI prints and the meta.k8s.io Table the API server answers with.
import { apiVersionOf, type KindDefinition, type PrintColumn } from './kind.js';
import type { KubeObject } from './meta.js';

/**
 * kubectl's HumanDuration (k8s.io/apimachinery/pkg/util/duration): precise for young
 * objects, coarser as they age. Up to a second in the future counts as now (clock skew).
 */
export function formatAge(ms: number): string {
  const seconds = Math.trunc(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.trunc(seconds / 60);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.trunc(minutes / 60);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  const days = Math.trunc(hours / 24);
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${days}d` : `${days}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${days}d`;
  const years = Math.trunc(days / 365);
  if (hours < 24 * 365 * 8) {
    const d = days % 365;
    return d === 0 ? `${years}y` : `${years}y${d}d`;
  }
  return `${years}y`;
}

/** The AGE cell of a timestamp; `<unknown>` when absent or unparsable, as kubectl prints. */
export function ageSince(timestamp: string | null | undefined, now: Date): string {
  if (!timestamp) return '<unknown>';
  const t = Date.parse(timestamp);
  return Number.isNaN(t) ? '<unknown>' : formatAge(now.getTime() - t);
}

/** One column of a kind's table: NAME, the kind's own columns, AGE, then the -o wide ones (priority 1), as kubectl orders them. */
export interface TableColumn {
  header: string;
  /** 0 for every `get`; 1 for `-o wide` only (Kubernetes' priority). */
  priority: 0 | 1;
  /** The kind's column; undefined for NAME and AGE, which every kind has. */
  column?: PrintColumn;
}

const NAME_COLUMN: TableColumn = { header: 'NAME', priority: 0 };
const AGE_COLUMN: TableColumn = { header: 'AGE', priority: 0 };

/** The columns of a kind's table; with `wide`, the priority-1 columns too. */
export function tableColumns(def: Pick<KindDefinition, 'columns' | 'ageFirst'>, options: { wide?: boolean } = { wide: true }): TableColumn[] {
  const own = def.columns ?? [];
  const narrow = own.filter((c) => !c.wide).map((column) => ({ header: column.name, priority: 0 as const, column }));
  return [
    NAME_COLUMN,
    ...(def.ageFirst ? [AGE_COLUMN, ...narrow] : [...narrow, AGE_COLUMN]),
    ...(options.wide ? own.filter((c) => c.wide).map((column) => ({ header: column.name, priority: 1 as const, column })) : []),
  ];
}

/** A cell's text: `<none>` for an empty value, `<unknown>` when a column cannot read a half-filled object. */
export function cellValue(c: TableColumn, obj: KubeObject, now: Date): string {
  if (c === NAME_COLUMN) return obj.metadata.name ?? '';
  if (c === AGE_COLUMN) return ageSince(obj.metadata.creationTimestamp, now);
  try {
    const v = c.column!.value(obj);
    return v === '' ? '<none>' : v;
  } catch {
    return '<unknown>';
  }
}

/** What each row carries of its object (Kubernetes' includeObject): by default its metadata. */
export type IncludeObject = 'None' | 'Metadata' | 'Object';

export interface TableOptions {
  now: Date;
  includeObject?: IncludeObject;
  /** meta.k8s.io/v1 unless the client asked for v1beta1. */
  apiVersion?: 'meta.k8s.io/v1' | 'meta.k8s.io/v1beta1';
  /** The list's resourceVersion and continue token, kept on the Table. */
  listMeta?: { resourceVersion?: string; continue?: string; remainingItemCount?: number };
}

function columnDescription(c: TableColumn, kind: string): string {
  if (c === NAME_COLUMN) return `Name must be unique within a namespace.`;
  if (c === AGE_COLUMN) return `Time since the ${kind} was created.`;
  return `${c.header.charAt(0)}${c.header.slice(1).toLowerCase()} of the ${kind}.`;
}

function rowObject(def: Pick<KindDefinition, 'kind' | 'group' | 'version'>, obj: KubeObject, include: IncludeObject, apiVersion: string): unknown {
  if (include === 'None') return undefined;
  if (include === 'Object') return { ...obj, apiVersion: obj.apiVersion ?? apiVersionOf(def), kind: obj.kind ?? def.kind };
  return { kind: 'PartialObjectMetadata', apiVersion, metadata: obj.metadata };
}

/** A meta.k8s.io Table of `objects`: what kubectl asks for with `Accept: application/json;as=Table;g=meta.k8s.io;v=v1`. */
export function toTable(
  def: Pick<KindDefinition, 'kind' | 'group' | 'version' | 'columns'>,
  objects: readonly KubeObject[],
  options: TableOptions,
): Record<string, unknown> {
  const apiVersion = options.apiVersion ?? 'meta.k8s.io/v1';
  const include = options.includeObject ?? 'Metadata';
  const columns = tableColumns(def);
  return {
    kind: 'Table',
    apiVersion,
    metadata: options.listMeta ?? {},
    columnDefinitions: columns.map((c) => ({
      name: c === NAME_COLUMN ? 'Name' : c.header,
      type: 'string',
      format: c === NAME_COLUMN ? 'name' : '',
      description: columnDescription(c, def.kind),
      priority: c.priority,
    })),
    rows: objects.map((obj) => {
      const object = rowObject(def, obj, include, apiVersion);
      return { cells: columns.map((c) => cellValue(c, obj, options.now)), ...(object !== undefined ? { object } : {}) };
    }),
  };
}
