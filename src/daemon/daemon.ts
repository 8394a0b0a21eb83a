// `minik8s --role=...` (or `minik8s master`): parses the daemon flags, starts the roles, and turns startup errors into exit codes.
import { existsSync } from 'node:fs';
import yargs from 'yargs';
import { configFileArg, readConfigFile } from './config-file.js';
import { toDaemonConfig, UsageError, type DaemonConfig } from './daemon-config.js';
import { startMaster } from '../control-plane/master.js';
import { advertisedServerUrl } from '../control-plane/master/announce.js';
import { credentialPath } from '../node/agent/node-credential.js';
import { startWorker } from '../node/worker.js';
import { StartupError } from '../core/lifecycle/startup-error.js';

export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

function parser(argv: string[], fileFlags: Record<string, unknown> = {}) {
  return yargs(argv)
    .scriptName('minik8s')
    .usage('Usage: minik8s --role=master|worker|master,worker [flags]   (or: minik8s master [flags])')
    .exitProcess(false)
    .strictOptions()
    .version(false)
    .help(true)
    .wrap(null)
    .config(fileFlags)
    .option('config', {
      type: 'string',
      requiresArg: true,
      describe: 'read flags from this YAML file (keys as the flag names, e.g. "server: https://10.0.0.1:6443"); flags given here win',
    })
    .option('role', { type: 'string', requiresArg: true, describe: 'roles to run: master, worker, or master,worker' })
    .option('data-dir', { type: 'string', requiresArg: true, default: '/var/lib/minik8s', describe: 'state directory (etcd data, admin token, logs)' })
    .option('address', { type: 'string', requiresArg: true, default: '0.0.0.0', describe: 'address the API server listens on' })
    .option('port', { type: 'string', requiresArg: true, default: '6443', describe: 'API server port' })
    .option('etcd-endpoints', { type: 'string', requiresArg: true, describe: 'comma-separated etcd client URLs; when given, no etcd is started' })
    .option('etcd-port', { type: 'string', requiresArg: true, default: '2379', describe: 'client port of the managed etcd (peer port: the next one)' })
    .option('etcd-cafile', { type: 'string', requiresArg: true, describe: 'CA bundle to verify the --etcd-endpoints servers by (PEM)' })
    .option('etcd-certfile', { type: 'string', requiresArg: true, describe: 'client certificate the master shows the --etcd-endpoints servers (PEM)' })
    .option('etcd-keyfile', { type: 'string', requiresArg: true, describe: 'private key of --etcd-certfile (PEM)' })
    .option('secrets-encryption', {
      type: 'boolean',
      default: true,
      describe: 'encrypt Secrets in etcd with AES-GCM, keys in DATA_DIR/pki/encryption-config.json (--no-secrets-encryption to store new ones in plain text)',
    })
    .option('audit-log-path', {
      type: 'string',
      requiresArg: true,
      describe: 'write an audit event per request to this file (- for stdout); no audit log without it',
    })
    .option('audit-log-maxsize', { type: 'string', requiresArg: true, default: '100', describe: 'megabytes of audit log before it is rotated (0: never)' })
    .option('audit-log-maxbackup', { type: 'string', requiresArg: true, default: '10', describe: 'rotated audit log files kept (0: all)' })
    .option('write-config', { type: 'boolean', default: true, describe: 'write ~/.minik8s/config for the CLI (--no-write-config to skip)' })
    .option('insecure-http', {
      type: 'boolean',
      default: false,
      describe: 'serve the API, the activator and the registry over plain HTTP, no TLS (for tests; never on a network)',
    })
    .option('tls-san', {
      type: 'string',
      array: true,
      requiresArg: true,
      describe: "extra names or IPs for the API server's certificate (repeatable, or comma-separated)",
    })
    .option('registry', { type: 'boolean', default: true, describe: 'run the image registry (--no-registry to skip)' })
    .option('registry-port', { type: 'string', requiresArg: true, default: '5000', describe: "port of the master's image registry" })
    .option('cluster-cidr', { type: 'string', requiresArg: true, default: '10.244.0.0/16', describe: 'pod address range; each node gets a /24 of it' })
    .option('service-cidr', {
      type: 'string',
      requiresArg: true,
      default: '10.96.0.0/16',
      describe: "service cluster IP range (10.96.0.10 of the default is the cluster DNS service's)",
    })
    .option('service-node-port-range', { type: 'string', requiresArg: true, default: '30000-32767', describe: 'ports NodePort services get, MIN-MAX' })
    .option('node-monitor-grace-period', {
      type: 'string',
      requiresArg: true,
      default: '40',
      describe: 'seconds without a heartbeat before a node is NotReady and tainted unreachable',
    })
    .option('default-toleration-seconds', {
      type: 'string',
      requiresArg: true,
      default: '300',
      describe: 'how long new pods tolerate a not-ready or unreachable node before eviction (unless they say)',
    })
    .option('scheduler-policy', {
      type: 'string',
      requiresArg: true,
      default: 'least-allocated',
      describe: 'how the scheduler picks a node: least-allocated, fewest-pods, balanced or round-robin',
    })
    .option('disable-scheduler', { type: 'boolean', default: false, describe: 'run no scheduler (pods stay Pending unless bound some other way)' })
    .option('hpa-sync-period', {
      type: 'string',
      requiresArg: true,
      default: '15',
      describe: "seconds between the autoscaler's looks at each HorizontalPodAutoscaler",
    })
    .option('leader-elect-lease-duration', {
      type: 'string',
      requiresArg: true,
      describe: 'seconds a control-plane Lease binds other masters after its last renewal (default 15)',
    })
    .option('leader-elect-renew-deadline', {
      type: 'string',
      requiresArg: true,
      describe: 'seconds a leader keeps trying to renew before it stops leading (default 10)',
    })
    .option('leader-elect-retry-period', { type: 'string', requiresArg: true, describe: 'seconds between tries to acquire or renew a Lease (default 2)' })
    .option('activator-port', {
      type: 'string',
      requiresArg: true,
      default: '8090',
      describe: 'port of the activator (function and workflow URLs: /function/NAME, /workflow/NAME)',
    })
    .option('max-connections', {
      type: 'string',
      requiresArg: true,
      describe: "connections the API server holds at once; beyond them new ones are dropped (default: 80% of the process's open-file limit)",
    })
    .option('max-requests-inflight', {
      type: 'string',
      requiresArg: true,
      default: '400',
      describe: 'non-mutating API requests served at once; the excess gets 429 (watches, logs and exec do not count; 0: no limit)',
    })
    .option('max-mutating-requests-inflight', {
      type: 'string',
      requiresArg: true,
      default: '200',
      describe: 'mutating API requests (create, update, patch, delete) served at once; the excess gets 429 (0: no limit)',
    })
    .option('activator-address', { type: 'string', requiresArg: true, describe: 'address the activator listens on (default: --address)' })
    .option('pip-index-url', {
      type: 'string',
      requiresArg: true,
      describe:
        "package index for functions' requirements (pip --index-url; default: pip's own configuration on this machine, PIP_INDEX_URL or pip.conf; builds use the host's network, so a local index on loopback works)",
    })
    .group(
      [
        'server',
        'token',
        'token-file',
        'name',
        'node-ip',
        'labels',
        'taints',
        'docker-host',
        'kubelet-address',
        'kubelet-port',
        'bridge',
        'overlay',
        'proxy',
        'dns',
        'cluster-dns',
        'dns-upstream',
        'provider',
        'fake-nodes',
        'fake-node-capacity',
        'fake-node-heartbeat',
      ],
      'Worker:',
    )
    .option('server', { type: 'string', requiresArg: true, describe: "the master's API server URL (worker only)" })
    .option('token', {
      type: 'string',
      requiresArg: true,
      describe: 'join token from the master (worker only; visible to local users in /proc: prefer --token-file or MINIK8S_JOIN_TOKEN)',
    })
    .option('token-file', { type: 'string', requiresArg: true, describe: 'file holding the join token (worker only)' })
    .option('name', { type: 'string', requiresArg: true, describe: 'node name (default: the host name)' })
    .option('node-ip', { type: 'string', requiresArg: true, describe: "the node's address (default: the one that routes to the master)" })
    .option('labels', { type: 'string', requiresArg: true, describe: 'node labels, k=v,...' })
    .option('taints', { type: 'string', requiresArg: true, describe: 'node taints, k=v:NoSchedule,...' })
    .option('docker-host', {
      type: 'string',
      requiresArg: true,
      describe: "Docker engine (pods'; and the master's function image builds), unix:///var/run/docker.sock or tcp://HOST:PORT",
    })
    .option('docker-certs-dir', {
      type: 'string',
      requiresArg: true,
      describe: "where the Docker engine reads registry CAs; the master's registry CA is put there as HOST:PORT/ca.crt (default /etc/docker/certs.d)",
    })
    .option('kubelet-address', { type: 'string', requiresArg: true, describe: 'address the kubelet API listens on (default 0.0.0.0)' })
    .option('kubelet-port', { type: 'string', requiresArg: true, describe: 'kubelet API port (default 10250)' })
    .option('bridge', { type: 'string', requiresArg: true, describe: 'Docker network and Linux bridge for pods (default minik8s0)' })
    .option('overlay', {
      type: 'string',
      requiresArg: true,
      describe: 'pod network between nodes: vxlan (default) or none (workers sharing one network namespace)',
    })
    .option('proxy', {
      type: 'string',
      requiresArg: true,
      describe: 'service rules on this machine: iptables (default) or none (workers sharing one network namespace)',
    })
    .option('dns', { type: 'string', requiresArg: true, describe: "node-local cluster DNS on the pod bridge's gateway address: on (default) or off" })
    .option('dns-upstream', {
      type: 'string',
      requiresArg: true,
      describe: 'resolvers for names outside the cluster, e.g. 10.0.0.2,10.0.0.3:5353 (default: those of /etc/resolv.conf)',
    })
    .option('cluster-dns', { type: 'string', requiresArg: true, describe: 'the cluster DNS address pods get as nameserver (default 10.96.0.10)' })
    .option('provider', { type: 'string', requiresArg: true, describe: 'where pods run: docker (default) or fake (in memory, no containers)' })
    .option('fake-nodes', {
      type: 'string',
      requiresArg: true,
      describe: 'host N fake nodes in this process, named NAME-0 ... (kwok-style; implies --provider=fake)',
    })
    .option('fake-node-capacity', { type: 'string', requiresArg: true, describe: "each fake node's capacity, e.g. cpu=32,memory=256Gi,pods=110 (the default)" })
    .option('fake-node-heartbeat', {
      type: 'string',
      requiresArg: true,
      describe: "seconds between each fake node's status posts (default 10; keep it under the master's --node-monitor-grace-period)",
    })
    .fail((message, err) => {
      throw err ?? new UsageError(message);
    });
}

