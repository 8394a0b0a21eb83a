// The admin token: 32 random bytes (hex) made on the master's first start in DATA_DIR/admin-token (0600), reused later.
import { randomBytes } from 'node:crypto';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { StartupError } from '../../core/lifecycle/startup-error.js';

export function adminTokenPath(dataDir: string): string {
  return join(dataDir, 'admin-token');
}

/** Reads the admin token, creating it on first start; keeps the file's mode at 0600. */
export function loadOrCreateAdminToken(dataDir: string): { token: string; path: string; created: boolean } {
  const path = adminTokenPath(dataDir);
  try {
    const token = readFileSync(path, 'utf8').trim();
    if (!/^[0-9a-f]{32,}$/i.test(token)) {
      throw new StartupError(`the admin token in ${path} is malformed; remove the file to have a new one made`);
    }
    chmodSync(path, 0o600);
    return { token, path, created: false };
  } catch (err) {
    if (err instanceof StartupError) throw err;
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new StartupError(`cannot read the admin token ${path}: ${(err as Error).message}`, { cause: err });
    }
  }
  const token = randomBytes(32).toString('hex');
  try {
    // 'wx': never overwrite a token another process wrote in the meantime.
    writeFileSync(path, `${token}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return loadOrCreateAdminToken(dataDir);
    throw new StartupError(`cannot write the admin token ${path}: ${(err as Error).message}`, { cause: err });
  }
  return { token, path, created: true };
}
