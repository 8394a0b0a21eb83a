// metadata.managedFields: who owns which fields, updated on every write (Update for creates, updates and patches; Apply for server-side apply), and the conflicts an apply meets.
import { timestamp } from '../timestamp.js';
import { formatPath, fromFieldsV1, isWithin, toFieldsV1, type FieldValues, type FieldsV1, type PathKey } from './field-set.js';

export type ManagedFieldsOperation = 'Apply' | 'Update';

/** One entry of metadata.managedFields, as Kubernetes writes it. */
export interface ManagedFieldsEntry {
  manager: string;
  operation: ManagedFieldsOperation;
  apiVersion: string;
  time?: string;
  fieldsType: 'FieldsV1';
  fieldsV1: FieldsV1;
  subresource?: string;
}

/** Who writes: the manager, its operation, and the subresource written (status), which together name one entry. */
export interface Writer {
  manager: string;
  operation: ManagedFieldsOperation;
  subresource?: string;
}

/** An entry with its field set decoded. */
interface Owned {
  entry: ManagedFieldsEntry;
  fields: Set<PathKey>;
  touched: boolean;
}

function sameWriter(entry: ManagedFieldsEntry, writer: Writer): boolean {
  return entry.manager === writer.manager && entry.operation === writer.operation && (entry.subresource ?? '') === (writer.subresource ?? '');
}

/** The entries of an object's metadata.managedFields, or none when it has none that read as entries. */
export function readEntries(value: unknown): ManagedFieldsEntry[] {
  if (!Array.isArray(value)) return [];
  return value.filter(
    (e): e is ManagedFieldsEntry =>
      typeof e === 'object' && e !== null && typeof e.manager === 'string' && (e.operation === 'Apply' || e.operation === 'Update'),
  );
}

/** The fields an entry of `entries` for `writer` owns (empty when it has none). */
export function ownedBy(entries: readonly ManagedFieldsEntry[], writer: Writer): Set<PathKey> {
  const entry = entries.find((e) => sameWriter(e, writer));
  return entry ? fromFieldsV1(entry.fieldsV1) : new Set();
}

/** Paths whose fingerprint differs between two objects' field values: changed or added in `after`, and gone from it. */
export function diffFields(before: FieldValues, after: FieldValues): { changed: Set<PathKey>; removed: Set<PathKey> } {
  const changed = new Set<PathKey>();
  const removed = new Set<PathKey>();
  for (const [key, value] of after) if (before.get(key) !== value) changed.add(key);
  for (const key of before.keys()) if (!after.has(key)) removed.add(key);
  return { changed, removed };
}

export interface TrackOptions {
  /** The entries the write starts from (the stored ones, or those the request set). */
  entries: readonly ManagedFieldsEntry[];
  writer: Writer;
  apiVersion: string;
  before: FieldValues;
  after: FieldValues;
  now: Date;
  /** For Apply: the fields of the applied configuration, which become the applier's whole set. */
  applied?: ReadonlySet<PathKey>;
}

/**
 * The managedFields after a write. Fields the write removed are no one's; fields it changed
 * move to the writer (an Update takes them from whoever had them, as Kubernetes' updates never
 * conflict; an Apply got here past its conflicts or forced them); an Apply's set is what it
 * applied. Entries left with no fields go; entries the write does not touch keep their time,
 * so a write that changes nothing leaves the object as it was.
 */
