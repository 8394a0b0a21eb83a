// `apply` for Functions: the code (up to 1 MiB) stays out of the last-applied annotation (at most 256 KiB), and is replaced whole when it changed.
import { isPlainObject } from '../core/api/canonical-json.js';
import type { ApiClient } from '../core/client/api-client.js';
import { applyWithBulkyField, type ApplyOutcome } from './apply-object.js';
import type { Manifest } from './manifests.js';

type Json = Record<string, unknown>;

/**
 * The merge patch that makes `current` code into `wanted` code, whole: files dropped from the
 * code are removed (null), and files and archive replace each other.
 */
export function codeReplacementPatch(current: unknown, wanted: Json): Json {
  const cur = isPlainObject(current) ? current : {};
  const patch: Json = {};
  if (isPlainObject(wanted.files)) {
    const files: Json = { ...wanted.files };
    for (const name of Object.keys(isPlainObject(cur.files) ? cur.files : {})) if (!(name in files)) files[name] = null;
    patch.files = isPlainObject(cur.files) ? files : wanted.files;
  } else if (cur.files !== undefined) patch.files = null;
  if (wanted.archive !== undefined) patch.archive = wanted.archive;
  else if (cur.archive !== undefined) patch.archive = null;
  return patch;
}

/** Applies one Function manifest; the same outcomes as for any object. */
export function applyFunction(client: ApiClient, manifest: Manifest, namespace: string | undefined): Promise<ApplyOutcome> {
  return applyWithBulkyField(client, manifest, namespace, {
    field: 'code',
    // Only code in the API's shape (files or archive) is kept out; anything else goes as it is, for the server to refuse.
    keptOut: isPlainObject,
    replacement: (live, wanted) => codeReplacementPatch(live, wanted as Json),
  });
}
