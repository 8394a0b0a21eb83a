// Points the local CLI at this master: ~/.minik8s/config with the API URL, the admin token and the CA's file, unless it names another cluster.
import { readFileSync } from 'node:fs';
import { defaultConfigPath, parseClientConfig, writeClientConfig } from '../../core/client-config.js';

/** The URL a CLI on this machine uses: wildcard addresses become loopback; IPv6 gets brackets. */
export function localServerUrl(address: string, port: number, scheme: 'http' | 'https' = 'http'): string {
  if (address === '0.0.0.0') return `${scheme}://127.0.0.1:${port}`;
  if (address === '::') return `${scheme}://[::1]:${port}`;
  return address.includes(':') ? `${scheme}://[${address}]:${port}` : `${scheme}://${address}:${port}`;
}

/**
 * Writes the config; returns where, or a warning when it did not (the master runs on regardless).
 * A file that holds another token belongs to another cluster (or a user's own choice): it is
 * left as it is, since overwriting it would point the user's next command at this master.
 */
export function writeLocalClientConfig(options: {
  address: string;
  port: number;
  token: string;
  path?: string;
  scheme?: 'http' | 'https';
  caPath?: string;
  kubeconfigPath?: string;
}): { server: string; warning?: string } {
  const server = localServerUrl(options.address, options.port, options.scheme);
  const path = options.path ?? defaultConfigPath();
  let existing: string | undefined;
  try {
    existing = readFileSync(path, 'utf8');
  } catch {
    // None yet (or unreadable: writing will say).
  }
  const hint = options.kubeconfigPath ? `KUBECONFIG=${options.kubeconfigPath}` : 'MINIK8S_SERVER and MINIK8S_TOKEN';
  if (existing !== undefined) {
    const old = parseClientConfig(existing.replace(/^\s*certificate-authority\s*:.*$/m, ''));
    if (old.token !== undefined && old.token !== options.token) {
      return { server, warning: `${path} points at another cluster (${old.server ?? 'no server'}); left as it is: use ${hint} for this one` };
    }
  }
  try {
    writeClientConfig({ server, token: options.token, caPath: options.caPath }, path);
    return { server };
  } catch (err) {
    return { server, warning: `could not write the CLI config (${(err as Error).message}); use ${hint} instead` };
  }
}
