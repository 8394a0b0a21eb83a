// GPU jobs' result.out and error.err on the master's disk (DATA_DIR/gpujob-outputs/UID/), whole, for `minik8s gpujob output`; status carries only their ends.
import { createReadStream } from 'node:fs';
import { mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { BadRequestError, RequestEntityTooLargeError } from '../../core/errors.js';

export const OUTPUT_FILES = ['result.out', 'error.err'] as const;
export type OutputFile = (typeof OUTPUT_FILES)[number];
/** A job's output may be large (a program printing its matrices); beyond this it is cut, not refused. */
export const MAX_OUTPUT_BYTES = 64 * 1024 * 1024;

const UID = /^[A-Za-z0-9-]{1,64}$/;

export function isOutputFile(name: string): name is OutputFile {
  return (OUTPUT_FILES as readonly string[]).includes(name);
}

/**
 * Files kept per job uid, not per name: a job deleted and applied again under the same name never
 * sees the old one's files. Writes go to a temporary file renamed into place, so a reader sees a
 * whole upload or the previous one.
 */
export class GpuJobOutputs {
  readonly dir: string;
  readonly maxBytes: number;

  constructor(options: { dir: string; maxBytes?: number }) {
    this.dir = options.dir;
    this.maxBytes = options.maxBytes ?? MAX_OUTPUT_BYTES;
  }

  #path(uid: string, file?: OutputFile): string {
    if (!UID.test(uid)) throw new BadRequestError(`not a job uid: ${JSON.stringify(uid)}`);
    return file ? join(this.dir, uid, file) : join(this.dir, uid);
  }

  /** Stores one file from a stream of chunks; past maxBytes it answers 413 and keeps nothing. */
  async write(uid: string, file: OutputFile, chunks: AsyncIterable<Uint8Array>): Promise<number> {
    const target = this.#path(uid, file);
    await mkdir(this.#path(uid), { recursive: true, mode: 0o700 });
    const temp = `${target}.${process.pid}.${Date.now()}.tmp`;
    const handle = await open(temp, 'w', 0o600);
    let total = 0;
    try {
      for await (const chunk of chunks) {
        total += chunk.byteLength;
        if (total > this.maxBytes)
          throw new RequestEntityTooLargeError(
            `${file} is larger than the limit of ${this.maxBytes} bytes: keep the job's output smaller, or write big results to the cluster's storage`,
          );
        await handle.write(chunk);
      }
      await handle.close();
      await rename(temp, target);
      return total;
    } catch (err) {
      await handle.close().catch(() => {});
      await rm(temp, { force: true });
      throw err;
    }
  }

  /** The file's size and a stream of it, or undefined when it was never uploaded. */
  async read(uid: string, file: OutputFile): Promise<{ size: number; stream: NodeJS.ReadableStream } | undefined> {
    const path = this.#path(uid, file);
    try {
      const info = await stat(path);
      return { size: info.size, stream: createReadStream(path) };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  async remove(uid: string): Promise<void> {
    await rm(this.#path(uid), { recursive: true, force: true });
  }

  /** The uids that have files here (for sweeping those of jobs deleted while the master was down). */
  async uids(): Promise<string[]> {
    try {
      return (await readdir(this.dir, { withFileTypes: true })).filter((e) => e.isDirectory() && UID.test(e.name)).map((e) => e.name);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
  }
}
