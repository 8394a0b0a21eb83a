// Field sets as server-side apply sees an object: every field, list item and map a writer can own, keyed by path, with Kubernetes' FieldsV1 encoding (f:, k:, v:, ".").
import type { FieldPatchMeta, PatchMeta } from '../patch-meta.js';
import { SERVER_SET_METADATA } from '../meta.js';

/**
 * A path as the text of its elements joined by NUL: `f:spec`, `k:{"name":"c"}` (a list item by
 * its merge key), `v:"x"` (an item of a set of scalars). Sets of these strings are cheap to
 * intersect and subtract, which every write does.
 */
export type PathKey = string;

const SEP = '\u0000';
/** The fingerprint of a member that is a container (a list item, a map) rather than a value. */
const NODE = '\u0001';

/** The fingerprint of each member path: the JSON of a leaf's value, a marker for items and maps. */
export type FieldValues = Map<PathKey, string>;

/** Which part of an object a write may own: a status write only status, a spec write all but status where status has its own subresource. */
export type FieldScope = 'all' | 'spec' | 'status';

/**
 * Maps of free-form keys (map[string]string and the like in Kubernetes' types): the map itself
 * is a member (`.`), so an applier that sets one label owns the map's existence as well.
 */
const GRANULAR_MAPS = new Set([
  'labels',
  'annotations',
  'nodeSelector',
  'matchLabels',
  'data',
  'binaryData',
  'stringData',
  'limits',
  'requests',
  'capacity',
  'allocatable',
]);

/** Metadata the server sets or that names the object: nobody owns these (Kubernetes resets them before tracking). */
const SERVER_METADATA = new Set([...SERVER_SET_METADATA, 'name', 'namespace', 'generateName']);

