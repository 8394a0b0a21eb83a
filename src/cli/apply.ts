// `minik8s apply -f`: creates what is missing and three-way-patches what exists, remembering what it applied.
import type { KubeObject } from '../core/api/meta.js';
import { NotFoundError } from '../core/errors.js';
import type { ApiClient } from '../core/client/api-client.js';
import { CliError, ConnectionError, formatError } from './cli-error.js';
import type { CliContext } from './context.js';
import { applyFunction } from './function-apply.js';
import { applyGpuJob } from './gpujob-apply.js';
import { manifestNamespace, readManifests, type Manifest } from './manifests.js';
import { objectRef } from './printers.js';
import { lastApplied, threeWayMergePatch, withLastApplied } from './three-way-patch.js';

export interface ApplyArgs {
  filename: string[];
  recursive?: boolean;
}

export type ApplyOutcome = 'created' | 'configured' | 'unchanged';

/** Applies one object; returns what happened to it. */
export async function applyOne(client: ApiClient, manifest: Manifest, namespace: string | undefined): Promise<ApplyOutcome> {
  const { def } = manifest;
  // A Function's code is too big for the last-applied annotation: its own apply keeps it out.
  if (def.kind === 'Function') return applyFunction(client, manifest, namespace);
  // A GpuJob's program likewise.
  if (def.kind === 'GpuJob') return applyGpuJob(client, manifest, namespace);
  const name = manifest.object.metadata.name;
  if (!name) throw new CliError(`error when retrieving current configuration of ${def.kind} from "${manifest.source}": resource name may not be empty`);
  const modified = withLastApplied(manifest.object);
  let live: KubeObject;
  try {
    live = await client.get(def, { namespace, name });
  } catch (err) {
    if (!(err instanceof NotFoundError)) throw err;
    const body = namespace ? { ...modified, metadata: { ...(modified.metadata as object), namespace } } : modified;
    await client.create(def, body, { namespace });
    return 'created';
  }
  // Without an annotation (created by `create`), nothing can be pruned: the original is unknown.
  const patch = threeWayMergePatch({ original: lastApplied(live), modified, current: live });
  if (Object.keys(patch).length === 0) return 'unchanged';
  await client.patch(def, { namespace, name }, patch);
  return 'configured';
}

export async function runApply(ctx: CliContext, args: ApplyArgs): Promise<number> {
  const manifests = await readManifests(args.filename, { stdin: ctx.stdin, recursive: args.recursive, verb: 'apply' });
  let failed = false;
  for (const manifest of manifests) {
    try {
      const outcome = await applyOne(ctx.client(), manifest, manifestNamespace(manifest, ctx));
      ctx.out(`${objectRef(manifest.def, manifest.object)} ${outcome}\n`);
    } catch (err) {
      // An unreachable server fails every object the same way: say it once.
      if (err instanceof ConnectionError) throw err;
      failed = true;
      ctx.err(formatError(err));
    }
  }
  return failed ? 1 : 0;
}