/** Parses argv into a config, or returns the exit code when there is nothing to run (help, bad flags). */
export async function parseDaemonArgs(argv: string[]): Promise<DaemonConfig | number> {
  let raw: Awaited<ReturnType<ReturnType<typeof parser>['parseAsync']>>;
  try {
    const file = configFileArg(argv);
    raw = await parser(argv, file === undefined ? {} : readConfigFile(file)).parseAsync();
  } catch (err) {
    process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\nrun "minik8s --role=master --help" for the flags\n`);
    return EXIT_USAGE;
  }
  if (raw.help) return EXIT_OK;
  if (raw.token) {
    process.stderr.write(
      'warning: --token puts the join token on the command line, which every local user can read in /proc; use --token-file FILE or the MINIK8S_JOIN_TOKEN environment variable\n',
    );
  }
  try {
    return toDaemonConfig({
      positionals: raw._.map(String),
      role: raw.role,
      dataDir: raw['data-dir'],
      address: raw.address,
      port: raw.port,
      etcdEndpoints: raw['etcd-endpoints'],
      etcdPort: raw['etcd-port'],
      etcdCAFile: raw['etcd-cafile'],
      etcdCertFile: raw['etcd-certfile'],
      etcdKeyFile: raw['etcd-keyfile'],
      secretsEncryption: raw['secrets-encryption'],
      auditLogPath: raw['audit-log-path'],
      auditLogMaxSize: raw['audit-log-maxsize'],
      auditLogMaxBackup: raw['audit-log-maxbackup'],
      writeConfig: raw['write-config'],
      insecureHttp: raw['insecure-http'],
      tlsSan: raw['tls-san']?.map(String),
      registry: raw.registry,
      registryPort: raw['registry-port'],
      clusterCIDR: raw['cluster-cidr'],
      serviceCIDR: raw['service-cidr'],
      serviceNodePortRange: raw['service-node-port-range'],
      schedulerPolicy: raw['scheduler-policy'],
      disableScheduler: raw['disable-scheduler'],
      nodeMonitorGracePeriod: raw['node-monitor-grace-period'],
      defaultTolerationSeconds: raw['default-toleration-seconds'],
      hpaSyncPeriod: raw['hpa-sync-period'],
      leaderElectLeaseDuration: raw['leader-elect-lease-duration'],
      leaderElectRenewDeadline: raw['leader-elect-renew-deadline'],
      leaderElectRetryPeriod: raw['leader-elect-retry-period'],
      pipIndexUrl: raw['pip-index-url'],
      activatorPort: raw['activator-port'],
      activatorAddress: raw['activator-address'],
      maxConnections: raw['max-connections'],
      maxRequestsInflight: raw['max-requests-inflight'],
      maxMutatingRequestsInflight: raw['max-mutating-requests-inflight'],
      server: raw.server,
      token: raw.token,
      tokenFile: raw['token-file'],
      tokenEnv: process.env.MINIK8S_JOIN_TOKEN,
      storedCredential: existsSync(credentialPath(raw['data-dir'])),
      name: raw.name,
      nodeIP: raw['node-ip'],
      labels: raw.labels,
      taints: raw.taints,
      dockerHost: raw['docker-host'],
      dockerCertsDir: raw['docker-certs-dir'],
      kubeletAddress: raw['kubelet-address'],
      kubeletPort: raw['kubelet-port'],
      bridge: raw.bridge,
      overlay: raw.overlay,
      proxy: raw.proxy,
      dns: raw.dns,
      clusterDNS: raw['cluster-dns'],
      dnsUpstream: raw['dns-upstream'],
      provider: raw.provider,
      fakeNodes: raw['fake-nodes'],
      fakeNodeCapacity: raw['fake-node-capacity'],
      fakeNodeHeartbeat: raw['fake-node-heartbeat'],
    });
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`error: ${err.message}\n`);
    return EXIT_USAGE;
  }
}

/**
 * Both roles in one process (the one-machine cluster): the worker joins its own master over
 * loopback once the API serves, and on shutdown stops before the master, so that the kubelet
 * never sees its API server vanish first.
 */
async function startMasterAndWorker(config: DaemonConfig, signal: AbortSignal): Promise<void> {
  const masterStop = new AbortController();
  const workerStop = new AbortController();
  let worker: Promise<void> | undefined;
  let workerFailure: unknown;
  const master = startMaster(config.master, masterStop.signal, {
    controlPlaneNodeName: config.worker.name,
    onReady: (info) => {
      worker = (async () => {
        // Other machines reach this node where they reach the master, not at the loopback it joins over.
        const nodeIP = config.worker.nodeIP ?? new URL(await advertisedServerUrl(config.master.address, config.master.port)).hostname;
        await startWorker({ ...config.worker, nodeIP }, workerStop.signal, { localMaster: { server: info.url, joinToken: info.joinToken } });
      })().catch((err: unknown) => {
        workerFailure = err;
        masterStop.abort();
      });
    },
  });
  const stop = () => {
    workerStop.abort();
    void Promise.resolve(worker).then(() => masterStop.abort());
  };
  if (signal.aborted) stop();
  else signal.addEventListener('abort', stop, { once: true });
  try {
    await master;
  } finally {
    workerStop.abort();
    await worker;
  }
  if (workerFailure) throw workerFailure;
}

/** Runs the daemon until `signal` aborts; resolves with the process exit code. */
export async function runDaemon(argv: string[], signal: AbortSignal): Promise<number> {
  const config = await parseDaemonArgs(argv);
  if (typeof config === 'number') return config;
  try {
    if (config.roles.includes('master') && config.roles.includes('worker')) await startMasterAndWorker(config, signal);
    else if (config.roles.includes('worker')) await startWorker(config.worker, signal);
    else await startMaster(config.master, signal);
    return EXIT_OK;
  } catch (err) {
    if (err instanceof StartupError) {
      process.stderr.write(`error: ${err.message}\n`);
    } else {
      // Not one of ours: still no stack unless asked for.
      const detail = process.env.MINIK8S_DEBUG && err instanceof Error ? `\n${err.stack}` : '';
      process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}${detail}\n`);
    }
    return EXIT_FAILED;
  }
}
