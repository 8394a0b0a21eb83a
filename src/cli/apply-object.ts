// The step every `apply` shares: get the live object, create it if missing, else three-way-patch it; and the variant for a spec field too big for the last-applied annotation.
import { createHash } from 'node:crypto';
import { canonicalJson, deepEqual, isPlainObject } from '../core/api/canonical-json.js';
import type { KindDefinition } from '../core/api/kind.js';
import type { KubeObject } from '../core/api/meta.js';
import type { ApiClient } from '../core/client/api-client.js';
import { NotFoundError } from '../core/errors.js';
import { CliError } from './cli-error.js';
import type { Manifest } from './manifests.js';
import { lastApplied, threeWayMergePatch, withLastApplied } from './three-way-patch.js';

type Json = Record<string, unknown>;

export type ApplyOutcome = 'created' | 'configured' | 'unchanged';

/** The manifest's object's name; apply cannot go on without one. */
export function manifestName(manifest: Manifest): string {
  const name = manifest.object.metadata.name;
  if (!name)
    throw new CliError(`error when retrieving current configuration of ${manifest.def.kind} from "${manifest.source}": resource name may not be empty`);
  return name;
}

export interface CreateOrPatchOptions {
  client: ApiClient;
  def: KindDefinition;
  namespace: string | undefined;
  name: string;
  /** What is created, or patched towards: the manifest's object with its last-applied annotation. */
  sent: Json;
  /** The part of an object the three-way patch compares (default: all of it). */
  compared?: (obj: unknown) => Json | undefined;
  /** Adds to the patch what `compared` left out, seeing the live object. */
  amend?: (patch: Json, live: KubeObject) => void;
}

/** Creates the object, or patches the live one towards it; returns what happened. */
export async function createOrPatch(options: CreateOrPatchOptions): Promise<ApplyOutcome> {
  const { client, def, namespace, name, sent } = options;
  let live: KubeObject;
  try {
    live = await client.get(def, { namespace, name });
  } catch (err) {
    if (!(err instanceof NotFoundError)) throw err;
    const body = namespace ? { ...sent, metadata: { ...(sent.metadata as Json), namespace } } : sent;
    await client.create(def, body, { namespace });
    return 'created';
  }
  const compared = options.compared ?? ((obj: unknown) => obj as Json | undefined);
  // Without an annotation (created by `create`), nothing can be pruned: the original is unknown.
  const patch: Json = threeWayMergePatch({ original: compared(lastApplied(live)), modified: compared(sent), current: compared(live) });
  options.amend?.(patch, live);
  if (Object.keys(patch).length === 0) return 'unchanged';
  await client.patch(def, { namespace, name }, patch);
  return 'configured';
}

export interface BulkyFieldOptions {
  /** The spec field kept out of the annotation: a Function's `code`, a GpuJob's `program`. */
  field: string;
  /** Whether the manifest's value is one to keep out (others travel like any field). */
  keptOut: (value: unknown) => boolean;
  /** The patch for the field when the live value differs from the wanted one. */
  replacement: (live: unknown, wanted: unknown) => unknown;
}

function specField(obj: unknown, field: string): unknown {
  return isPlainObject(obj) && isPlainObject(obj.spec) ? obj.spec[field] : undefined;
}

function withoutSpecField(obj: unknown, field: string): Json | undefined {
  if (!isPlainObject(obj)) return undefined;
  if (!isPlainObject(obj.spec)) return obj;
  const { [field]: _dropped, ...spec } = obj.spec;
  return { ...obj, spec };
}

/**
 * Applies an object with one spec field too big for the last-applied annotation (at most 256 KiB):
 * the annotation remembers the field by its digest, the three-way patch leaves it out, and a
 * changed field is patched on its own terms.
 */
export async function applyWithBulkyField(
  client: ApiClient,
  manifest: Manifest,
  namespace: string | undefined,
  options: BulkyFieldOptions,
): Promise<ApplyOutcome> {
  const { field } = options;
  const name = manifestName(manifest);
  const spec = isPlainObject(manifest.object.spec) ? manifest.object.spec : {};
  const value = spec[field];
  const keptOut = options.keptOut(value);
  // The annotation remembers the field by its digest: enough to know the value is ours, small enough to fit.
  const remembered = keptOut
    ? { ...manifest.object, spec: { ...spec, [field]: { sha256: createHash('sha256').update(canonicalJson(value)).digest('hex') } } }
    : manifest.object;
  const annotated = withLastApplied(remembered as Json);
  const sent: Json = value === undefined ? annotated : { ...annotated, spec: { ...(annotated.spec as Json), [field]: value } };
  return createOrPatch({
    client,
    def: manifest.def,
    namespace,
    name,
    sent,
    compared: (obj) => withoutSpecField(obj, field),
    amend: (patch, live) => {
      const liveValue = specField(live, field);
      if (keptOut && !deepEqual(liveValue, value))
        patch.spec = { ...(isPlainObject(patch.spec) ? patch.spec : {}), [field]: options.replacement(liveValue, value) };
    },
  });
}
