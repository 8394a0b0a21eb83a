// Daemon flags -> a validated config: which roles to run and the master's settings. Pure, so it is unit tested.
import { isIP } from 'node:net';
import { resolve } from 'node:path';

export type Role = 'master' | 'worker';

export interface MasterConfig {
  /** Absolute path of the state directory. */
  dataDir: string;
  /** Address the API server listens on. */
  address: string;
  port: number;
  /** External etcd client URLs; when absent the master runs its own etcd. */
  etcdEndpoints?: string[];
  /** Client port of the managed etcd (its peer port is the next one). */
  etcdPort: number;
  /** Write ~/.minik8s/config for the local CLI. */
  writeClientConfig: boolean;
}

export interface DaemonConfig {
  roles: Role[];
  master: MasterConfig;
}

/** A bad flag or value: the daemon prints the message and exits with code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export interface RawDaemonFlags {
  /** Positional words before the flags (`minik8s master`). */
  positionals: string[];
  role?: string;
  dataDir: string;
  address: string;
  port: string;
  etcdEndpoints?: string;
  etcdPort: string;
  writeConfig: boolean;
}

function parsePort(flag: string, value: string, max = 65535): number {
  if (!/^\d+$/.test(value.trim()) || Number(value) < 1 || Number(value) > max) {
    throw new UsageError(`--${flag} must be a port number from 1 to ${max}, not "${value}"`);
  }
  return Number(value);
}

function parseRoles(text: string): Role[] {
  const roles = new Set<Role>();
  for (const part of text.split(',').map((s) => s.trim())) {
    if (part !== 'master' && part !== 'worker') {
      throw new UsageError(`unknown role "${part}": use --role=master, --role=worker or --role=master,worker`);
    }
    roles.add(part);
  }
  return [...roles].sort() as Role[];
}

function parseEndpoints(text: string): string[] {
  const endpoints = text.split(',').map((s) => s.trim()).filter(Boolean);
  if (endpoints.length === 0) throw new UsageError('--etcd-endpoints needs at least one URL, e.g. http://127.0.0.1:2379');
  for (const e of endpoints) {
    let url: URL;
    try {
      url = new URL(e);
    } catch {
      throw new UsageError(`--etcd-endpoints: "${e}" is not a URL (expected e.g. http://127.0.0.1:2379)`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new UsageError(`--etcd-endpoints: "${e}" must start with http:// or https://`);
    }
  }
  return endpoints;
}

/** Validates the parsed flags; throws UsageError with a message for humans. */
export function toDaemonConfig(flags: RawDaemonFlags): DaemonConfig {
  const words = flags.positionals;
  if (words.length > 1) throw new UsageError(`unexpected argument "${words[1]}"`);
  const fromWord = words[0] === undefined ? undefined : parseRoles(words[0]);
  const fromFlag = flags.role === undefined ? undefined : parseRoles(flags.role);
  if (fromWord && fromFlag && fromWord.join() !== fromFlag.join()) {
    throw new UsageError(`"${words[0]}" and --role=${flags.role} disagree: give the role once`);
  }
  const roles = fromFlag ?? fromWord;
  if (!roles) throw new UsageError('no role given: use --role=master (or "minik8s master")');
  if (!flags.dataDir.trim()) throw new UsageError('--data-dir must not be empty');
  if (isIP(flags.address) === 0) throw new UsageError(`--address must be an IP address such as 0.0.0.0 or 127.0.0.1, not "${flags.address}"`);
  return {
    roles,
    master: {
      dataDir: resolve(flags.dataDir),
      address: flags.address,
      port: parsePort('port', flags.port),
      etcdEndpoints: flags.etcdEndpoints === undefined ? undefined : parseEndpoints(flags.etcdEndpoints),
      // The peer port is the next one, so the client port must leave room for it.
      etcdPort: parsePort('etcd-port', flags.etcdPort, 65534),
      writeClientConfig: flags.writeConfig,
    },
  };
}
