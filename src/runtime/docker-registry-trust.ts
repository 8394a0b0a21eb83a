// Makes a Docker engine trust a registry's CA the way Docker documents it: CERTS_DIR/HOST:PORT/ca.crt (default /etc/docker/certs.d).
import { existsSync, mkdirSync, readFileSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Where Docker engines on Linux read per-registry certificates from. */
export const DOCKER_CERTS_DIR = '/etc/docker/certs.d';

export interface RegistryTrust {
  /** The ca.crt file written. */
  path: string;
  /** True when this call made the file (it was absent or held another CA). */
  created: boolean;
  /** Takes the file (and its HOST:PORT directory, when empty) away again if this call made it; safe to call twice. */
  remove(): void;
}

/** The directory Docker reads for `HOST:PORT` (an IPv6 host in brackets, as in image names). */
export function registryCertsDir(registry: string, certsDir: string = DOCKER_CERTS_DIR): string {
  if (!/^[^/\\\s]+:\d+$/.test(registry) || registry.startsWith('.')) throw new Error(`"${registry}" is not a registry HOST:PORT`);
  return join(certsDir, registry);
}

/**
 * Writes `caPem` as CERTS_DIR/REGISTRY/ca.crt (0644; the directory 0755, as Docker needs to read it).
 * A file already holding the same CA is left alone and is not this call's to remove.
 */
export function trustRegistryCa(options: { registry: string; caPem: string; certsDir?: string }): RegistryTrust {
  const dir = registryCertsDir(options.registry, options.certsDir);
  const path = join(dir, 'ca.crt');
  let current: string | undefined;
  try {
    current = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  if (current === options.caPem) return { path, created: false, remove: () => {} };
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  writeFileSync(path, options.caPem, { mode: 0o644 });
  let removed = false;
  return {
    path,
    created: true,
    remove: () => {
      if (removed) return;
      removed = true;
      // Only our own CA: another cluster may have written its own there since.
      if (existsSync(path) && readFileSync(path, 'utf8') === options.caPem) rmSync(path, { force: true });
      try {
        rmdirSync(dir);
      } catch {
        // Not empty (a client certificate someone put there) or gone: leave it.
      }
    },
  };
}
