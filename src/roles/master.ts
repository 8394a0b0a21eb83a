// The master role: data dir, etcd, store, admin token, CLI config, API server, started in that order and stopped in reverse.
import { ADMIN_USER, TokenAuthenticator } from './api/auth.js';
import type { MasterConfig } from './daemon-config.js';
import { startManagedEtcd } from './etcd/managed-etcd.js';
import { loadOrCreateAdminToken } from './master/admin-token.js';
import { prepareDataDir } from './master/data-dir.js';
import { listenApi } from './master/listen-api.js';
import { writeLocalClientConfig } from './master/local-client-config.js';
import { openStore } from './master/open-store.js';
import { NamespaceReconciler } from './reconcilers/namespace.js';
import { ShutdownSequence } from './shutdown-sequence.js';

export type { MasterConfig } from './daemon-config.js';

export interface MasterOptions {
  /** Where progress and warnings go (default: stderr). */
  log?: (message: string) => void;
  /** Where the ready banner goes (default: stdout). */
  announce?: (message: string) => void;
  /** The CLI config file (default ~/.minik8s/config). */
  clientConfigPath?: string;
}

/** Runs the master until `signal` aborts; resolves once everything has stopped. Startup problems reject with a StartupError. */
export async function startMaster(config: MasterConfig, signal: AbortSignal, options: MasterOptions = {}): Promise<void> {
  const log = options.log ?? ((m: string) => process.stderr.write(`${m}\n`));
  const announce = options.announce ?? ((m: string) => process.stdout.write(`${m}\n`));
  const shutdown = new ShutdownSequence({ log });
  try {
    const dataDir = prepareDataDir(config.dataDir);

    let endpoints = config.etcdEndpoints;
    if (!endpoints) {
      const etcd = await startManagedEtcd({ dataDir, clientPort: config.etcdPort, signal: shutdown.signalFor('etcd'), log });
      shutdown.push('etcd', () => etcd.stopped);
      endpoints = etcd.endpoints;
    }

    const store = await openStore({ endpoints });
    shutdown.push('store', () => store.close());

    const admin = loadOrCreateAdminToken(dataDir);
    const authenticator = new TokenAuthenticator();
    authenticator.add(admin.token, ADMIN_USER);

    const api = await listenApi({ store, authenticator, address: config.address, port: config.port, signal: shutdown.signalFor('api') });
    shutdown.push('api', () => api.closed);

    const namespaces = new NamespaceReconciler({ service: api.service, log });
    const reconcilers = namespaces.start(shutdown.signalFor('reconcilers'));
    shutdown.push('reconcilers', () => reconcilers);

    if (config.writeClientConfig) {
      const written = writeLocalClientConfig({ address: config.address, port: api.port, token: admin.token, path: options.clientConfigPath });
      if (written.warning) log(`warning: ${written.warning}`);
    }

    if (!signal.aborted) announce(`minik8s master ready: API ${api.url}, data ${dataDir}, admin token in ${admin.path}`);
    await shutdown.untilAborted(signal);
  } finally {
    await shutdown.run();
  }
}
