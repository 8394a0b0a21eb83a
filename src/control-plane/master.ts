// The master role: data dir, etcd, store, registry, tokens and node access, API server, reconcilers, started in that order and stopped in reverse.
import { setMaxListeners } from 'node:events';
import { join } from 'node:path';
import { serviceKind } from '../core/api/service.js';
import { Activator } from './activator/activator.js';
import { registerInvocationRoutes } from './activator/invocation-routes.js';
import { startActivator } from './activator/start-activator.js';
import { openAuditSink } from './api-server/audit-log.js';
import { ADMIN_USER, anyOf, TokenAuthenticator } from './api-server/auth.js';
import { registerBindingRoutes } from './api-server/binding-routes.js';
import { registerEvictionRoutes } from './api-server/eviction-routes.js';
import { GpuJobOutputs } from './api-server/gpujob-outputs.js';
import { registerGpuJobRoutes } from './api-server/gpujob-routes.js';
import { registerJoinRoutes } from './api-server/join-routes.js';
import { LocalClient } from './api-server/local-client.js';
import { fetchKubeletSummary, registerNodeProxyRoutes } from './api-server/node-proxy.js';
import { registerScaleRoutes } from './api-server/scale-routes.js';
import { ObjectService } from './api-server/object-service.js';
import { storePodBinder } from './api-server/pod-binding.js';
import { ServiceAllocator } from './api-server/service-allocator.js';
import { registerTokenReviewRoutes } from './api-server/token-review-routes.js';
import { registerAccessReviewRoutes } from './api-server/access-review-routes.js';
import { ensureBootstrapPolicy } from './rbac/bootstrap-policy.js';
import { ClusterRoleAggregation } from './rbac/cluster-role-aggregation.js';
import { feedRbacIndex } from './rbac/rbac-informers.js';
import { rbacChain } from './rbac/rbac-chain.js';
import { registerCsrRoutes } from './certificates/csr-routes.js';
import { CsrSigner } from './certificates/csr-signer.js';
import type { MasterConfig } from './master-config.js';
import { startManagedEtcd } from './etcd/managed-etcd.js';
import { readEtcdTLS } from './master/open-store.js';
import { loadOrCreateAdminToken } from './master/admin-token.js';
import { mintKubeletClientCredential } from './master/kubelet-client-credential.js';
import { advertisedServerUrl, joinCommand, readyBanner, writeJoinCommandFile } from './master/announce.js';
import { ensureClusterDnsService } from './master/cluster-dns-service.js';
import { ensureIngressClass } from './master/ingress-class.js';
import type { KubeObject } from '../core/api/meta.js';
import { StorageBinder } from './storage/binder.js';
import { defaultClassAdmission, ensureLocalPathClass } from './storage/storage-admission.js';
import { prepareDataDir } from './master/data-dir.js';
import { loadSecretsEncryption, rewriteStaleSecrets } from './master/encryption-config.js';
import { ensureDefaultJoinToken } from './master/join-tokens.js';
import { listenApi } from './master/listen-api.js';
import { localServerUrl, writeLocalClientConfig } from './master/local-client-config.js';
import { writeAdminKubeconfig } from './master/admin-kubeconfig.js';
import { prepareClusterTls, signKubeletCsr } from './master/cluster-tls.js';
import { startNodeAccess } from './master/node-access.js';
import { NodeCleanup } from './master/node-cleanup.js';
import { openStore } from './master/open-store.js';
import { StoreCompactor } from './master/store-compactor.js';
import { LEASE_NAMES, loadOrCreateMasterIdentity, runElectedComponents } from './leader-election/elected-components.js';
import { DeploymentController } from './reconcilers/deployment.js';
import { HorizontalPodAutoscalerController } from './reconcilers/autoscaler/hpa-controller.js';
import { KubeletResourceMetrics } from './reconcilers/autoscaler/kubelet-metrics.js';
import { EndpointsReconciler } from './reconcilers/endpoints.js';
import { EndpointSliceMirror } from './reconcilers/endpointslice-mirror.js';
import { GarbageCollector } from './reconcilers/garbage-collector.js';
import { GatewayReconciler } from './reconcilers/gateway.js';
import { FunctionController } from './reconcilers/function.js';
import { startFunctionBuilder } from './reconcilers/function-builder.js';
import { GpuJobController } from './reconcilers/gpujob.js';
import { NamespaceReconciler } from './reconcilers/namespace.js';
import { NodeLifecycleReconciler } from './reconcilers/node-lifecycle.js';
import { ReplicaSetController } from './reconcilers/replicaset.js';
import { JobController } from './reconcilers/job.js';
import { CronJobController } from './reconcilers/cronjob.js';
import { DaemonSetController } from './reconcilers/daemonset.js';
import { DisruptionController } from './reconcilers/disruption.js';
import { CrdController } from './crd/crd-controller.js';
import { feedCustomKinds } from './crd/custom-kinds-feed.js';
import { startManagedRegistry } from './registry/managed-registry.js';
import { registerRegistryInfoRoute } from './registry/registry-info-route.js';
import { registryNamesForEngine, trustRegistryForEngine } from './registry/registry-trust.js';
import { Scheduler } from './scheduler/scheduler.js';
import { ensureApiService } from './serviceaccounts/api-service.js';
import { ServiceAccounts } from './serviceaccounts/service-accounts.js';
import { ScheduleTriggers } from './triggers/schedule-triggers.js';
import { ExecutionCleanup } from './workflows/execution-cleanup.js';
import { registerWorkflowExecutionRoutes } from './workflows/execution-routes.js';
import { ExecutionStore } from './workflows/execution-store.js';
import { WorkflowRunner } from './workflows/runner.js';
import { ShutdownSequence } from '../core/lifecycle/shutdown-sequence.js';
import { InformerFactory } from '../core/controller/informer-factory.js';

