// A Function's code as files: its text files, or its base64 .tar.gz / .tar / .zip unpacked (zip read here: no zip library is among our dependencies); one check for admission and the image build.
import { Readable } from 'node:stream';
import { gunzipSync, inflateRawSync } from 'node:zlib';
import { extract as tarExtract } from 'tar-stream';
import type { FunctionCode } from './function.js';

/** One path component of a code file: no `.`/`..`, no separators or control characters. */
const PATH_PART = /^(?!\.{1,2}$)[A-Za-z0-9._+@=, -]+$/;

/** The problem with a code file's relative path, or undefined when it is fine. */
export function codePathProblem(path: string): string | undefined {
  if (path.length === 0) return 'must not be empty';
  if (path.length > 255) return 'must be no more than 255 characters';
  if (path.startsWith('/')) return 'must be a relative path';
  const parts = path.split('/');
  if (parts.some((p) => !PATH_PART.test(p))) return "must be a relative path of letters, digits and '._+@=, -', without '.' or '..' parts";
  return undefined;
}

/** The files that may hold a handler's module: `pkg/mod.py` or `pkg/mod/__init__.py` for `pkg.mod.fn`. */
export function handlerModuleFiles(handler: string): string[] {
  const parts = handler.split('.');
  const modulePath = parts.slice(0, -1).join('/');
  return [`${modulePath}.py`, `${modulePath}/__init__.py`];
}

export interface CodeFile {
  /** Relative POSIX path under the function directory. */
  path: string;
  data: Buffer;
  /** Unix permission bits (0o644 unless the archive says executable). */
  mode: number;
}

/** Unpacked code bigger than this is refused: a small archive may inflate to anything (a zip bomb). */
export const MAX_UNPACKED_BYTES = 64 * 1024 * 1024;
export const MAX_ARCHIVE_ENTRIES = 10_000;

/** A problem with the user's code: the build fails with this message. */
export class CodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CodeError';
  }
}

function modeOf(bits: number | undefined): number {
  return bits !== undefined && (bits & 0o111) !== 0 ? 0o755 : 0o644;
}

/** Normalizes an archive member's name (`./a/b.py` -> `a/b.py`); directories and empty names give undefined. */
function memberPath(name: string): string | undefined {
  const path = name.replace(/\\/g, '/').replace(/^(\.\/)+/, '');
  if (path === '' || path.endsWith('/')) return undefined;
  const problem = codePathProblem(path);
  if (problem) throw new CodeError(`the archive holds "${name}", which is not a usable file path (${problem})`);
  return path;
}

