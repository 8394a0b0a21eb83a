// How an applied configuration lands on a live object: maps merge field by field, lists by their merge key or as sets where the patch metadata says so, anything else is replaced; and how a field an applier let go of is taken out.
import type { FieldPatchMeta, PatchMeta } from '../patch-meta.js';
import { itemKey, listMode, pathElements, valueKey, type PathKey } from './field-set.js';

function isMap(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The live object with the configuration merged in (neither is changed). A null in the configuration removes the field. */
export function mergeApplied(live: unknown, config: unknown, meta: PatchMeta | undefined): unknown {
  return mergeMap(isMap(live) ? live : {}, isMap(config) ? config : {}, meta);
}

function mergeMap(live: Record<string, unknown>, config: Record<string, unknown>, meta: PatchMeta | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = { ...live };
  for (const [name, value] of Object.entries(config)) {
    if (value === null || value === undefined) delete out[name];
    else out[name] = mergeValue(live[name], value, meta?.[name]);
  }
  return out;
}

function mergeValue(live: unknown, config: unknown, meta: FieldPatchMeta | undefined): unknown {
  if (isMap(config) && isMap(live) && !('matchLabels' in config || 'matchExpressions' in config)) return mergeMap(live, config, meta?.fields);
  if (Array.isArray(config) && Array.isArray(live) && config.length > 0) {
    const mode = listMode(config, meta);
    if (mode === 'keyed' && listMode(live, meta) === 'keyed') {
      const key = meta!.mergeKey!;
      const out = [...live];
      for (const item of config) {
        const at = out.findIndex((l) => itemKey(l, key) === itemKey(item, key));
        if (at < 0) out.push(item);
        else out[at] = mergeValue(out[at], item, { fields: meta?.fields });
      }
      return out;
    }
    if (mode === 'set' && listMode(live, meta) === 'set') {
      const have = new Set(live.map(valueKey));
      return [...live, ...config.filter((i) => !have.has(valueKey(i)))];
    }
  }
  return config;
}

/**
 * Removes the member at `path` from `obj` (changed in place): a field, a keyed item, a value of
 * a set. A path that no longer leads anywhere removes nothing.
 */
export function removeField(obj: Record<string, unknown>, path: PathKey, meta: PatchMeta | undefined): void {
  const elements = pathElements(path);
  let parent: unknown = obj;
  let fields: PatchMeta | undefined = meta;
  let fieldMeta: FieldPatchMeta | undefined;
  for (let i = 0; i < elements.length; i++) {
    const element = elements[i]!;
    const last = i === elements.length - 1;
    if (element.startsWith('f:')) {
      if (!isMap(parent)) return;
      const name = element.slice(2);
      if (last) {
        delete parent[name];
        return;
      }
      fieldMeta = fields?.[name];
      fields = fieldMeta?.fields;
      parent = parent[name];
      continue;
    }
    if (!Array.isArray(parent)) return;
    const mergeKey = fieldMeta?.mergeKey;
    const at =
      element.startsWith('k:') && mergeKey
        ? parent.findIndex((item) => itemKey(item, mergeKey) === element)
        : parent.findIndex((item) => valueKey(item) === element);
    if (at < 0) return;
    if (last) {
      parent.splice(at, 1);
      return;
    }
    parent = parent[at];
    fieldMeta = undefined;
  }
}

/** A deep copy of a JSON value (objects read from the store or a request are plain JSON). */
export function cloneJson<T>(value: T): T {
  return structuredClone(value);
}
