// Reads a function's code for the CLI: `-f handler.py`, a directory, or a .zip/.tar.gz; and resolves a manifest's spec.codePath/requirementsPath.
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { pack } from 'tar-stream';
import { isPlainObject } from '../core/api/canonical-json.js';
import { DEFAULT_HANDLER, MAX_CODE_BYTES, MAX_REQUIREMENTS_BYTES, codePathProblem, type FunctionCode } from '../core/api/function.js';
import type { KubeObject } from '../core/api/meta.js';
import { CliError } from './cli-error.js';
import { isText, statExisting } from './local-files.js';

/** Files larger than this are not read at all: no function's code is that big. */
const MAX_READ_BYTES = 16 * 1024 * 1024;
const ARCHIVE = /\.(zip|tar|tar\.gz|tgz)$/i;
/** Left out of a directory: Python's caches, version control and editors' files, virtual environments. */
const SKIPPED = /^(\.|__pycache__$|node_modules$|venv$)|\.py[co]$/;

export interface CodeSource {
  code: FunctionCode;
  /** requirements.txt found in a directory (used when --requirements is not given). */
  requirements?: string;
  /** The handler a single file implies: `-f hello.py` means `hello.handler` when no --handler is given. */
  impliedHandler?: string;
  /** What was read, for messages: `2 files`, `a zip archive`. */
  description: string;
}

async function walk(root: string, dir: string, out: { path: string; data: Buffer; mode: number }[]): Promise<void> {
  const entries = await readdir(dir, { withFileTypes: true });
  entries.sort((a, b) => a.name.localeCompare(b.name));
  for (const entry of entries) {
    if (SKIPPED.test(entry.name)) continue;
    const full = join(dir, entry.name);
    if (entry.isDirectory()) await walk(root, full, out);
    else if (entry.isFile()) {
      const info = await stat(full);
      if (info.size > MAX_READ_BYTES) throw new CliError(`${full} is larger than ${MAX_READ_BYTES / 1024 / 1024} MiB: too big for a function's code`);
      const path = relative(root, full).split('\\').join('/');
      const problem = codePathProblem(path);
      if (problem) throw new CliError(`cannot use ${full} as code: its path "${path}" ${problem}`);
      out.push({ path, data: await readFile(full), mode: info.mode & 0o111 ? 0o755 : 0o644 });
    }
  }
}

async function tarGz(files: readonly { path: string; data: Buffer; mode: number }[]): Promise<Buffer> {
  const archive = pack();
  const chunks: Buffer[] = [];
  archive.on('data', (c: unknown) => {
    chunks.push(c as Buffer);
  });
  const ended = new Promise<void>((res, rej) => {
    archive.on('end', () => res());
    archive.on('error', rej);
  });
  for (const f of files) archive.entry({ name: f.path, size: f.data.length, mode: f.mode, mtime: new Date(0) }, f.data);
  archive.finalize();
  await ended;
  return gzipSync(Buffer.concat(chunks));
}

function checkSize(code: FunctionCode, what: string): void {
  const size = JSON.stringify(code).length;
  if (size > MAX_CODE_BYTES)
    throw new CliError(
      `${what} is ${(size / 1024 / 1024).toFixed(2)} MiB as sent; a function's code may be at most 1 MiB (leave out data files, or let requirements install packages)`,
    );
}

