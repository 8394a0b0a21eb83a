// Reads a GpuJob manifest's spec.program.path (a .cu/.c file or a directory, relative to the manifest) into spec.program.files, as `apply` uploads it.
import { readdir, readFile, realpath, stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { MAX_PROGRAM_BYTES, MAX_PROGRAM_FILES } from '../core/api/gpujob.js';
import type { KubeObject } from '../core/api/meta.js';
import { CliError } from './cli-error.js';
import { isText, statExisting } from './local-files.js';

/** Left out of a directory: hidden files (version control, editors' state). */
const HIDDEN = /^\./;

export interface ProgramFiles {
  files: Record<string, string>;
  binaryFiles: Record<string, string>;
}

/** Whether `path` is `dir` or lies under it (both absolute and resolved). */
function isWithin(path: string, dir: string): boolean {
  const rel = relative(dir, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

/**
 * Refuses a program file or directory that is, or leads through a symbolic link to, something
 * outside `within` (the manifest's directory): a job's files land in a spec every node reads, so
 * a manifest must not be able to pick up ~/.ssh or /etc by a path or a link.
 */
async function checkWithin(path: string, within: string, shown: string): Promise<void> {
  const real = await realpath(path);
  if (!isWithin(real, await realpath(within))) {
    throw new CliError(
      `the program file "${shown}" resolves to ${real}, outside the manifest's directory ${within}: a GpuJob uploads only files beside its manifest`,
    );
  }
}

/** Every file under `root` (hidden ones aside), by path relative to it, within the job's limits; with `within`, nothing outside that directory. */
export async function readProgram(root: string, within?: string): Promise<ProgramFiles> {
  const info = await statExisting(root, 'program path');
  if (within !== undefined) await checkWithin(root, within, root);
  const found: { path: string; data: Buffer }[] = [];
  let total = 0;
  const add = async (full: string, path: string) => {
    const size = (await stat(full)).size;
    total += size;
    if (total > MAX_PROGRAM_BYTES)
      throw new CliError(
        `the program in ${root} is more than ${MAX_PROGRAM_BYTES / 1024 / 1024} MiB: a GpuJob carries sources, not data sets (put those on the cluster's storage and read them from the script)`,
      );
    if (found.length >= MAX_PROGRAM_FILES) throw new CliError(`the program in ${root} has more than ${MAX_PROGRAM_FILES} files`);
    found.push({ path, data: await readFile(full) });
  };
  if (info.isFile()) {
    await add(root, basename(root));
  } else if (info.isDirectory()) {
    const walk = async (dir: string): Promise<void> => {
      const entries = await readdir(dir, { withFileTypes: true });
      entries.sort((a, b) => a.name.localeCompare(b.name));
      for (const entry of entries) {
        if (HIDDEN.test(entry.name)) continue;
        const full = join(dir, entry.name);
        if (within !== undefined && entry.isSymbolicLink()) await checkWithin(full, within, relative(root, full));
        const target = await stat(full).catch(() => undefined);
        if (target?.isDirectory()) await walk(full);
        else if (target?.isFile()) await add(full, relative(root, full).split('\\').join('/'));
      }
    };
    await walk(root);
    if (found.length === 0) throw new CliError(`the program directory "${root}" has no files`);
  } else {
    throw new CliError(`the program path "${root}" is neither a file nor a directory`);
  }
  const out: ProgramFiles = { files: {}, binaryFiles: {} };
  for (const f of found) {
    if (isText(f.data)) out.files[f.path] = f.data.toString('utf8');
    else out.binaryFiles[f.path] = f.data.toString('base64');
  }
  return out;
}

/**
 * A GpuJob manifest with spec.program.path read: the path is taken relative to the manifest's
 * directory (the working directory for stdin), and replaced by `files` (and `binaryFiles`).
 * Other objects, and jobs that already carry their files, are returned as they are.
 */
export async function resolveGpuJobManifest(object: KubeObject, source: string): Promise<KubeObject> {
  const spec = object.spec as { program?: { path?: unknown; files?: unknown; binaryFiles?: unknown } } | undefined;
  const program = spec?.program;
  if (!program || program.path === undefined) return object;
  if (typeof program.path !== 'string' || program.path === '')
    throw new CliError(`error validating "${source}": spec.program.path must be a file or directory name`);
  if (program.files !== undefined || program.binaryFiles !== undefined) {
    throw new CliError(`error validating "${source}": spec.program has both path and files: give one`);
  }
  const base = source === 'STDIN' ? process.cwd() : dirname(resolve(source));
  const target = resolve(base, program.path);
  if (!isWithin(target, base)) {
    throw new CliError(
      `error validating "${source}": spec.program.path "${program.path}" is outside the manifest's directory ${base}: a GpuJob uploads only files beside its manifest`,
    );
  }
  const read = await readProgram(target, base);
  const { path: _path, ...rest } = program;
  const next = { ...rest, files: read.files, ...(Object.keys(read.binaryFiles).length ? { binaryFiles: read.binaryFiles } : {}) };
  return { ...object, spec: { ...spec, program: next } };
}
