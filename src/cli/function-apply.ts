// `apply` for Functions: the code (up to 1 MiB) stays out of the last-applied annotation (at most 256 KiB), and is replaced whole when it changed.
import { createHash } from 'node:crypto';
import { functionKind } from '../core/api/function.js';
import type { KubeObject } from '../core/api/meta.js';
import type { ApiClient } from '../core/client/api-client.js';
import { NotFoundError } from '../core/errors.js';
import { CliError } from './cli-error.js';
import type { Manifest } from './manifests.js';
import { canonicalJson, deepEqual } from '../core/api/canonical-json.js';
import { lastApplied, threeWayMergePatch, withLastApplied } from './three-way-patch.js';

type Json = Record<string, unknown>;

function isPlainObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function withoutCode(obj: unknown): Json | undefined {
  if (!isPlainObject(obj)) return undefined;
  if (!isPlainObject(obj.spec)) return obj;
  const { code: _code, ...spec } = obj.spec;
  return { ...obj, spec };
}

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
export async function applyFunction(client: ApiClient, manifest: Manifest, namespace: string | undefined): Promise<'created' | 'configured' | 'unchanged'> {
  const name = manifest.object.metadata.name;
  if (!name) throw new CliError(`error when retrieving current configuration of Function from "${manifest.source}": resource name may not be empty`);
  const spec = isPlainObject(manifest.object.spec) ? manifest.object.spec : {};
  const code = spec.code;
  // The annotation remembers the code by its digest: enough to know the code is ours, small enough to fit.
  const remembered = isPlainObject(code) ? { ...manifest.object, spec: { ...spec, code: { sha256: createHash('sha256').update(canonicalJson(code)).digest('hex') } } } : manifest.object;
  const annotated = withLastApplied(remembered as Json);
  const sent: Json = code === undefined ? annotated : { ...annotated, spec: { ...(annotated.spec as Json), code } };
  let live: KubeObject;
  try {
    live = await client.get(functionKind, { namespace, name });
  } catch (err) {
    if (!(err instanceof NotFoundError)) throw err;
    const body = namespace ? { ...sent, metadata: { ...(sent.metadata as Json), namespace } } : sent;
    await client.create(functionKind, body, { namespace });
    return 'created';
  }
  const patch: Json = threeWayMergePatch({ original: withoutCode(lastApplied(live)), modified: withoutCode(sent), current: withoutCode(live) });
  const liveCode = isPlainObject(live.spec) ? (live.spec as Json).code : undefined;
  if (isPlainObject(code) && !deepEqual(liveCode, code)) {
    patch.spec = { ...(isPlainObject(patch.spec) ? patch.spec : {}), code: codeReplacementPatch(liveCode, code) };
  }
  if (Object.keys(patch).length === 0) return 'unchanged';
  await client.patch(functionKind, { namespace, name }, patch);
  return 'configured';
}
