// Reads `-f FILE|DIR|-` manifests: multi-document YAML or JSON, with kubectl's error messages.
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { isPlainObject } from '../core/api/canonical-json.js';
import type { KindDefinition } from '../core/api/kind.js';
import type { KubeObject } from '../core/api/meta.js';
import { kindByApiVersion } from '../core/api/registry.js';
import { CliError, ConnectionError, formatError } from './cli-error.js';
import { loadCustomKinds } from './custom-kinds.js';
import type { CliContext } from './context.js';
import { resolveFunctionManifest } from './function-code.js';
import { resolveGpuJobManifest } from './gpujob-files.js';
import { statExisting } from './local-files.js';

/** Kubernetes stores objects of at most 1.5 MiB (etcd's request limit); a bigger document is a mistake or an attack. */
export const MAX_DOCUMENT_BYTES = 2 * 1024 * 1024;
/** Refuse to read a file larger than this at all. */
export const MAX_FILE_BYTES = 64 * 1024 * 1024;
/** Aliases per document; real manifests use a handful, alias bombs use thousands. */
export const MAX_ALIAS_COUNT = 100;

const MANIFEST_EXTENSIONS = ['.yaml', '.yml', '.json'];

export interface Manifest {
  object: KubeObject;
  def: KindDefinition;
  /** The file as the user named it, or `STDIN`. */
  source: string;
}

export interface ReadManifestsOptions {
  stdin?: NodeJS.ReadableStream;
  /** Descend into subdirectories (`-R`). */
  recursive?: boolean;
  /** The command, for kubectl's `no objects passed to apply`. */
  verb?: string;
  /** Called once before mapping when an object's kind is unknown (reads the server's CRDs). */
  loadCustomKinds?: () => Promise<void>;
}

/** Parses one file's text into objects that have apiVersion and kind (not yet mapped to kinds). */
export function parseManifestText(text: string, source: string): KubeObject[] {
  const objects: KubeObject[] = [];
  const docs = parseAllDocuments(text, { prettyErrors: true });
  let index = 0;
  for (const doc of docs) {
    index++;
    const [start, , end] = doc.range;
    if (end - start > MAX_DOCUMENT_BYTES) {
      throw new CliError(`error parsing ${source}: document ${index} is larger than ${MAX_DOCUMENT_BYTES / 1024 / 1024} MiB`);
    }
    const syntax = doc.errors[0];
    if (syntax) {
      const where = syntax.linePos?.[0];
      const message = syntax.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
      throw new CliError(`error parsing ${source}: yaml: ${where ? `line ${where.line}, column ${where.col}: ` : ''}${message}`);
    }
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
    } catch (err) {
      throw new CliError(`error parsing ${source}: document ${index}: ${err instanceof Error ? err.message : String(err)}`);
    }
    // An empty document (a stray `---`, a file of comments) is skipped, as kubectl does.
    if (value === null || value === undefined) continue;
    if (!isPlainObject(value)) {
      throw new CliError(
        `error validating "${source}": error validating data: document ${index} is not an object (found ${Array.isArray(value) ? 'a list' : typeof value})`,
      );
    }
    const missing = [
      ...(typeof value.apiVersion === 'string' && value.apiVersion ? [] : ['apiVersion not set']),
      ...(typeof value.kind === 'string' && value.kind ? [] : ['kind not set']),
    ];
    if (missing.length) throw new CliError(`error validating "${source}": error validating data: [${missing.join(', ')}]`);
    if (value.metadata !== undefined && !isPlainObject(value.metadata)) {
      throw new CliError(`error validating "${source}": error validating data: metadata must be an object`);
    }
    // A v1 List (what `get -o yaml` writes for several objects) expands to its items.
    if (value.kind === 'List' && Array.isArray(value.items)) {
      for (const item of value.items) {
        if (!isPlainObject(item) || typeof item.apiVersion !== 'string' || typeof item.kind !== 'string') {
          throw new CliError(`error validating "${source}": error validating data: every List item needs apiVersion and kind`);
        }
        objects.push({ ...item, metadata: isPlainObject(item.metadata) ? item.metadata : {} } as KubeObject);
      }
      continue;
    }
    objects.push({ ...value, metadata: value.metadata ?? {} } as KubeObject);
  }
  return objects;
}

/** Finds the kind of a parsed object, or fails as kubectl does for an unknown type. */
export function mapManifest(object: KubeObject, source: string): Manifest {
  const def = kindByApiVersion(object.apiVersion, object.kind);
  if (!def) {
    throw new CliError(
      `resource mapping not found for name: "${object.metadata.name ?? ''}" namespace: "${object.metadata.namespace ?? ''}" from "${source}": no matches for kind "${object.kind}" in version "${object.apiVersion}"\nensure CRDs are installed first`,
    );
  }
  return { object, def, source };
}

