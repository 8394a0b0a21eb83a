// The three-way JSON merge patch behind `apply`: last applied, new manifest and live object in, patch out.
import { canonicalJson, deepEqual, isPlainObject } from '../core/api/canonical-json.js';
import { SERVER_SET_METADATA } from '../core/api/meta.js';

/** Where `apply` remembers what it last applied (kubectl uses kubectl.kubernetes.io/last-applied-configuration). */
export const LAST_APPLIED_ANNOTATION = 'minik8s.io/last-applied-configuration';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: unknown };

/** A list whose elements all carry a string `name`: a merge-keyed list in a strategic merge (containers, volumes, env). */
function isNamedList(list: unknown[]): list is { name: string }[] {
  return list.every((x) => isPlainObject(x) && typeof x.name === 'string');
}

/**
 * True when `have` holds everything `want` says, allowing extra fields in objects: what the
 * server adds when it defaults (a container's imagePullPolicy, a port's protocol). A list of
 * named elements may also hold extra elements, matched by name: what admission adds (a pod's
 * service-account token volume and its mounts), as a strategic merge would leave them.
 */
export function isSubset(want: unknown, have: unknown): boolean {
  if (Array.isArray(want)) {
    if (!Array.isArray(have)) return false;
    if (want.length > 0 && isNamedList(want) && isNamedList(have)) {
      const byName = new Map(have.map((x) => [x.name, x]));
      return want.every((x) => isSubset(x, byName.get(x.name)));
    }
    return want.length === have.length && want.every((x, i) => isSubset(x, have[i]));
  }
  if (isPlainObject(want)) return isPlainObject(have) && Object.entries(want).every(([k, v]) => v === undefined || isSubset(v, have[k]));
  return want === have;
}

export interface ThreeWayPatchInput {
  /** What the previous apply sent (from the annotation); undefined on the first apply over an existing object. */
  original: unknown;
  /** The manifest being applied now. */
  modified: unknown;
  /** The live object from the server. */
  current: unknown;
}

/**
 * One level of the diff. A key goes into the patch when the manifest sets it to something the
 * live object does not hold (whole value for arrays and scalars, recursing into objects), or
 * when the last apply set it, this manifest dropped it, and the live object still has it (null).
 * Keys only the live object has, set by controllers or other users, are left alone.
 */
function diffObjects(original: JsonObject | undefined, modified: JsonObject, current: JsonObject | undefined): JsonObject {
  const patch: JsonObject = {};
  for (const [key, want] of Object.entries(modified)) {
    if (want === undefined) continue;
    const have = current?.[key];
    if (want === null) {
      // An explicit null in a manifest means "remove", as in a merge patch.
      if (have !== undefined) patch[key] = null;
      continue;
    }
    if (isPlainObject(want) && isPlainObject(have)) {
      const prev = original?.[key];
      const sub = diffObjects(isPlainObject(prev) ? prev : undefined, want, have);
      if (Object.keys(sub).length) patch[key] = sub;
    } else if (Array.isArray(want)) {
      // Merge patch replaces arrays whole. An array the user did not touch since the last apply,
      // and which the live object still holds apart from server defaults, is left alone; otherwise
      // every apply would rewrite (and report "configured" for) every defaulted list.
      const prev = original?.[key];
      const untouched = original === undefined || deepEqual(prev, want);
      if (!(untouched && isSubset(want, have))) patch[key] = want;
    } else if (!deepEqual(want, have)) {
      patch[key] = want;
    }
  }
  for (const key of Object.keys(original ?? {})) {
    if (Object.hasOwn(modified, key)) continue;
    if (current !== undefined && Object.hasOwn(current, key)) patch[key] = null;
  }
  return patch;
}

/**
 * The merge patch that takes `current` to `modified` without clobbering fields others own.
 * `status` is never part of it: spec writes ignore status and controllers own it.
 * An empty object means there is nothing to change.
 */
export function threeWayMergePatch(input: ThreeWayPatchInput): Record<string, Json> {
  const strip = (v: unknown): JsonObject | undefined => {
    if (!isPlainObject(v)) return undefined;
    const { status: _status, ...rest } = v;
    return rest;
  };
  const modified = strip(input.modified) ?? {};
  return diffObjects(strip(input.original), modified, strip(input.current)) as Record<string, Json>;
}

/**
 * The object apply sends: the manifest without status or server-set metadata, with the
 * last-applied annotation holding exactly that (minus the annotation itself).
 */
export function withLastApplied(manifest: JsonObject): JsonObject {
  const { status: _status, ...rest } = manifest;
  const metadata = { ...(isPlainObject(rest.metadata) ? rest.metadata : {}) };
  for (const key of SERVER_SET_METADATA) delete metadata[key];
  const annotations = { ...(isPlainObject(metadata.annotations) ? metadata.annotations : {}) };
  delete annotations[LAST_APPLIED_ANNOTATION];
  if (Object.keys(annotations).length) metadata.annotations = annotations;
  else delete metadata.annotations;
  const applied = { ...rest, metadata };
  return { ...applied, metadata: { ...metadata, annotations: { ...annotations, [LAST_APPLIED_ANNOTATION]: canonicalJson(applied) } } };
}

/** The configuration a previous apply stored on a live object, if any (a corrupt value counts as none). */
export function lastApplied(live: unknown): JsonObject | undefined {
  if (!isPlainObject(live) || !isPlainObject(live.metadata)) return undefined;
  const annotations = live.metadata.annotations;
  const text = isPlainObject(annotations) ? annotations[LAST_APPLIED_ANNOTATION] : undefined;
  if (typeof text !== 'string') return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    return isPlainObject(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}