/** Reads `-f PATH`: one file (the handler's module), a directory (text files, or a .tar.gz of it when some are binary), or an archive as is. */
export async function readCodeSource(path: string): Promise<CodeSource> {
  const info = await statExisting(path);
  if (info.isDirectory()) {
    const files: { path: string; data: Buffer; mode: number }[] = [];
    await walk(resolve(path), resolve(path), files);
    if (files.length === 0) throw new CliError(`the directory "${path}" holds no files`);
    const requirementsFile = files.find((f) => f.path === 'requirements.txt');
    const requirements = requirementsFile?.data.toString('utf8');
    let code: FunctionCode;
    if (files.every((f) => isText(f.data))) code = { files: Object.fromEntries(files.map((f) => [f.path, f.data.toString('utf8')])) };
    else code = { archive: (await tarGz(files)).toString('base64') };
    checkSize(code, `the code in ${path}`);
    return { code, ...(requirements !== undefined ? { requirements } : {}), description: `${files.length} file${files.length === 1 ? '' : 's'} from ${path}` };
  }
  if (info.size > MAX_READ_BYTES) throw new CliError(`${path} is larger than ${MAX_READ_BYTES / 1024 / 1024} MiB: too big for a function's code`);
  const data = await readFile(path);
  if (ARCHIVE.test(path)) {
    const code = { archive: data.toString('base64') };
    checkSize(code, path);
    return { code, description: `the archive ${path}` };
  }
  if (!isText(data)) throw new CliError(`${path} is not a text file: give the handler's .py file, a directory, or a .zip/.tar.gz`);
  const name = basename(path);
  const problem = codePathProblem(name);
  if (problem) throw new CliError(`cannot use ${path} as code: its name ${problem}`);
  const code = { files: { [name]: data.toString('utf8') } };
  checkSize(code, path);
  const stem = name.replace(/\.py$/, '');
  const implied = name.endsWith('.py') && /^[A-Za-z_][A-Za-z0-9_]*$/.test(stem) ? `${stem}.handler` : undefined;
  return { code, ...(implied && implied !== DEFAULT_HANDLER ? { impliedHandler: implied } : {}), description: path };
}

/** Reads `--requirements r.txt`. */
export async function readRequirements(path: string): Promise<string> {
  let text: string;
  try {
    const info = await stat(path);
    if (info.size > MAX_REQUIREMENTS_BYTES) throw new CliError(`${path} is larger than ${MAX_REQUIREMENTS_BYTES / 1024} KiB`);
    text = await readFile(path, 'utf8');
  } catch (err) {
    if (err instanceof CliError) throw err;
    throw new CliError(`cannot read the requirements file "${path}": ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  return text;
}

/**
 * A Function manifest's `spec.codePath` and `spec.requirementsPath`, relative to the manifest's
 * directory, become spec.code and spec.requirements (the API server knows no paths).
 * Other objects, and Functions without them, pass through unchanged.
 */
export async function resolveFunctionManifest(object: KubeObject, source: string): Promise<KubeObject> {
  if (object.kind !== 'Function' || !isPlainObject(object.spec)) return object;
  const spec = object.spec as Record<string, unknown>;
  if (spec.codePath === undefined && spec.requirementsPath === undefined) return object;
  const base = source === 'STDIN' ? process.cwd() : dirname(source);
  const at = (p: unknown, field: string): string => {
    if (typeof p !== 'string' || p === '') throw new CliError(`error validating "${source}": spec.${field} must be a path (relative to the manifest)`);
    return isAbsolute(p) ? p : join(base, p);
  };
  const { codePath, requirementsPath, ...rest } = spec;
  const out: Record<string, unknown> = { ...rest };
  if (codePath !== undefined) {
    if (rest.code !== undefined) throw new CliError(`error validating "${source}": give spec.code or spec.codePath, not both`);
    const read = await readCodeSource(at(codePath, 'codePath')).catch((err: unknown) => {
      throw new CliError(`${source}: spec.codePath: ${err instanceof Error ? err.message : String(err)}`);
    });
    out.code = read.code;
    if (read.impliedHandler && rest.handler === undefined) out.handler = read.impliedHandler;
    if (read.requirements !== undefined && requirementsPath === undefined && rest.requirements === undefined) out.requirements = read.requirements;
  }
  if (requirementsPath !== undefined) {
    if (rest.requirements !== undefined) throw new CliError(`error validating "${source}": give spec.requirements or spec.requirementsPath, not both`);
    out.requirements = await readRequirements(at(requirementsPath, 'requirementsPath')).catch((err: unknown) => {
      throw new CliError(`${source}: spec.requirementsPath: ${err instanceof Error ? err.message : String(err)}`);
    });
  }
  return { ...object, spec: out };
}
