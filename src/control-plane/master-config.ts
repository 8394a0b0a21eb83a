// The master's settings, as the daemon's flags give them (src/daemon/daemon-config.ts parses and checks them).
import type { AuditLogConfig } from './api-server/audit-log.js';
import type { SchedulerPolicy } from './scheduler/scores.js';

export interface MasterConfig {
  /** Absolute path of the state directory. */
  dataDir: string;
  /** Address the API server listens on. */
  address: string;
  port: number;
  /** External etcd client URLs; when absent the master runs its own etcd. */
  etcdEndpoints?: string[];
  /** TLS files for the external etcd (--etcd-cafile, --etcd-certfile, --etcd-keyfile); the managed etcd uses DATA_DIR/pki/etcd. */
  etcdTLS?: { caFile?: string; certFile?: string; keyFile?: string };
  /** Encrypt Secrets at rest (--secrets-encryption, on by default); stored ones stay readable either way. */
  secretsEncryption: boolean;
  /** Client port of the managed etcd (its peer port is the next one). */
  etcdPort: number;
  /** Write ~/.minik8s/config for the local CLI. */
  writeClientConfig: boolean;
  /** Serve the API over plain HTTP (--insecure-http, for tests); default HTTPS with the cluster CA. */
  insecureHttp: boolean;
  /** Extra DNS names or IPs for the API server's certificate (--tls-san). */
  tlsSans: string[];
  /** Port of the managed image registry; undefined runs none (--no-registry). */
  registryPort?: number;
  /** Pods' address range; each node gets a /24 of it. */
  clusterCIDR: string;
  /** Services' cluster IPs come from here (--service-cidr). */
  serviceCIDR: string;
  /** NodePort services' node ports come from here (--service-node-port-range). */
  nodePortRange: { min: number; max: number };
  /** How the scheduler picks among the nodes a pod fits on. */
  schedulerPolicy: SchedulerPolicy;
  /** Run no scheduler (--disable-scheduler, as k3s has): pods stay unbound unless something else binds them. */
  disableScheduler: boolean;
  /** A node whose heartbeat is older than this is NotReady (Ready=Unknown) and tainted unreachable. */
  nodeMonitorGracePeriodSeconds: number;
  /** tolerationSeconds of the not-ready and unreachable tolerations every new pod gets (unless it has its own). */
  defaultTolerationSeconds: number;
  /** How often the autoscaler looks at each HPA (--hpa-sync-period, Kubernetes' --horizontal-pod-autoscaler-sync-period: 15 s). */
  hpaSyncPeriodSeconds: number;
  /** The Docker engine the image factory builds function images on (--docker-host; default DOCKER_HOST or the local socket). */
  dockerHost?: string;
  /** Where this machine's Docker engine reads registry CAs (--docker-certs-dir; default /etc/docker/certs.d): the master puts its registry's CA there. */
  dockerCertsDir?: string;
  /** pip's --index-url for functions' requirements (--pip-index-url); default: pip's own index. */
  pipIndexUrl?: string;
  /** Port of the activator, which serves /function/NAME and /workflow/NAME (--activator-port). */
  activatorPort: number;
  /** Address the activator listens on (--activator-address); default: --address. */
  activatorAddress?: string;
  /**
   * Keep host routes to the Ready nodes' pod ranges via their addresses, so the activator reaches
   * pods: on when the master runs alone; off when this process is a worker too (its overlay routes them).
   */
  podRoutes: boolean;
  /** Leader election's timings (--leader-elect-lease-duration, -renew-deadline, -retry-period); absent: Kubernetes' 15, 10 and 2 s. */
  leaderElection?: { leaseDurationMs: number; renewDeadlineMs: number; retryPeriodMs: number };
  /** The audit log (--audit-log-path, --audit-log-maxsize, --audit-log-maxbackup); none when absent, as in kube-apiserver. */
  auditLog?: AuditLogConfig;
  /** Connections the API server holds at once (--max-connections); undefined sizes it under the fd limit. */
  maxConnections?: number;
  /** Non-mutating API requests served at once (--max-requests-inflight, 400; 0 for no limit). */
  maxRequestsInFlight: number;
  /** Mutating API requests served at once (--max-mutating-requests-inflight, 200; 0 for no limit). */
  maxMutatingRequestsInFlight: number;
}