async function readStdin(stdin: NodeJS.ReadableStream): Promise<string> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    size += buf.length;
    if (size > MAX_FILE_BYTES) throw new CliError(`error reading STDIN: more than ${MAX_FILE_BYTES / 1024 / 1024} MiB`);
    chunks.push(buf);
  }
  return Buffer.concat(chunks).toString('utf8');
}

async function listFiles(dir: string, recursive: boolean): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  entries.sort((a, b) => a.name.localeCompare(b.name));
  const files: string[] = [];
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (recursive) files.push(...(await listFiles(path, recursive)));
    } else if (MANIFEST_EXTENSIONS.some((ext) => entry.name.endsWith(ext))) {
      files.push(path);
    }
  }
  return files;
}

/** The files a `-f` argument names: itself, or a directory's manifest files in name order. */
async function expandPath(path: string, recursive: boolean): Promise<string[]> {
  const info = await statExisting(path);
  return info.isDirectory() ? listFiles(path, recursive) : [path];
}

/** Reads every `-f` argument; all of them are parsed and mapped before anything is sent. */
export async function readManifests(paths: readonly string[], options: ReadManifestsOptions = {}): Promise<Manifest[]> {
  if (paths.length === 0) throw new CliError('must specify one of -f and -k');
  const manifests: Manifest[] = [];
  const mapAll = async (objects: KubeObject[], source: string) => {
    if (options.loadCustomKinds && objects.some((o) => !kindByApiVersion(o.apiVersion, o.kind))) await options.loadCustomKinds();
    return objects.map((o) => mapManifest(o, source));
  };
  for (const path of paths) {
    if (path === '-') {
      if (!options.stdin) throw new CliError('no standard input to read');
      const text = await readStdin(options.stdin);
      manifests.push(...(await mapAll(parseManifestText(text, 'STDIN'), 'STDIN')));
      continue;
    }
    for (const file of await expandPath(path, options.recursive ?? false)) {
      const info = await stat(file);
      if (info.size > MAX_FILE_BYTES) throw new CliError(`error reading ${file}: the file is larger than ${MAX_FILE_BYTES / 1024 / 1024} MiB`);
      let text: string;
      try {
        text = await readFile(file, 'utf8');
      } catch (err) {
        throw new CliError(`error reading ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
      }
      manifests.push(...(await mapAll(parseManifestText(text, file), file)));
    }
  }
  if (manifests.length === 0) throw new CliError(`no objects passed to ${options.verb ?? 'apply'}`);
  // A Function's spec.codePath and requirementsPath name files beside its manifest: read them now (delete needs no code).
  if (options.verb !== 'delete') {
    for (const m of manifests) if (m.def.kind === 'Function') m.object = await resolveFunctionManifest(m.object, m.source);
    // A GpuJob's spec.program.path likewise: its files go up with the job.
    for (const m of manifests) if (m.def.kind === 'GpuJob') m.object = await resolveGpuJobManifest(m.object, m.source);
  }
  return manifests;
}

/**
 * The namespace a manifest's object goes to: its own, else the context's; a clash with an
 * explicit `-n` is refused as kubectl does. Cluster-scoped kinds have none.
 */
export function manifestNamespace(manifest: Manifest, context: { namespace: string; namespaceExplicit: boolean }): string | undefined {
  if (!manifest.def.namespaced) return undefined;
  const own = manifest.object.metadata.namespace;
  if (own && context.namespaceExplicit && own !== context.namespace) {
    throw new CliError(
      `the namespace from the provided object "${own}" does not match the namespace "${context.namespace}". You must pass '--namespace=${own}' to perform this operation.`,
    );
  }
  return own || context.namespace;
}

/**
 * Reads the `-f` manifests, then sends each with `send`, printing the line it returns. A failed
 * object is reported and the rest go on (exit code 1), as kubectl does; an unreachable server
 * stops everything, since it would fail every object the same way.
 */
export async function sendEachManifest(
  ctx: CliContext,
  options: ReadManifestsOptions & { paths: readonly string[] },
  send: (manifest: Manifest) => Promise<string>,
): Promise<number> {
  const { paths, ...read } = options;
  const manifests = await readManifests(paths, { ...read, stdin: ctx.stdin, loadCustomKinds: () => loadCustomKinds(ctx) });
  let failed = false;
  for (const manifest of manifests) {
    try {
      ctx.out(await send(manifest));
    } catch (err) {
      if (err instanceof ConnectionError) throw err;
      failed = true;
      ctx.err(formatError(err));
    }
  }
  return failed ? 1 : 0;
}
