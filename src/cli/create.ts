// `minik8s create -f`: creates each object in the manifests; existing ones are an error.
import type { CliContext } from './context.js';
import { manifestNamespace, sendEachManifest } from './manifests.js';
import { objectRef } from './printers.js';

export interface CreateArgs {
  filename: string[];
  recursive?: boolean;
}

export function runCreate(ctx: CliContext, args: CreateArgs): Promise<number> {
  return sendEachManifest(ctx, { paths: args.filename, recursive: args.recursive, verb: 'create' }, async (manifest) => {
    const namespace = manifestNamespace(manifest, ctx);
    const body = namespace ? { ...manifest.object, metadata: { ...manifest.object.metadata, namespace } } : manifest.object;
    const created = await ctx.client().create(manifest.def, body, { namespace });
    // The server names objects created with generateName: print the name it chose.
    return `${objectRef(manifest.def, created?.metadata ? created : manifest.object)} created\n`;
  });
}
