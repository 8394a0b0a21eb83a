// `minik8s apply -f`: creates what is missing and three-way-patches what exists, remembering what it applied.
import type { ApiClient } from '../core/client/api-client.js';
import { createOrPatch, manifestName, type ApplyOutcome } from './apply-object.js';
import type { CliContext } from './context.js';
import { applyFunction } from './function-apply.js';
import { applyGpuJob } from './gpujob-apply.js';
import { manifestNamespace, sendEachManifest, type Manifest } from './manifests.js';
import { objectRef } from './printers.js';
import { withLastApplied } from './three-way-patch.js';

export interface ApplyArgs {
  filename: string[];
  recursive?: boolean;
  /** Server-side apply (`--server-side`), with its manager and `--force-conflicts`. */
  serverSide?: { fieldManager: string; force: boolean };
}

/** Applies one object; returns what happened to it. */
export async function applyOne(client: ApiClient, manifest: Manifest, namespace: string | undefined): Promise<ApplyOutcome> {
  const { def } = manifest;
  // A Function's code is too big for the last-applied annotation: its own apply keeps it out.
  if (def.kind === 'Function') return applyFunction(client, manifest, namespace);
  // A GpuJob's program likewise.
  if (def.kind === 'GpuJob') return applyGpuJob(client, manifest, namespace);
  const name = manifestName(manifest);
  return createOrPatch({ client, def, namespace, name, sent: withLastApplied(manifest.object) });
}

export function runApply(ctx: CliContext, args: ApplyArgs): Promise<number> {
  return sendEachManifest(ctx, { paths: args.filename, recursive: args.recursive, verb: 'apply' }, async (manifest) => {
    const namespace = manifestNamespace(manifest, ctx);
    const outcome = args.serverSide
      ? await (await import('./apply-server-side.js')).applyServerSide(ctx.client(), manifest, namespace, args.serverSide)
      : await applyOne(ctx.client(), manifest, namespace);
    return `${objectRef(manifest.def, manifest.object)} ${outcome}\n`;
  });
}
