// Where the CLI finds the API server and its credentials: flags, environment, kubeconfig files, then ~/.minik8s/config.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { createRequire } from 'node:module';
import { delimiter, dirname, isAbsolute, join } from 'node:path';

// Loaded only when a kubeconfig is read: the YAML parser would slow every CLI start otherwise.
const parseYaml = (text: string): unknown => (createRequire(import.meta.url)('yaml') as typeof import('yaml')).parse(text);

export interface ClientConfig {
  server: string;
  token: string;
  /** PEM of the CA that signs the server's certificate (trusted instead of the system's). */
  ca?: string;
  /** PEM client certificate and key (x509 authentication). */
  cert?: string;
  key?: string;
}

export function defaultConfigPath(home = homedir()): string {
  return join(home, '.minik8s', 'config');
}

/**
 * Parses the config file: `server: URL` and `token: T` lines (a YAML subset, so users can edit it),
 * and `certificate-authority: PATH` for an https server (read here, relative to the file's folder).
 */
export function parseClientConfig(text: string, baseDir = '.'): Partial<ClientConfig> {
  const out: Partial<ClientConfig> = {};
  for (const line of text.split('\n')) {
    const m = /^\s*(server|token|certificate-authority)\s*:\s*"?([^"\s]*)"?\s*$/.exec(line);
    if (!m) continue;
    if (m[1] === 'certificate-authority') out.ca = readFileSync(resolveFrom(baseDir, m[2]!), 'utf8');
    else out[m[1] as 'server' | 'token'] = m[2];
  }
  return out;
}

function resolveFrom(baseDir: string, path: string): string {
  return isAbsolute(path) ? path : join(baseDir, path);
}

type Named<T> = { name?: string } & T;
interface KubeconfigFile {
  'current-context'?: string;
  clusters?: Named<{ cluster?: Record<string, unknown> }>[];
  users?: Named<{ user?: Record<string, unknown> }>[];
  contexts?: Named<{ context?: { cluster?: string; user?: string } }>[];
}

/**
 * Reads kubeconfig files as kubectl merges them (the KUBECONFIG list): the first file to set
 * `current-context` wins, and the first definition of each named cluster, user and context wins.
 * Returns the current context's server, CA, client certificate and token (`*-data` inline or
 * file paths relative to the file that names them).
 */
export function loadKubeconfig(paths: readonly string[]): Partial<ClientConfig> {
  let current: string | undefined;
  const clusters = new Map<string, { entry: Record<string, unknown>; dir: string }>();
  const users = new Map<string, { entry: Record<string, unknown>; dir: string }>();
  const contexts = new Map<string, { cluster?: string; user?: string }>();
  let found = false;
  for (const path of paths) {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      // kubectl skips missing files of the list; any other failure is the user's to see.
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw err;
    }
    found = true;
    const doc = (parseYaml(text) ?? {}) as KubeconfigFile;
    const dir = dirname(path);
    current ??= doc['current-context'] || undefined;
    for (const c of doc.clusters ?? []) if (c.name && !clusters.has(c.name)) clusters.set(c.name, { entry: c.cluster ?? {}, dir });
    for (const u of doc.users ?? []) if (u.name && !users.has(u.name)) users.set(u.name, { entry: u.user ?? {}, dir });
    for (const x of doc.contexts ?? []) if (x.name && !contexts.has(x.name)) contexts.set(x.name, x.context ?? {});
  }
  if (!found) throw new Error(`none of the kubeconfig files exists: ${paths.join(', ')}`);
  if (!current) return {};
  const context = contexts.get(current);
  if (!context) throw new Error(`kubeconfig: context "${current}" not found`);
  const out: Partial<ClientConfig> = {};
  const pem = (entry: Record<string, unknown>, dir: string, key: string): string | undefined => {
    const data = entry[`${key}-data`];
    if (typeof data === 'string' && data) return Buffer.from(data, 'base64').toString('utf8');
    const file = entry[key];
    if (typeof file === 'string' && file) return readFileSync(resolveFrom(dir, file), 'utf8');
    return undefined;
  };
  const cluster = context.cluster ? clusters.get(context.cluster) : undefined;
  if (context.cluster && !cluster) throw new Error(`kubeconfig: cluster "${context.cluster}" not found`);
  if (cluster) {
    if (typeof cluster.entry.server === 'string') out.server = cluster.entry.server;
    out.ca = pem(cluster.entry, cluster.dir, 'certificate-authority');
  }
  const user = context.user ? users.get(context.user) : undefined;
  if (user) {
    if (typeof user.entry.token === 'string' && user.entry.token) out.token = user.entry.token;
    else if (typeof user.entry.tokenFile === 'string') out.token = readFileSync(resolveFrom(user.dir, user.entry.tokenFile), 'utf8').trim();
    out.cert = pem(user.entry, user.dir, 'client-certificate');
    out.key = pem(user.entry, user.dir, 'client-key');
  }
  return out;
}

