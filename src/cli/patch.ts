// `minik8s patch TYPE NAME -p PATCH [--type strategic|merge|json]`: sends the patch as kubectl patch does and says whether anything changed.
import type { KubeObject } from '../core/api/meta.js';
import { kindObjectPath } from '../core/client/api-client.js';
import { CliError } from './cli-error.js';
import type { CliContext } from './context.js';
import { objectRef } from './printers.js';
import { fetchTargets } from './targets.js';

export interface PatchArgs {
  resources: string[];
  patch?: string;
  /** The patch as a file (--patch-file), instead of -p. */
  patchFile?: string;
  type?: string;
  subresource?: string;
}

/** The content type of each --type, as the API server reads them. */
export const PATCH_CONTENT_TYPES: Record<string, string> = {
  strategic: 'application/strategic-merge-patch+json',
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
};

/** Reads the patch text (JSON, or YAML as kubectl also takes); its shape is the server's to judge, as with kubectl. */
export async function parsePatch(text: string): Promise<unknown> {
  if (text.trim() === '') throw new CliError('unable to parse "": the patch is empty');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    try {
      value = (await import('yaml')).parse(text);
    } catch (err) {
      throw new CliError(`unable to parse "${text}": ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return value;
}

export async function runPatch(ctx: CliContext, args: PatchArgs): Promise<number> {
  const type = args.type ?? 'strategic';
  const contentType = PATCH_CONTENT_TYPES[type];
  if (!contentType) throw new CliError(`--type must be one of [json merge strategic], not "${type}"`);
  if (args.patch !== undefined && args.patchFile !== undefined) throw new CliError('--patch and --patch-file are mutually exclusive');
  let text = args.patch;
  if (args.patchFile !== undefined) {
    const { readFile } = await import('node:fs/promises');
    text = await readFile(args.patchFile, 'utf8').catch((err: NodeJS.ErrnoException) => {
      throw new CliError(`unable to read patch file: open ${args.patchFile}: ${err.code === 'ENOENT' ? 'no such file or directory' : err.message}`);
    });
  }
  if (text === undefined) throw new CliError('must specify --patch or --patch-file containing the contents of the patch');
  const body = await parsePatch(text);
  const targets = await fetchTargets(ctx, { resources: args.resources });
  for (const { def, obj } of targets) {
    const namespace = def.namespaced ? obj.metadata.namespace : undefined;
    let path = kindObjectPath(def, obj.metadata.name ?? '', namespace);
    if (args.subresource) path += `/${args.subresource}`;
    const patched = (await ctx.client().request('PATCH', path, { body, contentType })) as KubeObject;
    // The server stores nothing for a patch that changes nothing, so the resourceVersion tells.
    const unchanged = patched?.metadata?.resourceVersion === obj.metadata.resourceVersion;
    ctx.out(`${objectRef(def, obj)} patched${unchanged ? ' (no change)' : ''}\n`);
  }
  return 0;
}
