// `apply` for GpuJobs: the program's files (up to 1 MiB) stay out of the last-applied annotation (at most 256 KiB), which remembers them by digest.
import { createHash } from 'node:crypto';
import { gpuJobKind } from '../core/api/gpujob.js';
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

function programOf(obj: unknown): unknown {
  return isPlainObject(obj) && isPlainObject(obj.spec) ? obj.spec.program : undefined;
}

function withoutProgram(obj: unknown): Json | undefined {
  if (!isPlainObject(obj) || !isPlainObject(obj.spec)) return isPlainObject(obj) ? obj : undefined;
  const { program: _program, ...spec } = obj.spec;
  return { ...obj, spec };
}

/**
 * Creates the job, or reports it unchanged. A GpuJob's spec cannot change (it runs what it was
 * created with): a changed manifest is sent as a patch all the same, and the server's 422 says to
 * delete and apply again.
 */
export async function applyGpuJob(client: ApiClient, manifest: Manifest, namespace: string | undefined): Promise<'created' | 'configured' | 'unchanged'> {
  const name = manifest.object.metadata.name;
  if (!name) throw new CliError(`error when retrieving current configuration of GpuJob from "${manifest.source}": resource name may not be empty`);
  const program = programOf(manifest.object);
  const spec = isPlainObject(manifest.object.spec) ? manifest.object.spec : {};
  const remembered = program === undefined ? manifest.object : { ...manifest.object, spec: { ...spec, program: { sha256: createHash('sha256').update(canonicalJson(program)).digest('hex') } } };
  const annotated = withLastApplied(remembered as Json);
  const sent: Json = program === undefined ? annotated : { ...annotated, spec: { ...(annotated.spec as Json), program } };
  let live: KubeObject;
  try {
    live = await client.get(gpuJobKind, { namespace, name });
  } catch (err) {
    if (!(err instanceof NotFoundError)) throw err;
    const body = namespace ? { ...sent, metadata: { ...(sent.metadata as Json), namespace } } : sent;
    await client.create(gpuJobKind, body, { namespace });
    return 'created';
  }
  const patch: Json = threeWayMergePatch({ original: withoutProgram(lastApplied(live)), modified: withoutProgram(sent), current: withoutProgram(live) });
  if (program !== undefined && !deepEqual(programOf(live), program)) {
    patch.spec = { ...(isPlainObject(patch.spec) ? patch.spec : {}), program };
  }
  if (Object.keys(patch).length === 0) return 'unchanged';
  await client.patch(gpuJobKind, { namespace, name }, patch);
  return 'configured';
}
