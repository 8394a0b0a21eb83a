// Where the CLI finds the API server and its token: flags, then environment, then ~/.minik8s/config.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

export interface ClientConfig {
  server: string;
  token: string;
}

export function defaultConfigPath(home = homedir()): string {
  return join(home, '.minik8s', 'config');
}

/** Parses the config file: `server: URL` and `token: T` lines (a YAML subset, so users can edit it). */
export function parseClientConfig(text: string): Partial<ClientConfig> {
  const out: Partial<ClientConfig> = {};
  for (const line of text.split('\n')) {
    const m = /^\s*(server|token)\s*:\s*"?([^"\s]*)"?\s*$/.exec(line);
    if (m) out[m[1] as keyof ClientConfig] = m[2];
  }
  return out;
}

export interface LoadClientConfigOptions {
  server?: string;
  token?: string;
  env?: NodeJS.ProcessEnv;
  path?: string;
}

/**
 * Resolves server and token by precedence: explicit options, MINIK8S_SERVER/MINIK8S_TOKEN, the
 * config file: $MINIK8S_CONFIG (as KUBECONFIG names one), else ~/.minik8s/config.
 */
export function loadClientConfig(options: LoadClientConfigOptions = {}): Partial<ClientConfig> {
  const env = options.env ?? process.env;
  const named = options.path === undefined ? env.MINIK8S_CONFIG || undefined : undefined;
  let file: Partial<ClientConfig> = {};
  try {
    file = parseClientConfig(readFileSync(options.path ?? named ?? defaultConfigPath(), 'utf8'));
  } catch (err) {
    // A file the user named must be there: falling back to the default server would talk to another cluster.
    if (named !== undefined)
      throw new Error(`cannot read the config file $MINIK8S_CONFIG names (${named}): ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    // No config file yet: flags or environment must supply the values.
  }
  return {
    server: options.server ?? env.MINIK8S_SERVER ?? file.server,
    token: options.token ?? env.MINIK8S_TOKEN ?? file.token,
  };
}

/** Writes the config file with mode 0600 (it holds a credential), atomically. */
export function writeClientConfig(config: ClientConfig, path = defaultConfigPath()): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `server: ${config.server}\ntoken: ${config.token}\n`, { mode: 0o600 });
  renameSync(tmp, path);
}
