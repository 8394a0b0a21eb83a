// Prepares the master's data directory: created with mode 0700 when missing, and proven writable before anything starts.
import { mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { StartupError } from '../../core/lifecycle/startup-error.js';

const REASONS: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ENOTDIR: 'a part of the path is a file, not a directory',
  EROFS: 'the file system is read-only',
  ENOSPC: 'no space left on the device',
  EEXIST: 'it exists and is not a directory',
};

function reason(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  return code ? `${REASONS[code] ?? (err as Error).message} (${code})` : String(err);
}

/** Creates `dataDir` (0700) if needed and checks a file can be written in it; returns its absolute path. */
export function prepareDataDir(dataDir: string): string {
  const dir = resolve(dataDir);
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (!statSync(dir).isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
  } catch (err) {
    throw new StartupError(`cannot create data directory ${dir}: ${reason(err)}; pass --data-dir to use another`, { cause: err });
  }
  const probe = join(dir, `.write-probe-${process.pid}`);
  try {
    writeFileSync(probe, 'probe\n', { mode: 0o600 });
  } catch (err) {
    throw new StartupError(`cannot write to data directory ${dir}: ${reason(err)}; pass --data-dir to use another`, { cause: err });
  } finally {
    rmSync(probe, { force: true });
  }
  return dir;
}