export interface LoadClientConfigOptions {
  server?: string;
  token?: string;
  /** --kubeconfig: one kubeconfig file (takes the place of $KUBECONFIG). */
  kubeconfig?: string;
  env?: NodeJS.ProcessEnv;
  path?: string;
}

/**
 * Resolves server and credentials by precedence: explicit options, MINIK8S_SERVER/MINIK8S_TOKEN,
 * then one config source: --kubeconfig, else $KUBECONFIG (colon-separated, as kubectl merges it),
 * else the minik8s config file: $MINIK8S_CONFIG, else ~/.minik8s/config.
 */
export function loadClientConfig(options: LoadClientConfigOptions = {}): Partial<ClientConfig> {
  const env = options.env ?? process.env;
  const kubeconfigs =
    options.kubeconfig !== undefined
      ? [options.kubeconfig]
      : options.path === undefined && env.KUBECONFIG
        ? env.KUBECONFIG.split(delimiter).filter((p) => p.length > 0)
        : [];
  if (kubeconfigs.length > 0) {
    const file = loadKubeconfig(kubeconfigs);
    const server = options.server ?? env.MINIK8S_SERVER;
    const token = options.token ?? env.MINIK8S_TOKEN;
    return {
      ...file,
      server: server ?? file.server,
      token: token ?? file.token,
      // A certificate would authenticate as the file's user even with another token given.
      ...(token !== undefined ? { cert: undefined, key: undefined } : {}),
    };
  }
  const named = options.path === undefined ? env.MINIK8S_CONFIG || undefined : undefined;
  let file: Partial<ClientConfig> = {};
  try {
    const path = options.path ?? named ?? defaultConfigPath();
    file = parseClientConfig(readFileSync(path, 'utf8'), dirname(path));
  } catch (err) {
    // A file the user named must be there: falling back to the default server would talk to another cluster.
    if (named !== undefined)
      throw new Error(`cannot read the config file $MINIK8S_CONFIG names (${named}): ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    // No config file yet: flags or environment must supply the values.
  }
  const server = options.server ?? env.MINIK8S_SERVER ?? file.server;
  return {
    server,
    token: options.token ?? env.MINIK8S_TOKEN ?? file.token,
    // The file's CA only for the file's server: another server is not the one it vouches for.
    ...(file.ca !== undefined && server === file.server ? { ca: file.ca } : {}),
  };
}

/**
 * Writes the config file with mode 0600 (it holds a credential), atomically. `caPath` names the
 * cluster CA's file for an https server.
 */
export function writeClientConfig(config: ClientConfig & { caPath?: string }, path = defaultConfigPath()): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.tmp`;
  const ca = config.caPath ? `certificate-authority: ${config.caPath}\n` : '';
  writeFileSync(tmp, `server: ${config.server}\ntoken: ${config.token}\n${ca}`, { mode: 0o600 });
  renameSync(tmp, path);
}