class Budget {
  #bytes = 0;
  #entries = 0;
  add(size: number): void {
    this.#bytes += size;
    this.#entries += 1;
    if (this.#bytes > MAX_UNPACKED_BYTES) throw new CodeError(`the archive unpacks to more than ${MAX_UNPACKED_BYTES / 1024 / 1024} MiB`);
    if (this.#entries > MAX_ARCHIVE_ENTRIES) throw new CodeError(`the archive holds more than ${MAX_ARCHIVE_ENTRIES} files`);
  }
}

/** Reads a zip's central directory and inflates each stored or deflated member. No zip64, no encryption. */
export function readZip(buf: Buffer): CodeFile[] {
  const EOCD = 0x06054b50;
  let eocd = -1;
  for (let i = buf.length - 22; i >= Math.max(0, buf.length - 22 - 65_535); i--) {
    if (buf.readUInt32LE(i) === EOCD) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new CodeError('the zip archive is damaged: no end of central directory');
  const count = buf.readUInt16LE(eocd + 10);
  let offset = buf.readUInt32LE(eocd + 16);
  if (count === 0xffff || offset === 0xffffffff) throw new CodeError('zip64 archives are not supported: pack the code as .tar.gz');
  const budget = new Budget();
  const files: CodeFile[] = [];
  for (let n = 0; n < count; n++) {
    if (offset + 46 > buf.length || buf.readUInt32LE(offset) !== 0x02014b50) throw new CodeError('the zip archive is damaged: bad central directory entry');
    const flags = buf.readUInt16LE(offset + 8);
    const method = buf.readUInt16LE(offset + 10);
    const compressed = buf.readUInt32LE(offset + 20);
    const size = buf.readUInt32LE(offset + 24);
    const nameLength = buf.readUInt16LE(offset + 28);
    const extraLength = buf.readUInt16LE(offset + 30);
    const commentLength = buf.readUInt16LE(offset + 32);
    const madeBy = buf.readUInt16LE(offset + 4) >> 8;
    const external = buf.readUInt32LE(offset + 38);
    const local = buf.readUInt32LE(offset + 42);
    const name = buf.toString('utf8', offset + 46, offset + 46 + nameLength);
    offset += 46 + nameLength + extraLength + commentLength;
    const path = memberPath(name);
    if (path === undefined) continue;
    // Unix-made archives keep the file type in the high bits: only regular files are code.
    const unixMode = madeBy === 3 ? external >>> 16 : undefined;
    if (unixMode !== undefined && (unixMode & 0o170000) !== 0 && (unixMode & 0o170000) !== 0o100000) {
      throw new CodeError(`the archive holds "${name}", which is not a regular file (links are not supported)`);
    }
    if (flags & 1) throw new CodeError(`the archive member "${name}" is encrypted`);
    budget.add(size);
    if (local + 30 > buf.length || buf.readUInt32LE(local) !== 0x04034b50) throw new CodeError(`the zip archive is damaged at "${name}"`);
    const start = local + 30 + buf.readUInt16LE(local + 26) + buf.readUInt16LE(local + 28);
    const raw = buf.subarray(start, start + compressed);
    let data: Buffer;
    if (method === 0) data = Buffer.from(raw);
    else if (method === 8) {
      try {
        data = inflateRawSync(raw, { maxOutputLength: MAX_UNPACKED_BYTES });
      } catch (err) {
        throw new CodeError(`the archive member "${name}" cannot be inflated: ${(err as Error).message}`);
      }
    } else throw new CodeError(`the archive member "${name}" uses compression method ${method}; only stored and deflated members are supported`);
    if (data.length !== size) throw new CodeError(`the archive member "${name}" is damaged (size ${data.length}, expected ${size})`);
    files.push({ path, data, mode: modeOf(unixMode) });
  }
  return files;
}

/** Reads a (gunzipped) tar: regular files only; links and devices are refused. */
export async function readTar(buf: Buffer): Promise<CodeFile[]> {
  const budget = new Budget();
  const files: CodeFile[] = [];
  const extract = tarExtract();
  const done = (async () => {
    for await (const entry of extract) {
      const { header } = entry;
      const chunks: Buffer[] = [];
      for await (const chunk of entry) chunks.push(chunk as Buffer);
      if (header.type === 'directory') continue;
      if (header.type !== 'file' && header.type !== 'contiguous-file') {
        throw new CodeError(`the archive holds "${header.name}", a ${header.type}: only regular files are supported`);
      }
      const path = memberPath(header.name);
      if (path === undefined) continue;
      budget.add(header.size ?? 0);
      files.push({ path, data: Buffer.concat(chunks), mode: modeOf(header.mode) });
    }
  })();
  Readable.from([buf]).pipe(extract);
  try {
    await done;
  } catch (err) {
    if (err instanceof CodeError) throw err;
    throw new CodeError(`the tar archive cannot be read: ${(err as Error).message}`);
  }
  return files;
}

/** Unpacks a base64 archive, telling zip, gzip and plain tar apart by their first bytes. */
export async function unpackArchive(base64: string): Promise<CodeFile[]> {
  const buf = Buffer.from(base64, 'base64');
  if (buf.length >= 4 && buf[0] === 0x50 && buf[1] === 0x4b) return readZip(buf);
  if (buf.length >= 2 && buf[0] === 0x1f && buf[1] === 0x8b) {
    let tar: Buffer;
    try {
      tar = gunzipSync(buf, { maxOutputLength: MAX_UNPACKED_BYTES + 1024 * 1024 });
    } catch (err) {
      throw new CodeError(`the .tar.gz archive cannot be unpacked: ${(err as Error).message}`);
    }
    return readTar(tar);
  }
  if (buf.length >= 262 && buf.toString('latin1', 257, 262) === 'ustar') return readTar(buf);
  throw new CodeError('spec.code.archive is neither a .zip nor a .tar.gz (nor a .tar)');
}

/**
 * When the handler's module is not at the top but every file sits in one directory (an archive
 * of the folder `myfn/`), that directory is the function's root: it is stripped.
 */
export function stripCommonRoot(files: readonly CodeFile[], handler: string): CodeFile[] {
  const modules = handlerModuleFiles(handler);
  if (files.some((f) => modules.includes(f.path))) return [...files];
  const tops = new Set(files.map((f) => (f.path.includes('/') ? f.path.slice(0, f.path.indexOf('/')) : '')));
  if (tops.size !== 1 || tops.has('')) return [...files];
  const top = [...tops][0]!;
  return files.map((f) => ({ ...f, path: f.path.slice(top.length + 1) }));
}

/** The function's files, sorted by path; fails with a CodeError when the handler's module is missing. */
export async function codeFiles(code: FunctionCode, handler: string): Promise<CodeFile[]> {
  let files: CodeFile[];
  if (code.files) {
    files = Object.entries(code.files).map(([path, text]) => ({ path, data: Buffer.from(text, 'utf8'), mode: 0o644 }));
  } else if (code.archive) {
    files = stripCommonRoot(await unpackArchive(code.archive), handler);
  } else {
    throw new CodeError('the function has no code');
  }
  const seen = new Set<string>();
  for (const f of files) {
    if (seen.has(f.path)) throw new CodeError(`the code holds "${f.path}" twice`);
    seen.add(f.path);
  }
  const modules = handlerModuleFiles(handler);
  if (!files.some((f) => modules.includes(f.path))) {
    const listed = files
      .slice(0, 10)
      .map((f) => f.path)
      .join(', ');
    throw new CodeError(
      `the handler "${handler}" needs ${modules.join(' or ')} in the code, which holds ${files.length ? `${listed}${files.length > 10 ? ', ...' : ''}` : 'no files'}`,
    );
  }
  return files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
