// The master role: data dir, etcd, store, registry, tokens and node access, API server, reconcilers, started in that order and stopped in reverse.
import { setMaxListeners } from 'node:events';
import { serviceKind } from '../core/api/service.js';
import { ADMIN_USER, anyOf, TokenAuthenticator } from './api/auth.js';
import { registerBindingRoutes } from './api/binding-routes.js';
import { registerEvictionRoutes } from './api/eviction-routes.js';
import { registerJoinRoutes } from './api/join-routes.js';
import { registerNodeProxyRoutes } from './api/node-proxy.js';
import { registerScaleRoutes } from './api/scale-routes.js';
import { ObjectService } from './api/object-service.js';
import { ServiceAllocator } from './api/service-allocator.js';
import { registerTokenReviewRoutes } from './api/token-review-routes.js';
import type { MasterConfig } from './daemon-config.js';
import { startManagedEtcd } from './etcd/managed-etcd.js';
import { loadOrCreateAdminToken } from './master/admin-token.js';
import { advertisedServerUrl, joinCommand, readyBanner } from './master/announce.js';
import { ensureClusterDnsService } from './master/cluster-dns-service.js';
import { prepareDataDir } from './master/data-dir.js';
import { ensureDefaultJoinToken } from './master/join-tokens.js';
import { listenApi } from './master/listen-api.js';
import { writeLocalClientConfig } from './master/local-client-config.js';
import { startNodeAccess } from './master/node-access.js';
import { NodeCleanup } from './master/node-cleanup.js';
import { openStore } from './master/open-store.js';
import { StoreCompactor } from './master/store-compactor.js';
import { DeploymentController } from './reconcilers/deployment.js';
import { EndpointsReconciler } from './reconcilers/endpoints.js';
import { GarbageCollector } from './reconcilers/garbage-collector.js';
import { GatewayReconciler } from './reconcilers/gateway.js';
import { NamespaceReconciler } from './reconcilers/namespace.js';
import { NodeLifecycleReconciler } from './reconcilers/node-lifecycle.js';
import { ReplicaSetController } from './reconcilers/replicaset.js';
import { startManagedRegistry } from './registry/managed-registry.js';
import { Scheduler } from './scheduler/scheduler.js';
import { ShutdownSequence } from './shutdown-sequence.js';

export type { MasterConfig } from './daemon-config.js';

/** What an in-process worker needs to join this master. */
export interface MasterReadyInfo {
  url: string;
  adminToken: string;
  joinToken: string;
  registryPort?: number;
}

export interface MasterOptions {
  /** Where progress and warnings go (default: stderr). */
  log?: (message: string) => void;
  /** Where the ready banner goes (default: stdout). */
  announce?: (message: string) => void;
  /** The CLI config file (default ~/.minik8s/config). */
  clientConfigPath?: string;
  /** Called once, when the API serves and the banner is out. */
  onReady?: (info: MasterReadyInfo) => void;
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

    const compacting = new StoreCompactor({ store, log }).start(shutdown.signalFor('compactor'));
    shutdown.push('compactor', () => compacting);

    let registryAddress: string | undefined;
    if (config.registryPort !== undefined) {
      const registry = await startManagedRegistry({ dataDir, port: config.registryPort, address: config.address, signal: shutdown.signalFor('registry'), log });
      shutdown.push('registry', () => registry.stopped);
      registryAddress = registry.address;
    }

    const admin = loadOrCreateAdminToken(dataDir);
    const admins = new TokenAuthenticator();
    admins.add(admin.token, ADMIN_USER);

    // Service cluster IPs and node ports are recorded in the same transaction as each Service.
    const serviceAllocator = new ServiceAllocator({ store, ranges: { serviceCIDR: config.serviceCIDR, nodePorts: config.nodePortRange } });
    const service = new ObjectService({ store, defaultTolerationSeconds: config.defaultTolerationSeconds, allocators: new Map([[serviceKind, serviceAllocator]]) });
    // Before the API serves, so that no create is half-way: records for services stored without them.
    for (const note of await serviceAllocator.repair()) log(`service allocations: ${note}`);
    const nodes = await startNodeAccess({ store, service, clusterCIDR: config.clusterCIDR, signal: shutdown.signalFor('node-access'), log });
    shutdown.push('node-access', () => nodes.stopped);
    const joinToken = await ensureDefaultJoinToken({ tokens: nodes.joinTokens, dataDir });
    // Cheapest first: the admin token is compared in memory, node credentials too; join tokens cost a store read.
    const authenticator = anyOf(admins, nodes.credentials, nodes.joinTokens);

    const api = await listenApi({
      store,
      service,
      authenticator,
      address: config.address,
      port: config.port,
      signal: shutdown.signalFor('api'),
      routes: [
        // Kubelets check the API server's calls (logs, exec, stats) with a TokenReview of the admin token.
        (app) => registerNodeProxyRoutes(app, { service, kubeletToken: admin.token }),
        (app) => registerJoinRoutes(app, { join: (name) => nodes.registrar.join(name), tokens: nodes.joinTokens, registryPort: config.registryPort, clusterCIDR: config.clusterCIDR }),
        (app) => registerTokenReviewRoutes(app, { authenticator }),
        (app) => registerBindingRoutes(app, { service }),
        (app) => registerEvictionRoutes(app, { service }),
        (app) => registerScaleRoutes(app, { service }),
      ],
    });
    shutdown.push('api', () => api.closed);
    await ensureClusterDnsService({ service, serviceCIDR: config.serviceCIDR, log });

    const reconcilerSignal = shutdown.signalFor('reconcilers');
    // Every reconciler's informers and loops listen on it: many listeners here are by design, not a leak.
    setMaxListeners(100, reconcilerSignal);
    const reconcilers = Promise.all([
      new NamespaceReconciler({ service, log }).start(reconcilerSignal),
      config.disableScheduler ? undefined : new Scheduler({ service, policy: config.schedulerPolicy, log }).start(reconcilerSignal),
      new NodeCleanup({ service, registrar: nodes.registrar, log }).start(reconcilerSignal),
      new NodeLifecycleReconciler({ service, gracePeriodSeconds: config.nodeMonitorGracePeriodSeconds, log }).start(reconcilerSignal),
      new EndpointsReconciler({ service, log }).start(reconcilerSignal),
      new GatewayReconciler({ service, log }).start(reconcilerSignal),
      new ReplicaSetController({ service, log }).start(reconcilerSignal),
      new DeploymentController({ service, log }).start(reconcilerSignal),
      new GarbageCollector({ service, log }).start(reconcilerSignal),
    ]);
    shutdown.push('reconcilers', () => reconcilers);

    if (config.writeClientConfig) {
      const written = writeLocalClientConfig({ address: config.address, port: api.port, token: admin.token, path: options.clientConfigPath });
      if (written.warning) log(`warning: ${written.warning}`);
    }

    if (!signal.aborted) {
      announce(readyBanner({ url: api.url, registry: registryAddress, dataDir, adminTokenPath: admin.path, joinTokenPath: joinToken.path }));
      announce(joinCommand(await advertisedServerUrl(config.address, api.port), joinToken.token));
      options.onReady?.({ url: api.url, adminToken: admin.token, joinToken: joinToken.token, registryPort: config.registryPort });
    }
    await shutdown.untilAborted(signal);
  } finally {
    await shutdown.run();
  }
}
