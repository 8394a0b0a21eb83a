// Points the local CLI at this master: ~/.minik8s/config with the API URL and the admin token.
import { writeClientConfig } from '../../core/client-config.js';

/** The URL a CLI on this machine uses: wildcard addresses become loopback; IPv6 gets brackets. */
export function localServerUrl(address: string, port: number): string {
  if (address === '0.0.0.0') return `http://127.0.0.1:${port}`;
  if (address === '::') return `http://[::1]:${port}`;
  return address.includes(':') ? `http://[${address}]:${port}` : `http://${address}:${port}`;
}

/** Writes the config; returns where, or a warning when it could not (the master runs on regardless). */
export function writeLocalClientConfig(options: { address: string; port: number; token: string; path?: string }): { server: string; warning?: string } {
  const server = localServerUrl(options.address, options.port);
  try {
    writeClientConfig({ server, token: options.token }, options.path);
    return { server };
  } catch (err) {
    return { server, warning: `could not write the CLI config (${(err as Error).message}); use MINIK8S_SERVER and MINIK8S_TOKEN instead` };
  }
}