export function trackWrite(options: TrackOptions): ManagedFieldsEntry[] {
  const { writer, applied } = options;
  const { changed, removed } = diffFields(options.before, options.after);
  const taken = applied ? new Set([...changed].filter((k) => applied.has(k))) : changed;
  const owned: Owned[] = options.entries.map((entry) => ({ entry, fields: fromFieldsV1(entry.fieldsV1), touched: false }));
  let mine = owned.find((o) => sameWriter(o.entry, writer));
  if (!mine) {
    mine = {
      entry: { manager: writer.manager, operation: writer.operation, apiVersion: options.apiVersion, fieldsType: 'FieldsV1', fieldsV1: {} },
      fields: new Set(),
      touched: false,
    };
    if (writer.subresource) mine.entry.subresource = writer.subresource;
    owned.push(mine);
  }
  for (const o of owned) {
    const lose = o === mine ? removed : [...removed, ...taken];
    for (const key of lose) if (o.fields.delete(key)) o.touched = true;
  }
  if (applied) {
    if (mine.fields.size !== applied.size || [...applied].some((k) => !mine.fields.has(k)) || changed.size > 0) mine.touched = true;
    mine.fields = new Set(applied);
  } else {
    for (const key of changed) {
      mine.fields.add(key);
      mine.touched = true;
    }
  }
  const out: ManagedFieldsEntry[] = [];
  for (const o of owned) {
    if (o.fields.size === 0) continue;
    if (!o.touched) {
      out.push(o.entry);
      continue;
    }
    const entry: ManagedFieldsEntry = { ...o.entry, fieldsV1: toFieldsV1(o.fields) };
    if (o === mine) {
      entry.apiVersion = options.apiVersion;
      entry.time = timestamp(options.now);
    }
    out.push(entry);
  }
  return out;
}

/** A field an apply would change that another manager owns. */
export interface Conflict {
  manager: string;
  operation: ManagedFieldsOperation;
  apiVersion: string;
  subresource?: string;
  path: PathKey;
}

/**
 * The conflicts of an apply: fields in the applied set whose value the apply would change and
 * that another manager owns (a manager owning a field with the value applied shares it instead).
 */
export function findConflicts(
  entries: readonly ManagedFieldsEntry[],
  writer: Writer,
  applied: ReadonlySet<PathKey>,
  before: FieldValues,
  after: FieldValues,
): Conflict[] {
  const changed = [...applied].filter((k) => before.get(k) !== after.get(k));
  if (changed.length === 0) return [];
  const out: Conflict[] = [];
  for (const entry of entries) {
    if (sameWriter(entry, writer)) continue;
    const fields = fromFieldsV1(entry.fieldsV1);
    for (const key of changed) {
      if (!fields.has(key)) continue;
      out.push({ manager: entry.manager, operation: entry.operation, apiVersion: entry.apiVersion, subresource: entry.subresource, path: key });
    }
  }
  return out;
}

/** True when some entry other than the writer's owns `path` or a field under it. */
export function ownedByOthers(entries: readonly ManagedFieldsEntry[], writer: Writer, path: PathKey): boolean {
  return entries.some((e) => !sameWriter(e, writer) && [...fromFieldsV1(e.fieldsV1)].some((k) => isWithin(k, path)));
}

/** A manager as Kubernetes names it in a conflict: `"name"`, with its subresource, and `using VERSION` for an Update. */
export function describeManager(c: Pick<Conflict, 'manager' | 'operation' | 'apiVersion' | 'subresource'>): string {
  let text = JSON.stringify(c.manager);
  if (c.subresource) text += ` with subresource ${JSON.stringify(c.subresource)}`;
  if (c.operation === 'Update') text += ` using ${c.apiVersion}`;
  return text;
}

/** The message of a 409 for an apply's conflicts, worded as kube-apiserver words it. */
export function conflictMessage(conflicts: readonly Conflict[]): string {
  if (conflicts.length === 1) {
    const c = conflicts[0]!;
    return `Apply failed with 1 conflict: conflict with ${describeManager(c)}: ${formatPath(c.path)}`;
  }
  const byManager = new Map<string, string[]>();
  for (const c of conflicts) {
    const who = describeManager(c);
    byManager.set(who, [...(byManager.get(who) ?? []), formatPath(c.path)]);
  }
  const lines: string[] = [];
  for (const who of [...byManager.keys()].sort()) {
    lines.push(`conflicts with ${who}:`);
    for (const path of byManager.get(who)!) lines.push(`- ${path}`);
  }
  return `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
}
