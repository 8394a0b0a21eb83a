// The master's side of Docker trusting its TLS registry: which HOST:PORT names this machine's engine may use for it, and their certs.d entries.
import { advertisedServerUrl } from '../master/announce.js';
import { type RegistryTrust, trustRegistryCa } from '../../runtime/docker-registry-trust.js';
import { hostPort } from './managed-registry.js';

function isWildcard(address: string): boolean {
  return address === '' || address === '0.0.0.0' || address === '::' || address === '[::]';
}

/**
 * The names the engine may pull or push by: loopback when the registry listens there (function builds,
 * scripts/build-images.sh), the advertised address, and the host workers reach the master at.
 */
export async function registryNamesForEngine(options: {
  address: string;
  port: number;
  advertised: string;
  /** Stand-in for the machine's outward address (tests). */
  serverUrl?: (address: string, port: number) => Promise<string>;
}): Promise<string[]> {
  const names = new Set<string>();
  if (isWildcard(options.address) || options.address.startsWith('127.') || options.address === 'localhost') names.add(hostPort('127.0.0.1', options.port));
  names.add(options.advertised);
  const url = new URL(await (options.serverUrl ?? advertisedServerUrl)(options.address, options.port));
  names.add(hostPort(url.hostname, options.port));
  return [...names];
}

/**
 * Writes the cluster CA for each name under the engine's certs dir. A master that may not write
 * there (not root) says so and goes on: its engine then cannot pull from the registry by that name.
 */
export function trustRegistryForEngine(options: { registries: readonly string[]; caPem: string; certsDir?: string; log?: (message: string) => void }): {
  paths: string[];
  remove(): void;
} {
  const written: RegistryTrust[] = [];
  for (const registry of options.registries) {
    try {
      written.push(trustRegistryCa({ registry, caPem: options.caPem, certsDir: options.certsDir }));
    } catch (err) {
      options.log?.(
        `warning: cannot make the Docker engine trust the registry at ${registry} (${(err as Error).message}); copy the cluster CA there as ca.crt`,
      );
    }
  }
  return {
    paths: written.map((t) => t.path),
    remove: () => {
      for (const t of written) {
        try {
          t.remove();
        } catch {
          // Best effort at shutdown: a leftover file only trusts our own CA.
        }
      }
    },
  };
}