/** What an in-process worker needs to join this master. */
export interface MasterReadyInfo {
  url: string;
  adminToken: string;
  joinToken: string;
  registryPort?: number;
  /** The cluster CA (PEM) when the API serves HTTPS. */
  caPem?: string;
}

export interface MasterOptions {
  /** Where progress and warnings go (default: stderr). */
  log?: (message: string) => void;
  /** Where the ready banner goes (default: stdout). */
  announce?: (message: string) => void;
  /** The CLI config file (default ~/.minik8s/config). */
  clientConfigPath?: string;
  /** The node the same process runs (both roles): its Node gets the control-plane role label when it joins. */
  controlPlaneNodeName?: string;
  /** Called once, when the API serves and the banner is out. */
  onReady?: (info: MasterReadyInfo) => void;
}

function isLoopbackAddress(address: string): boolean {
  return address.startsWith('127.') || address === '::1' || address === 'localhost';
}

/** Runs the master until `signal` aborts; resolves once everything has stopped. Startup problems reject with a StartupError. */
export async function startMaster(config: MasterConfig, signal: AbortSignal, options: MasterOptions = {}): Promise<void> {
  const log = options.log ?? ((m: string) => process.stderr.write(`${m}\n`));
  const announce = options.announce ?? ((m: string) => process.stdout.write(`${m}\n`));
  const shutdown = new ShutdownSequence({ log });
  try {
    const dataDir = prepareDataDir(config.dataDir);

    let endpoints = config.etcdEndpoints;
    let etcdTLS = config.etcdTLS ? readEtcdTLS(config.etcdTLS) : undefined;
    if (!endpoints) {
      const etcd = await startManagedEtcd({ dataDir, clientPort: config.etcdPort, signal: shutdown.signalFor('etcd'), log });
      shutdown.push('etcd', () => etcd.stopped);
      endpoints = etcd.endpoints;
      etcdTLS = etcd.tls;
    }

    // Secrets are encrypted below the watch cache: etcd holds ciphertext, everything above sees the objects.
    const encryption = loadSecretsEncryption({ dataDir, encrypt: config.secretsEncryption });
    const store = await openStore({
      endpoints,
      tls: etcdTLS,
      transformer: encryption.transformer,
      // A key rotation (a new first key) or encryption turned on or off takes effect for stored Secrets here.
      beforeCache: async (etcd) => {
        const n = await rewriteStaleSecrets(etcd);
        if (n > 0) log(`secrets encryption: rewrote ${n} Secret(s) ${config.secretsEncryption ? `with key "${encryption.keyNames[0]}"` : 'in plain text'}`);
      },
    });
    shutdown.push('store', () => store.close());

    // The cluster CA (made at the first start) and the API server's and registry's certificates, unless --insecure-http.
    const tls = config.insecureHttp ? undefined : await prepareClusterTls({ dataDir, serviceCIDR: config.serviceCIDR, tlsSans: config.tlsSans, log });

    let registryAddress: string | undefined;
    let registryEndpoint: string | undefined;
    if (config.registryPort !== undefined) {
      const registry = await startManagedRegistry({
        dataDir,
        port: config.registryPort,
        address: config.address,
        ...(tls ? { tls: { certFile: tls.registry.certPath, keyFile: tls.registry.keyPath, caPem: tls.ca.certPem } } : {}),
        signal: shutdown.signalFor('registry'),
        log,
      });
      shutdown.push('registry', () => registry.stopped);
      registryAddress = registry.address;
      registryEndpoint = registry.endpoint;
      if (tls) {
        // This machine's engine (function builds, a worker in the same process) trusts the registry by the cluster CA.
        const names = await registryNamesForEngine({ address: config.address, port: config.registryPort, advertised: registry.address });
        const trusted = trustRegistryForEngine({ registries: names, caPem: tls.ca.certPem, certsDir: config.dockerCertsDir, log });
        shutdown.push('registry-trust', async () => trusted.remove());
      }
    }

    const admin = loadOrCreateAdminToken(dataDir);
    const kubeletTls = tls ? { ca: tls.ca.certPem, cert: tls.kubeletClient.certPem, key: tls.kubeletClient.keyPem } : undefined;
    const admins = new TokenAuthenticator();
    admins.add(admin.token, ADMIN_USER);
    // What the master presents to kubelets (logs, exec, the metrics scrape): never the admin token, which a node could lure to a listener of its own.
    const kubeletClient = mintKubeletClientCredential();
    admins.add(kubeletClient.token, kubeletClient.user);

    // Service cluster IPs and node ports are recorded in the same transaction as each Service.
    // Bound service account tokens (signed by DATA_DIR/pki/sa.key), pod admission with the kube-api-access volume, the default ServiceAccounts and (with TLS) kube-root-ca.crt in every namespace.
    const serviceAccounts = new ServiceAccounts({ dataDir, log, caPem: tls?.ca.certPem });
    const serviceAllocator = new ServiceAllocator({ store, ranges: { serviceCIDR: config.serviceCIDR, nodePorts: config.nodePortRange } });
    const service = new ObjectService({
      store,
      defaultTolerationSeconds: config.defaultTolerationSeconds,
      allocators: new Map([[serviceKind, serviceAllocator]]),
      admitPod: serviceAccounts.admitPod,
      admitClaim: (claim): Promise<KubeObject> => admitClaim(claim),
    });
    const admitClaim = defaultClassAdmission(service);
    // Each component calls the API through a client of its own name, so that /metrics counts its requests under it.
    const clientFor = (name: string) => new LocalClient(service.forClient(name));
    // One informer per resource and scope for every component of the master (the API server's namespace cache included).
    const informers = new InformerFactory({ client: clientFor('shared-informers'), log });
    // RBAC's roles and bindings, kept current by the shared informers: the authorizer's last link.
    const rbac = feedRbacIndex(informers);
    // Custom kinds: each Established CRD's versions join the kind registry the API server serves from.
    feedCustomKinds({ informers, log });
    await ensureBootstrapPolicy({ service, log });
    serviceAccounts.attach(service, informers);
    // Before the API serves, so that no create is half-way: records for services stored without them.
    for (const note of await serviceAllocator.repair()) log(`service allocations: ${note}`);
    const nodes = await startNodeAccess({
      store,
      service,
      clusterCIDR: config.clusterCIDR,
      controlPlaneNodeName: options.controlPlaneNodeName,
      signal: shutdown.signalFor('node-access'),
      log,
    });
    shutdown.push('node-access', () => nodes.stopped);
    const joinToken = await ensureDefaultJoinToken({ tokens: nodes.joinTokens, dataDir, caHash: tls?.ca.hash });
    // Cheapest first: the admin token is compared in memory, node credentials too; join tokens cost a store read.
    const gpuJobOutputs = new GpuJobOutputs({ dir: join(dataDir, 'gpujob-outputs') });
    const authenticator = anyOf(admins, nodes.credentials, serviceAccounts.authenticator(), nodes.joinTokens);
    // Function and workflow URLs; its invocation records are served by the API, so it exists before the API does.
    const activator = new Activator({
      client: clientFor('activator'),
      informers,
      store,
      address: config.activatorAddress ?? config.address,
      port: config.activatorPort,
      // The API server's certificate: its SANs (every address and name of this machine, --tls-san) are the activator's too.
      ...(tls ? { tls: { cert: tls.serving.certPem, key: tls.serving.keyPem, ca: tls.ca.certPem } } : {}),
      log,
    });
    let activatorUrl: string | undefined;
    // Workflows run in the master and call their Tasks' functions through the activator, which serves them at /workflow/NAME.
    const executions = new ExecutionStore({ store, log });
    activator.setWorkflowRunner(new WorkflowRunner({ client: clientFor('workflow-runner'), invoker: activator, executions, log }));

    const audit = config.auditLog ? openAuditSink(config.auditLog) : undefined;
    if (audit) shutdown.push('audit-log', async () => audit.close());
    const api = await listenApi({
      store,
      audit,
      service,
      informers,
      authenticator,
      rbac: rbac.index,
      address: config.address,
      port: config.port,
      // A master on loopback has all its nodes on this machine: 127.0.0.1 is their true address, shared by all of them.
      nodeAddresses: isLoopbackAddress(config.address) ? { allowLoopback: true, allowShared: true } : undefined,
      signal: shutdown.signalFor('api'),
      ...(config.maxConnections !== undefined ? { listenerLimits: { maxConnections: config.maxConnections } } : {}),
      maxRequestsInFlight: config.maxRequestsInFlight,
      maxMutatingRequestsInFlight: config.maxMutatingRequestsInFlight,
      ...(tls ? { tls: { cert: tls.serving.certPem, key: tls.serving.keyPem, ca: tls.ca.certPem } } : {}),
      routes: [
        // Kubelets are called with the master's own kubelet client credential, never the admin token: over
        // TLS its client certificate (and the kubelet's certificate checked by node name), else its token.
        (app) => registerNodeProxyRoutes(app, { service, kubeletToken: kubeletClient.token, kubeletTls }),
        (app) =>
          registerJoinRoutes(app, {
            join: (name, details) => nodes.registrar.join(name, details),
            tokens: nodes.joinTokens,
            registryPort: config.registryPort,
            clusterCIDR: config.clusterCIDR,
            // The kubelet's serving certificate names the node (what the master checks when it calls it).
            ...(tls ? { signKubeletCsr: (nodeName: string, csr: string) => signKubeletCsr(tls.ca, nodeName, csr) } : {}),
          }),
        (app) => registerTokenReviewRoutes(app, { authenticator }),
        (app) => registerAccessReviewRoutes(app, { rbac: rbac.index }),
        (app) => registerBindingRoutes(app, { service }),
        (app) => registerEvictionRoutes(app, { service }),
        (app) => registerScaleRoutes(app, { service }),
        (app) => registerGpuJobRoutes(app, { service, outputs: gpuJobOutputs }),
        (app) => registerCsrRoutes(app, { service, rbac: rbacChain(rbac.index) }),
        (app) => registerInvocationRoutes(app, { service, records: activator.records, activatorUrl: () => activatorUrl }),
        (app) => registerRegistryInfoRoute(app, { registryPort: config.registryPort }),
        (app) => registerWorkflowExecutionRoutes(app, { service, executions }),
        ...serviceAccounts.routes(),
      ],
    });
    shutdown.push('api', () => api.closed);
    const activating = await startActivator({ activator, config, informers, signal: shutdown.signalFor('activator'), log });
    shutdown.push('activator', () => activating.stopped);
    activatorUrl = activating.url;
    await ensureClusterDnsService({ service, serviceCIDR: config.serviceCIDR, log });
    await ensureIngressClass({ service, log });
    await ensureLocalPathClass({ service, log });

    // Pods (GPU job submitters) reach the API server where workers do.
    const podServerUrl = await advertisedServerUrl(config.address, api.port, tls ? 'https' : 'http');
    // default/kubernetes -> this API server, for in-cluster clients (KUBERNETES_SERVICE_HOST, the kubelets' env).
    await ensureApiService({ service, serviceCIDR: config.serviceCIDR, address: new URL(podServerUrl).hostname.replace(/^\[|\]$/g, ''), port: api.port, log });
    const reconcilerSignal = shutdown.signalFor('reconcilers');
    // Every reconciler's informers and loops listen on it: many listeners here are by design, not a leak.
    setMaxListeners(100, reconcilerSignal);
    // Built before any election: a master never builds images twice over, whichever term it leads.
    const functionBuilder = await startFunctionBuilder({ registryEndpoint, dockerHost: config.dockerHost, pipIndexUrl: config.pipIndexUrl, log });
    // The activator serves calls on every master; only the holder of its Lease scales functions.
    activator.autoscaler.active = false;
    // Each on a client view of the service, so that /metrics counts its requests under its name;
    // their informers are shared, one per resource and scope (client-go's SharedInformerFactory).
    // Each group runs only while this master holds its Lease in kube-system (several masters over
    // one etcd: one leader per group, the others on standby with warm caches).
    const controllerManager = (signal: AbortSignal, informers: InformerFactory) =>
      Promise.all([
        new NamespaceReconciler({ client: clientFor('namespace-controller'), informers, log }).start(signal),
        new NodeCleanup({ informers, registrar: nodes.registrar, log }).start(signal),
        new NodeLifecycleReconciler({
          client: clientFor('node-lifecycle-controller'),
          informers,
          gracePeriodSeconds: config.nodeMonitorGracePeriodSeconds,
          log,
        }).start(signal),
        new EndpointsReconciler({ client: clientFor('endpoints-controller'), informers, log }).start(signal),
        new EndpointSliceMirror({ client: clientFor('endpointslice-controller'), informers, log }).start(signal),
        new GatewayReconciler({ client: clientFor('gateway-controller'), informers, log }).start(signal),
        new ReplicaSetController({ client: clientFor('replicaset-controller'), informers, log }).start(signal),
        new StorageBinder({ client: clientFor('persistentvolume-binder-controller'), informers, log }).start(signal),
        new DeploymentController({ client: clientFor('deployment-controller'), informers, log }).start(signal),
        new JobController({ client: clientFor('job-controller'), informers, log }).start(signal),
        new CronJobController({ client: clientFor('cronjob-controller'), informers, log }).start(signal),
        new DaemonSetController({ client: clientFor('daemon-set-controller'), informers, log }).start(signal),
        new DisruptionController({ client: clientFor('disruption-controller'), informers, log }).start(signal),
        new CrdController({ client: clientFor('apiextensions-controller'), informers, log }).start(signal),
        // Samples come from the kubelets of the pods' nodes, as the metrics API's do (with the master's kubelet client credential).
        new HorizontalPodAutoscalerController({
          client: clientFor('horizontal-pod-autoscaler'),
          informers,
          metrics: new KubeletResourceMetrics({
            client: new LocalClient(service),
            summary: (node) => fetchKubeletSummary(node, { token: kubeletClient.token, tls: kubeletTls, timeoutMs: 5000 }),
          }),
          syncPeriodMs: config.hpaSyncPeriodSeconds * 1000,
          log,
        }).start(signal),
        new GarbageCollector({ client: clientFor('garbage-collector'), informers, log }).start(signal),
        new ClusterRoleAggregation({ client: clientFor('clusterrole-aggregation-controller'), informers, log }).start(signal),
        serviceAccounts.controller(clientFor('service-account-controller'), informers).start(signal),
        serviceAccounts.rootCaPublisher(clientFor('root-ca-cert-publisher'), informers)?.start(signal),
        new ExecutionCleanup({ informers, executions, log }).start(signal),
        new GpuJobController({
          client: clientFor('gpujob-controller'),
          informers,
          outputs: gpuJobOutputs,
          // Submitter pods report with their job's service account token, bound to the job object.
          issueToken: (input) => serviceAccounts.issueGpuJobToken(input),
          serverUrl: podServerUrl,
          // Its submitter pods verify the API server's certificate with the cluster CA (from the job's token Secret).
          caPem: tls?.ca.certPem,
          log,
        }).start(signal),
        // CertificateSigningRequests for kube-apiserver-client, signed by the cluster CA once approved (none without TLS).
        ...(tls ? [new CsrSigner({ client: clientFor('csr-signer'), informers, ca: tls.ca, log }).start(signal)] : []),
      ]);
    const elected = runElectedComponents(
      {
        client: clientFor('leader-election'),
        informers,
        identity: loadOrCreateMasterIdentity(dataDir),
        timing: config.leaderElection,
        log,
        components: {
          [LEASE_NAMES.controllerManager]: controllerManager,
          ...(config.disableScheduler
            ? {}
            : {
                [LEASE_NAMES.scheduler]: (signal: AbortSignal, informers: InformerFactory) =>
                  new Scheduler({
                    client: clientFor('scheduler'),
                    informers,
                    bind: storePodBinder(service.forClient('scheduler')),
                    policy: config.schedulerPolicy,
                    log,
                  }).start(signal),
              }),
          // Functions: versions built into images by the image factory (on the master's Docker), run as ReplicaSets behind the activator.
          [LEASE_NAMES.functions]: (signal: AbortSignal, informers: InformerFactory) =>
            new FunctionController({ client: clientFor('function-controller'), informers, builder: functionBuilder, activatorUrl: activating.url, log }).start(
              signal,
            ),
          // Functions' cron triggers, called through the activator like any other call (and so recorded).
          [LEASE_NAMES.cronTriggers]: (signal: AbortSignal, informers: InformerFactory) =>
            new ScheduleTriggers({ informers, invoker: activator, log }).start(signal),
          // One master compacts etcd's history (two would race to the same revisions and log each other's compactions as failures).
          [LEASE_NAMES.storeCompactor]: (signal: AbortSignal) => new StoreCompactor({ store, log }).start(signal),
          [LEASE_NAMES.activatorAutoscaler]: async (signal: AbortSignal) => {
            activator.autoscaler.active = true;
            await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
            activator.autoscaler.active = false;
          },
        },
      },
      reconcilerSignal,
    );
    // Last: the API server's and activator's informers are asked for, so they all list at once (the elected components' join as they start).
    const reconcilers = Promise.all([elected, informers.start(reconcilerSignal)]);
    shutdown.push('reconcilers', () => reconcilers);

    let kubeconfigPath: string | undefined;
    if (tls) {
      kubeconfigPath = writeAdminKubeconfig(dataDir, {
        server: localServerUrl(config.address, api.port, 'https'),
        caPem: tls.ca.certPem,
        clientCertPem: tls.admin.certPem,
        clientKeyPem: tls.admin.keyPem,
        token: admin.token,
      });
    }
    if (config.writeClientConfig) {
      const written = writeLocalClientConfig({
        address: config.address,
        port: api.port,
        token: admin.token,
        path: options.clientConfigPath,
        scheme: tls ? 'https' : 'http',
        caPath: tls?.ca.certPath,
        kubeconfigPath,
      });
      if (written.warning) log(`warning: ${written.warning}`);
    }

    if (!signal.aborted) {
      announce(readyBanner({ url: api.url, registry: registryAddress, dataDir, adminTokenPath: admin.path, joinTokenPath: joinToken.path }));
      announce(joinCommand(writeJoinCommandFile(dataDir, await advertisedServerUrl(config.address, api.port, tls ? 'https' : 'http'), joinToken.token)));
      options.onReady?.({ url: api.url, adminToken: admin.token, joinToken: joinToken.token, registryPort: config.registryPort, caPem: tls?.ca.certPem });
    }
    await shutdown.untilAborted(signal);
  } finally {
    await shutdown.run();
  }
}
