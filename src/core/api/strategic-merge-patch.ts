// Strategic merge patch, as kubectl sends it: maps merge, lists declared "merge" merge by their key, directives ($patch, $retainKeys, $setElementOrder, $deleteFromPrimitiveList) honoured.
import { BadRequestError } from '../errors.js';
import type { FieldPatchMeta, PatchMeta } from './patch-meta.js';

type Json = unknown;
type JsonMap = Record<string, Json>;

const PATCH = '$patch';
const RETAIN_KEYS = '$retainKeys';
const SET_ORDER = '$setElementOrder/';
const DELETE_FROM_LIST = '$deleteFromPrimitiveList/';

function isMap(v: Json): v is JsonMap {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function badPatch(message: string): BadRequestError {
  return new BadRequestError(`invalid strategic merge patch: ${message}`);
}

/** A value from a patch with its directives removed, for places where it replaces rather than merges. */
function withoutDirectives(value: Json): Json {
  if (Array.isArray(value)) return value.filter((e) => !(isMap(e) && e[PATCH] !== undefined && Object.keys(e).length === 1)).map(withoutDirectives);
  if (!isMap(value)) return value;
  const out: JsonMap = {};
  for (const [k, v] of Object.entries(value)) {
    if (k.startsWith('$')) continue;
    if (v !== null) out[k] = withoutDirectives(v);
  }
  return out;
}

/**
 * Applies a strategic merge patch to `original` (neither is changed). `meta` says which lists
 * merge and by which key; a field it does not name behaves as in a JSON merge patch (a list is
 * replaced). Returns undefined when the patch deletes the whole document (`$patch: delete`).
 */
export function applyStrategicMergePatch(original: Json, patch: Json, meta: PatchMeta = {}): Json {
  if (!isMap(patch)) throw badPatch('the patch must be a JSON object');
  return mergeMap(isMap(original) ? original : {}, patch, meta);
}

function mergeMap(original: JsonMap, patch: JsonMap, meta: PatchMeta): JsonMap | undefined {
  const directive = patch[PATCH];
  if (directive !== undefined) {
    if (directive === 'replace') return withoutDirectives(patch) as JsonMap;
    if (directive === 'delete') return undefined;
    throw badPatch(`unknown $patch value ${JSON.stringify(directive)} in a map (only replace and delete)`);
  }
  let out: JsonMap = { ...original };
  const retain = patch[RETAIN_KEYS];
  if (retain !== undefined) {
    if (!Array.isArray(retain) || retain.some((k) => typeof k !== 'string')) throw badPatch('$retainKeys must be a list of field names');
    const kept = new Set(retain as string[]);
    for (const key of Object.keys(patch)) {
      if (!key.startsWith('$') && patch[key] !== null && !kept.has(key)) throw badPatch(`$retainKeys does not list "${key}", which the patch sets`);
    }
    out = Object.fromEntries(Object.entries(out).filter(([k]) => kept.has(k)));
  }
  for (const [key, value] of Object.entries(patch)) {
    if (key.startsWith('$')) continue;
    const field = meta[key] ?? {};
    if (value === null) {
      delete out[key];
      continue;
    }
    const merged = mergeField(out[key], value, field);
    if (merged === undefined) delete out[key];
    else out[key] = merged;
  }
  // List directives name a field; they apply after that field's own patch (or alone, when the patch does not touch it).
  for (const [key, value] of Object.entries(patch)) {
    if (key.startsWith(DELETE_FROM_LIST)) {
      const name = key.slice(DELETE_FROM_LIST.length);
      if (!Array.isArray(value)) throw badPatch(`${key} must be a list`);
      const current = out[name];
      if (Array.isArray(current)) out[name] = current.filter((item) => !value.some((d) => sameValue(d, item)));
    }
  }
  for (const [key, value] of Object.entries(patch)) {
    if (key.startsWith(SET_ORDER)) {
      const name = key.slice(SET_ORDER.length);
      if (!Array.isArray(value)) throw badPatch(`${key} must be a list`);
      const current = out[name];
      if (Array.isArray(current)) out[name] = orderList(current, value, meta[name]?.mergeKey);
    }
  }
  return out;
}

function mergeField(original: Json, value: Json, field: FieldPatchMeta): Json {
  if (isMap(value)) return mergeMap(isMap(original) ? original : {}, value, field.fields ?? {});
  if (Array.isArray(value)) {
    if (!field.merge) return withoutDirectives(value);
    const current = Array.isArray(original) ? original : [];
    return field.mergeKey ? mergeListOfMaps(current, value, field.mergeKey, field.fields ?? {}) : mergeScalarList(current, value);
  }
  return value;
}

/** A list of scalars declared "merge" is a set: the patch adds what is missing; `$deleteFromPrimitiveList` removes. */
function mergeScalarList(original: Json[], patch: Json[]): Json[] {
  const out = [...original];
  for (const item of patch) {
    if (isMap(item) || Array.isArray(item)) throw badPatch('a list merged as a set holds only scalars');
    if (!out.some((o) => sameValue(o, item))) out.push(item);
  }
  return out;
}

function mergeListOfMaps(original: Json[], patch: Json[], mergeKey: string, meta: PatchMeta): Json[] {
  // `{"$patch": "replace"}` among the elements: the list becomes the patch's other elements.
  if (patch.some((e) => isMap(e) && e[PATCH] === 'replace')) return withoutDirectives(patch.filter((e) => !(isMap(e) && e[PATCH] === 'replace'))) as Json[];
  const out: (Json | undefined)[] = [...original];
  for (const element of patch) {
    if (!isMap(element)) throw badPatch(`the list merged by "${mergeKey}" holds maps, not ${JSON.stringify(element)}`);
    const key = element[mergeKey];
    if (key === undefined) throw badPatch(`an element of a list merged by "${mergeKey}" has no "${mergeKey}"`);
    const at = out.findIndex((o) => isMap(o) && sameValue(o[mergeKey], key));
    const directive = element[PATCH];
    if (directive === 'delete') {
      if (at >= 0) out[at] = undefined;
      continue;
    }
    if (directive !== undefined && directive !== 'merge') throw badPatch(`unknown $patch value ${JSON.stringify(directive)} in a list element`);
    if (at >= 0) out[at] = mergeMap(out[at] as JsonMap, element, meta);
    else out.push(withoutDirectives(element));
  }
  return out.filter((e) => e !== undefined);
}

/**
 * `$setElementOrder`: the elements it names take, in its order, the places such elements hold in
 * the merged list; elements it does not name (added by someone else) stay where they are.
 */
function orderList(list: Json[], order: Json[], mergeKey: string | undefined): Json[] {
  const keyOf = (e: Json): Json => (mergeKey && isMap(e) ? e[mergeKey] : e);
  const wanted = order.map((o) => (mergeKey && isMap(o) ? o[mergeKey] : o));
  const rank = (e: Json) => wanted.findIndex((w) => sameValue(w, keyOf(e)));
  const slots = list.map((e, i) => (rank(e) >= 0 ? i : -1)).filter((i) => i >= 0);
  const named = slots.map((i) => list[i]).sort((a, b) => rank(a) - rank(b));
  const out = [...list];
  slots.forEach((slot, i) => {
    out[slot] = named[i];
  });
  return out;
}

function sameValue(a: Json, b: Json): boolean {
  return a === b || (typeof a === 'object' && typeof b === 'object' && JSON.stringify(a) === JSON.stringify(b));
}