function isMap(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A LabelSelector is atomic in Kubernetes (structType=atomic): owned and replaced whole. */
function isAtomicMap(v: Record<string, unknown>): boolean {
  return 'matchLabels' in v || 'matchExpressions' in v;
}

/** The key element of a list item merged by `mergeKey`, or undefined when the item has no such key. */
export function itemKey(item: unknown, mergeKey: string): string | undefined {
  if (!isMap(item)) return undefined;
  const key = item[mergeKey];
  if (key === undefined || key === null || typeof key === 'object') return undefined;
  return `k:${JSON.stringify({ [mergeKey]: key })}`;
}

/** The value element of an item of a set of scalars. */
export function valueKey(item: unknown): string {
  return `v:${JSON.stringify(item)}`;
}

/** How a list is owned: by item key, as a set of values, or whole. */
export function listMode(list: unknown[], meta: FieldPatchMeta | undefined): 'keyed' | 'set' | 'atomic' {
  if (!meta?.merge) return 'atomic';
  if (meta.mergeKey) {
    const seen = new Set<string>();
    for (const item of list) {
      const key = itemKey(item, meta.mergeKey);
      // An item without its key, or two with one key, cannot be told apart: the list is owned whole.
      if (key === undefined || seen.has(key)) return 'atomic';
      seen.add(key);
    }
    return 'keyed';
  }
  return list.every((i) => i === null || typeof i !== 'object') ? 'set' : 'atomic';
}

/**
 * The member paths of an object and a fingerprint of each: leaves (scalars, atomic lists and
 * maps, empty maps) by value, list items and granular maps as containers. Metadata the server
 * owns is left out, and status or everything but status as `scope` says.
 */
export function fieldValues(obj: unknown, meta: PatchMeta | undefined, scope: FieldScope = 'all'): FieldValues {
  const out: FieldValues = new Map();
  if (!isMap(obj)) return out;
  for (const [name, value] of Object.entries(obj)) {
    if (name === 'apiVersion' || name === 'kind' || value === undefined) continue;
    if (scope === 'status' ? name !== 'status' : scope === 'spec' && name === 'status') continue;
    if (name === 'metadata' && isMap(value)) {
      const kept = Object.entries(value).filter(([k, v]) => !SERVER_METADATA.has(k) && v !== undefined);
      // ObjectMeta with only server fields is no one's.
      if (kept.length) walkMap(Object.fromEntries(kept), `f:metadata`, meta?.metadata?.fields, out, false);
      continue;
    }
    walk(value, `f:${name}`, name, meta?.[name], out);
  }
  return out;
}

function walk(value: unknown, path: string, name: string, meta: FieldPatchMeta | undefined, out: FieldValues): void {
  if (Array.isArray(value)) {
    const mode = listMode(value, meta);
    if (mode === 'atomic' || value.length === 0) {
      out.set(path, JSON.stringify(value));
      return;
    }
    for (const item of value) {
      if (mode === 'set') {
        out.set(`${path}${SEP}${valueKey(item)}`, NODE);
        continue;
      }
      const itemPath = `${path}${SEP}${itemKey(item, meta!.mergeKey!)}`;
      out.set(itemPath, NODE);
      walkMap(item as Record<string, unknown>, itemPath, meta?.fields, out, true);
    }
    return;
  }
  if (isMap(value) && !isAtomicMap(value) && Object.keys(value).length > 0) {
    walkMap(value, path, meta?.fields, out, GRANULAR_MAPS.has(name));
    return;
  }
  out.set(path, JSON.stringify(value));
}

function walkMap(map: Record<string, unknown>, path: string, meta: PatchMeta | undefined, out: FieldValues, member: boolean): void {
  if (member) out.set(path, NODE);
  for (const [name, value] of Object.entries(map)) {
    if (value === undefined) continue;
    walk(value, `${path}${SEP}f:${name}`, name, meta?.[name], out);
  }
}

/** The elements of a path. */
export function pathElements(key: PathKey): string[] {
  return key.split(SEP);
}

export function joinPath(elements: readonly string[]): PathKey {
  return elements.join(SEP);
}

/** True when `key` is `prefix` or lies under it. */
export function isWithin(key: PathKey, prefix: PathKey): boolean {
  return key === prefix || key.startsWith(`${prefix}${SEP}`);
}

/** A path as Kubernetes prints it in conflicts: `.spec.template.spec.containers[name="c"].image`, `.spec.finalizers[="x"]`. */
export function formatPath(key: PathKey): string {
  let text = '';
  for (const element of pathElements(key)) {
    const body = element.slice(2);
    if (element.startsWith('f:')) text += `.${body}`;
    else if (element.startsWith('k:')) {
      const fields = JSON.parse(body) as Record<string, unknown>;
      text += `[${Object.entries(fields)
        .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
        .join(',')}]`;
    } else if (element.startsWith('v:')) text += `[=${body}]`;
    else text += `[${body}]`;
  }
  return text;
}

/** A FieldsV1 tree of nested objects. */
export type FieldsV1 = { [element: string]: FieldsV1 };

/** Encodes member paths as FieldsV1: a member with members below it carries `.`; keys sorted as Kubernetes writes them. */
export function toFieldsV1(paths: Iterable<PathKey>): FieldsV1 {
  interface Node {
    member: boolean;
    children: Map<string, Node>;
  }
  const root: Node = { member: false, children: new Map() };
  for (const key of paths) {
    let node = root;
    for (const element of pathElements(key)) {
      let child = node.children.get(element);
      if (!child) {
        child = { member: false, children: new Map() };
        node.children.set(element, child);
      }
      node = child;
    }
    node.member = true;
  }
  const encode = (node: Node): FieldsV1 => {
    const out: FieldsV1 = {};
    if (node.member && node.children.size > 0) out['.'] = {};
    for (const element of [...node.children.keys()].sort()) out[element] = encode(node.children.get(element)!);
    return out;
  };
  return encode(root);
}

/** Decodes FieldsV1 into member paths: a leaf (`{}`) is a member, as is the parent of a `.`. */
export function fromFieldsV1(tree: unknown): Set<PathKey> {
  const out = new Set<PathKey>();
  const visit = (node: unknown, path: string[]) => {
    if (!isMap(node)) return;
    const entries = Object.entries(node);
    if (entries.length === 0 && path.length > 0) out.add(joinPath(path));
    for (const [element, child] of entries) {
      if (element === '.') {
        if (path.length > 0) out.add(joinPath(path));
        continue;
      }
      visit(child, [...path, element]);
    }
  };
  visit(tree, []);
  return out;
}
