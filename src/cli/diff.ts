// `minik8s diff -f`: what `apply -f` would change, as a unified diff of each live object against the server's dry run of the apply.
import { randomInt } from 'node:crypto';
import { isPlainObject } from '../core/api/canonical-json.js';
import type { KindDefinition } from '../core/api/kind.js';
import type { KubeObject } from '../core/api/meta.js';
import { kindCollectionPath, kindObjectPath, type ApiClient } from '../core/client/api-client.js';
import { NotFoundError } from '../core/errors.js';
import { formatError } from './cli-error.js';
import type { CliContext } from './context.js';
import { manifestNamespace, readManifests, type Manifest } from './manifests.js';
import { printYaml } from './printers.js';
import { LAST_APPLIED_ANNOTATION, lastApplied, threeWayMergePatch, withLastApplied } from './three-way-patch.js';
import { manifestName } from './apply-object.js';

export interface DiffArgs {
  filename: string[];
  recursive?: boolean;
}

/** Exit codes as kubectl diff documents them. */
export const DIFF_NONE = 0;
export const DIFF_FOUND = 1;
export const DIFF_ERROR = 2;

/** Fields every write changes or that only record who wrote what: left out of both sides so a diff shows only what the apply changes. */
const MASKED_ANNOTATIONS = [LAST_APPLIED_ANNOTATION, 'kubectl.kubernetes.io/last-applied-configuration'];

/** The object as diffed: without managedFields, resourceVersion, generation and the last-applied annotation. */
export function maskForDiff(obj: KubeObject | undefined): KubeObject | undefined {
  if (!obj) return undefined;
  const metadata: Record<string, unknown> = { ...obj.metadata };
  delete metadata.managedFields;
  delete metadata.resourceVersion;
  delete metadata.generation;
  if (isPlainObject(metadata.annotations)) {
    const annotations = { ...metadata.annotations };
    for (const key of MASKED_ANNOTATIONS) delete annotations[key];
    if (Object.keys(annotations).length) metadata.annotations = annotations;
    else delete metadata.annotations;
  }
  return { ...obj, metadata } as KubeObject;
}

/** kubectl diff's file name for an object: `apps.v1.Deployment.default.web` (core kinds without the group). */
export function diffFileName(def: Pick<KindDefinition, 'group' | 'version' | 'kind'>, namespace: string | undefined, name: string): string {
  return `${def.group ? `${def.group}.` : ''}${def.version}.${def.kind}.${namespace ?? ''}.${name}`;
}

/** GNU diff's hunk range: `start,count`, the count left out when it is 1, the line before when it is 0. */
function range(start: number, count: number): string {
  if (count === 0) return `${start - 1},0`;
  return count === 1 ? `${start}` : `${start},${count}`;
}

/** `diff -u -N` of two texts under kubectl's LIVE-/MERGED- names; empty when they are the same. */
export async function unifiedDiff(options: { live: string; merged: string; liveDir: string; mergedDir: string; file: string; now: Date }): Promise<string> {
  if (options.live === options.merged) return '';
  const { structuredPatch } = await import('diff');
  const patch = structuredPatch(options.file, options.file, options.live, options.merged, '', '', { context: 3 });
  const stamp = gnuTimestamp(options.now);
  const livePath = `${options.liveDir}/${options.file}`;
  const mergedPath = `${options.mergedDir}/${options.file}`;
  let out = `diff -u -N ${livePath} ${mergedPath}\n--- ${livePath}\t${stamp}\n+++ ${mergedPath}\t${stamp}\n`;
  for (const h of patch.hunks) {
    out += `@@ -${range(h.oldStart, h.oldLines)} +${range(h.newStart, h.newLines)} @@\n`;
    for (const line of h.lines) out += `${line}\n`;
  }
  return out;
}

/** `2026-11-26 07:40:00.000000000 +0000`, as GNU diff stamps its file headers. */
function gnuTimestamp(d: Date): string {
  const iso = d.toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}.${iso.slice(20, 23)}000000 +0000`;
}

/** The live object, or undefined when there is none yet. */
async function getLive(client: ApiClient, def: KindDefinition, namespace: string | undefined, name: string): Promise<KubeObject | undefined> {
  try {
    return (await client.request('GET', kindObjectPath(def, name, namespace))) as KubeObject;
  } catch (err) {
    if (err instanceof NotFoundError) return undefined;
    throw err;
  }
}

/**
 * What the server would store if `apply -f` sent this manifest now: the same create or
 * three-way merge patch apply sends, with dryRun=All so nothing is written.
 */
export async function dryRunApply(client: ApiClient, manifest: Manifest, namespace: string | undefined, live: KubeObject | undefined): Promise<KubeObject> {
  const { def } = manifest;
  const sent = withLastApplied(manifest.object);
  if (!live) {
    const body = namespace ? { ...sent, metadata: { ...(sent.metadata as Record<string, unknown>), namespace } } : sent;
    return (await client.request('POST', kindCollectionPath(def, namespace), { query: { dryRun: 'All' }, body })) as KubeObject;
  }
  const patch = threeWayMergePatch({ original: lastApplied(live), modified: sent, current: live });
  if (Object.keys(patch).length === 0) return live;
  return (await client.request('PATCH', kindObjectPath(def, manifestName(manifest), namespace), {
    query: { dryRun: 'All' },
    body: patch,
    contentType: 'application/merge-patch+json',
  })) as KubeObject;
}

/** A temp directory name as Go's os.MkdirTemp makes them: `/tmp/LIVE-123456789`. */
function tempDirName(prefix: string): string {
  return `/tmp/${prefix}-${randomInt(1_000_000_000, 4_294_967_295)}`;
}

export async function runDiff(ctx: CliContext, args: DiffArgs): Promise<number> {
  try {
    const manifests = await readManifests(args.filename, { stdin: ctx.stdin, recursive: args.recursive, verb: 'diff' });
    const client = ctx.client();
    const liveDir = tempDirName('LIVE');
    const mergedDir = tempDirName('MERGED');
    let found = false;
    for (const manifest of manifests) {
      const namespace = manifestNamespace(manifest, ctx);
      const name = manifestName(manifest);
      const live = await getLive(client, manifest.def, namespace, name);
      const merged = await dryRunApply(client, manifest, namespace, live);
      const liveText = live ? await printYaml(maskForDiff(live)) : '';
      const mergedText = await printYaml(maskForDiff(merged));
      const text = await unifiedDiff({
        live: liveText,
        merged: mergedText,
        liveDir,
        mergedDir,
        file: diffFileName(manifest.def, namespace, name),
        now: ctx.now(),
      });
      if (text) {
        found = true;
        ctx.out(text);
      }
    }
    return found ? DIFF_FOUND : DIFF_NONE;
  } catch (err) {
    // Exit 1 means "differences found": a failure must say something else, as kubectl's >1.
    ctx.err(formatError(err, ctx.env));
    return DIFF_ERROR;
  }
}
