// `minik8s create -f`: creates each object in the manifests; existing ones are an error.
import { ConnectionError, formatError } from './cli-error.js';
import type { CliContext } from './context.js';
import { manifestNamespace, readManifests } from './manifests.js';
import { objectRef } from './printers.js';

export interface CreateArgs {
  filename: string[];
  recursive?: boolean;
}

export async function runCreate(ctx: CliContext, args: CreateArgs): Promise<number> {
  const manifests = await readManifests(args.filename, { stdin: ctx.stdin, recursive: args.recursive, verb: 'create' });
  let failed = false;
  for (const manifest of manifests) {
    try {
      const namespace = manifestNamespace(manifest, ctx);
      const body = namespace ? { ...manifest.object, metadata: { ...manifest.object.metadata, namespace } } : manifest.object;
      const created = await ctx.client().create(manifest.def, body, { namespace });
      // The server names objects created with generateName: print the name it chose.
      ctx.out(`${objectRef(manifest.def, created?.metadata ? created : manifest.object)} created\n`);
    } catch (err) {
      if (err instanceof ConnectionError) throw err;
      failed = true;
      ctx.err(formatError(err));
    }
  }
  return failed ? 1 : 0;
}
