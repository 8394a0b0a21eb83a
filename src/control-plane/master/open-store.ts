// Opens the master's store: etcd through EtcdStore, checked reachable within a deadline, with the watch cache in front.
import { readFileSync } from 'node:fs';
import { CachedStore } from '../../core/store/cached-store.js';
import { EtcdStore, type EtcdStoreOptions } from '../../core/store/etcd-store.js';
import type { Store } from '../../core/store/store.js';
import { StartupError } from '../../core/lifecycle/startup-error.js';

/** The PEM files of --etcd-cafile/--etcd-certfile/--etcd-keyfile, read once at start; unreadable ones stop the start with their path. */
export function readEtcdTLS(files: { caFile?: string; certFile?: string; keyFile?: string }): EtcdStoreOptions['tls'] {
  const read = (flag: string, path: string | undefined) => {
    if (path === undefined) return undefined;
    try {
      return readFileSync(path);
    } catch (err) {
      throw new StartupError(`cannot read ${flag} ${path}: ${(err as Error).message}`, { cause: err });
    }
  };
  const ca = read('--etcd-cafile', files.caFile);
  const cert = read('--etcd-certfile', files.certFile);
  const key = read('--etcd-keyfile', files.keyFile);
  return { ...(ca ? { ca } : {}), ...(cert ? { cert } : {}), ...(key ? { key } : {}) };
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    }),
  ]);
}

export interface OpenStoreOptions {
  endpoints: string[];
  timeoutMs?: number;
  /** Client certificate and CA for an etcd that requires them. */
  tls?: EtcdStoreOptions['tls'];
  /** Secrets' encryption at rest, applied below the watch cache. */
  transformer?: EtcdStoreOptions['transformer'];
  /** Runs on etcd itself once it answers, before the watch cache lists (Secrets re-encrypted with the current key). */
  beforeCache?: (etcd: EtcdStore) => Promise<void>;
}

export async function openStore(options: OpenStoreOptions): Promise<Store> {
  const timeoutMs = options.timeoutMs ?? 20_000;
  const etcd = new EtcdStore({
    endpoints: options.endpoints,
    ...(options.tls ? { tls: options.tls } : {}),
    ...(options.transformer ? { transformer: options.transformer } : {}),
  });
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await withTimeout(etcd.currentRevision(), Math.max(1_000, Math.min(5_000, deadline - Date.now())));
      break;
    } catch (err) {
      if (Date.now() >= deadline) {
        await etcd.close().catch(() => {});
        throw new StartupError(`cannot reach etcd at ${options.endpoints.join(', ')}: ${(err as Error).message}`, { cause: err });
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  try {
    await options.beforeCache?.(etcd);
  } catch (err) {
    await etcd.close().catch(() => {});
    throw err;
  }
  // Lists and watches are served from the watch cache; writes and gets go to etcd.
  return CachedStore.open(etcd);
}
