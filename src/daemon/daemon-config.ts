// Daemon flags -> a validated config: which roles to run, the master's and the worker's settings. Pure, so it is unit tested.
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { parseQuantity } from '../core/api/quantity.js';
import { parseNodePortRange, parseServiceCIDR as parseServiceRange } from '../control-plane/api-server/service-allocation.js';
import { parseIpv4Cidr } from '../core/api/ipv4.js';
import type { MasterConfig } from '../control-plane/master-config.js';
import { POLICIES, type SchedulerPolicy } from '../control-plane/scheduler/scores.js';
import { parseUpstreamList, type Upstream } from '../net/dns/resolv-conf.js';
import { DEFAULT_FAKE_NODE_CAPACITY, MAX_FAKE_NODES, type FakeNodeCapacity, type FakeNodesConfig, type WorkerConfig } from '../node/worker-config.js';

export type Role = 'master' | 'worker';

export interface DaemonConfig {
  roles: Role[];
  master: MasterConfig;
  worker: WorkerConfig;
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
  etcdCAFile?: string;
  etcdCertFile?: string;
  etcdKeyFile?: string;
  secretsEncryption?: boolean;
  auditLogPath?: string;
  auditLogMaxSize?: string;
  auditLogMaxBackup?: string;
  writeConfig: boolean;
  insecureHttp?: boolean;
  tlsSan?: string[];
  registry?: boolean;
  registryPort?: string;
  clusterCIDR?: string;
  serviceCIDR?: string;
  serviceNodePortRange?: string;
  schedulerPolicy?: string;
  disableScheduler?: boolean;
  nodeMonitorGracePeriod?: string;
  defaultTolerationSeconds?: string;
  hpaSyncPeriod?: string;
  leaderElectLeaseDuration?: string;
  leaderElectRenewDeadline?: string;
  leaderElectRetryPeriod?: string;
  pipIndexUrl?: string;
  activatorPort?: string;
  activatorAddress?: string;
  maxConnections?: string;
  maxRequestsInflight?: string;
  maxMutatingRequestsInflight?: string;
  server?: string;
  token?: string;
  /** --token-file: a file holding the join token (kept out of argv, which every local user reads in /proc). */
  tokenFile?: string;
  /**
   * The MINIK8S_JOIN_TOKEN environment variable: the join token when neither flag gives one. Not
   * MINIK8S_TOKEN, which is the CLI's (often the admin's) token: a worker started where that is set
   * would otherwise join with the admin's credential.
   */
  tokenEnv?: string;
  /** Whether DATA_DIR holds a node credential from an earlier join: then a worker needs no join token to start again. */
  storedCredential?: boolean;
  name?: string;
  nodeIP?: string;
  labels?: string;
  taints?: string;
  dockerHost?: string;
  /** --docker-certs-dir: the engine's certs.d (registry CAs go there). */
  dockerCertsDir?: string;
  kubeletAddress?: string;
  kubeletPort?: string;
  bridge?: string;
  overlay?: string;
  proxy?: string;
  dns?: string;
  clusterDNS?: string;
  dnsUpstream?: string;
  provider?: string;
  fakeNodes?: string;
  fakeNodeCapacity?: string;
  fakeNodeHeartbeat?: string;
}

/** Whole seconds, as `40` or `40s`, from min up. */
function parseSeconds(flag: string, value: string, min: number): number {
  const m = /^(\d+)s?$/.exec(value.trim());
  if (!m || Number(m[1]) < min || !Number.isSafeInteger(Number(m[1]))) {
    throw new UsageError(`--${flag} must be a whole number of seconds${min > 0 ? ` of at least ${min}` : ''}, such as 40 or 40s, not "${value}"`);
  }
  return Number(m[1]);
}

/** --leader-elect-lease-duration, -renew-deadline, -retry-period (Kubernetes' 15, 10, 2 s when absent): a leader must stop before its Lease can be taken. */
function parseLeaderElection(
  flags: Pick<RawDaemonFlags, 'leaderElectLeaseDuration' | 'leaderElectRenewDeadline' | 'leaderElectRetryPeriod'>,
): Pick<MasterConfig, 'leaderElection'> {
  if (flags.leaderElectLeaseDuration === undefined && flags.leaderElectRenewDeadline === undefined && flags.leaderElectRetryPeriod === undefined) return {};
  const lease = parseSeconds('leader-elect-lease-duration', flags.leaderElectLeaseDuration ?? '15', 1);
  const renew = parseSeconds('leader-elect-renew-deadline', flags.leaderElectRenewDeadline ?? '10', 1);
  const retry = parseSeconds('leader-elect-retry-period', flags.leaderElectRetryPeriod ?? '2', 1);
  if (lease <= renew) throw new UsageError(`--leader-elect-lease-duration (${lease}s) must be greater than --leader-elect-renew-deadline (${renew}s)`);
  if (renew <= retry) throw new UsageError(`--leader-elect-renew-deadline (${renew}s) must be greater than --leader-elect-retry-period (${retry}s)`);
  return { leaderElection: { leaseDurationMs: lease * 1000, renewDeadlineMs: renew * 1000, retryPeriodMs: retry * 1000 } };
}

function parsePort(flag: string, value: string, max = 65535): number {
  if (!/^\d+$/.test(value.trim()) || Number(value) < 1 || Number(value) > max) {
    throw new UsageError(`--${flag} must be a port number from 1 to ${max}, not "${value}"`);
  }
  return Number(value);
}

/** A whole number from min up, for counts and sizes such as --max-connections. */
function parseCount(flag: string, value: string, min = 0): number {
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(Number(value)) || Number(value) < min) {
    throw new UsageError(`--${flag} must be a whole number ${min > 0 ? `of at least ${min}` : 'from 0 up'}, not "${value}"`);
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
  const endpoints = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
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

const LABEL_KEY = /^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const LABEL_VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$/;

/** `k=v,k2=v2` -> a label map (Kubernetes' syntax for keys and values). */
export function parseLabels(text: string): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const part of text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const eq = part.indexOf('=');
    const key = eq < 0 ? part : part.slice(0, eq);
    const value = eq < 0 ? '' : part.slice(eq + 1);
    if (eq < 0 || !LABEL_KEY.test(key) || key.length > 316 || !LABEL_VALUE.test(value) || value.length > 63) {
      throw new UsageError(`--labels: "${part}" is not a label (expected key=value, e.g. disk=ssd)`);
    }
    labels[key] = value;
  }
  return labels;
}

const EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'] as const;

/** `k=v:NoSchedule,k2:NoExecute` -> taints, as `kubectl taint` spells them. */
export function parseTaints(text: string): WorkerConfig['taints'] {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((part) => {
      const m = /^([^=:]+)(?:=([^:]*))?:(.+)$/.exec(part);
      const effect = m?.[3] as (typeof EFFECTS)[number] | undefined;
      if (!m || !LABEL_KEY.test(m[1]!) || !LABEL_VALUE.test(m[2] ?? '') || !effect || !EFFECTS.includes(effect)) {
        throw new UsageError(`--taints: "${part}" is not a taint (expected key=value:Effect with Effect one of ${EFFECTS.join(', ')})`);
      }
      return m[2] === undefined ? { key: m[1]!, effect } : { key: m[1]!, value: m[2], effect };
    });
}

/** A /16 or larger IPv4 range written as a.b.c.d/N, aligned, so that it holds /24s. */
export function parseClusterCIDR(text: string): string {
  const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)\/(\d+)$/.exec(text.trim());
  const octets = m ? m.slice(1, 5).map(Number) : [];
  const bits = m ? Number(m[5]) : NaN;
  if (!m || octets.some((o) => o > 255) || bits < 8 || bits > 23) {
    throw new UsageError(`--cluster-cidr must be an IPv4 range from /8 to /23 such as 10.244.0.0/16, not "${text}"`);
  }
  const addr = octets.reduce((a, o) => a * 256 + o, 0);
  if (addr % 2 ** (32 - bits) !== 0) throw new UsageError(`--cluster-cidr "${text}" has host bits set`);
  return text.trim();
}

/** The service range: an aligned IPv4 range from /8 to /28 that does not overlap the pods' range. */
export function parseServiceCIDR(text: string, clusterCIDR: string): string {
  const range = parseServiceRange(text);
  if (!range) throw new UsageError(`--service-cidr must be an IPv4 range from /8 to /28 without host bits, such as 10.96.0.0/16, not "${text}"`);
  const pods = parseIpv4Cidr(clusterCIDR)!;
  const end = (r: { base: number; bits: number }) => r.base + 2 ** (32 - r.bits);
  if (range.base < end(pods) && pods.base < end(range))
    throw new UsageError(`--service-cidr ${text.trim()} overlaps --cluster-cidr ${clusterCIDR}: services and pods need separate ranges`);
  return text.trim();
}

/** `30000-32767`. */
export function parseNodePortRangeFlag(text: string): { min: number; max: number } {
  const range = parseNodePortRange(text);
  if (!range) throw new UsageError(`--service-node-port-range must be MIN-MAX with 1 <= MIN <= MAX <= 65535, such as 30000-32767, not "${text}"`);
  return range;
}

/** `cpu=32,memory=256Gi,pods=110` (any subset; the rest keep their defaults) -> what each fake node reports. */
export function parseFakeNodeCapacity(text: string): FakeNodeCapacity {
  const capacity = { ...DEFAULT_FAKE_NODE_CAPACITY };
  for (const part of text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const [key, value = ''] = part.split('=', 2).map((s) => s.trim()) as [string, string?];
    let n = NaN;
    try {
      n = parseQuantity(value);
    } catch {
      /* reported below */
    }
    if (key === 'cpu' && n > 0) capacity.cpuCores = n;
    else if (key === 'memory' && n >= 1024 ** 2) capacity.memoryBytes = Math.floor(n);
    else if (key === 'pods' && Number.isInteger(n) && n >= 1) capacity.pods = n;
    else
      throw new UsageError(
        `--fake-node-capacity: "${part}" is not a capacity (expected cpu=QUANTITY, memory=QUANTITY of at least 1Mi or pods=COUNT, e.g. cpu=32,memory=256Gi,pods=110)`,
      );
  }
  return capacity;
}

function parseFakeNodes(flags: RawDaemonFlags): { provider: WorkerConfig['provider']; fake?: FakeNodesConfig } {
  const provider = flags.provider?.trim();
  if (provider !== undefined && provider !== 'docker' && provider !== 'fake') {
    throw new UsageError(`--provider must be docker or fake, not "${flags.provider}"`);
  }
  let nodes: number | undefined;
  if (flags.fakeNodes !== undefined) {
    nodes = /^\d+$/.test(flags.fakeNodes.trim()) ? Number(flags.fakeNodes) : NaN;
    if (!(nodes >= 1 && nodes <= MAX_FAKE_NODES))
      throw new UsageError(`--fake-nodes must be a number of nodes from 1 to ${MAX_FAKE_NODES}, not "${flags.fakeNodes}"`);
    if (provider === 'docker') throw new UsageError('--fake-nodes hosts fake nodes: it goes with --provider=fake (or no --provider), not --provider=docker');
  }
  if (provider !== 'fake' && nodes === undefined) {
    if (flags.fakeNodeCapacity !== undefined) throw new UsageError('--fake-node-capacity is for fake nodes: add --fake-nodes N or --provider=fake');
    if (flags.fakeNodeHeartbeat !== undefined) throw new UsageError('--fake-node-heartbeat is for fake nodes: add --fake-nodes N or --provider=fake');
    return { provider: 'docker' };
  }
  const heartbeat = flags.fakeNodeHeartbeat === undefined ? 10 : /^\d+$/.test(flags.fakeNodeHeartbeat.trim()) ? Number(flags.fakeNodeHeartbeat) : NaN;
  if (!(heartbeat >= 1 && heartbeat <= 3600))
    throw new UsageError(`--fake-node-heartbeat must be a number of seconds from 1 to 3600, not "${flags.fakeNodeHeartbeat}"`);
  return {
    provider: 'fake',
    fake: { ...(nodes === undefined ? {} : { nodes }), capacity: parseFakeNodeCapacity(flags.fakeNodeCapacity ?? ''), heartbeatSeconds: heartbeat },
  };
}

/** least-allocated (the default), fewest-pods, balanced or round-robin. */
export function parseSchedulerPolicy(text: string): SchedulerPolicy {
  const policy = text.trim();
  if (!(POLICIES as readonly string[]).includes(policy)) throw new UsageError(`--scheduler-policy must be one of ${POLICIES.join(', ')}, not "${text}"`);
  return policy as SchedulerPolicy;
}

/** An http(s) URL of a Python package index (PEP 503 simple API), e.g. http://10.0.0.5:8080/simple. */
export function parsePipIndexUrl(text: string): string {
  let url: URL | undefined;
  try {
    url = new URL(text.trim());
  } catch {
    /* reported below */
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new UsageError(`--pip-index-url must be an http:// or https:// URL of a package index, such as http://10.0.0.5:8080/simple, not "${text}"`);
  }
  return text.trim();
}

/** A node name: a DNS-1123 subdomain. */
function parseNodeName(text: string): string {
  const name = text.trim().toLowerCase();
  if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(name) || name.length > 253) {
    throw new UsageError(`--name "${text}" is not a valid node name (lower-case letters, digits, '-' and '.')`);
  }
  return name;
}

/** --audit-log-path and its rotation (kube-apiserver's flags); undefined without a path. */
export function parseAuditLog(flags: Pick<RawDaemonFlags, 'auditLogPath' | 'auditLogMaxSize' | 'auditLogMaxBackup'>): MasterConfig['auditLog'] {
  const maxSizeMB = parseCount('audit-log-maxsize', flags.auditLogMaxSize ?? '100');
  const maxBackups = parseCount('audit-log-maxbackup', flags.auditLogMaxBackup ?? '10');
  if (flags.auditLogPath === undefined) return undefined;
  const path = flags.auditLogPath.trim();
  if (!path) throw new UsageError('--audit-log-path must name a file, or - for stdout');
  return { path: path === '-' ? '-' : resolve(path), maxSizeMB, maxBackups };
}

/** --etcd-cafile/--etcd-certfile/--etcd-keyfile: for --etcd-endpoints only; a cert needs its key and the other way round. */
export function parseEtcdTLS(flags: Pick<RawDaemonFlags, 'etcdEndpoints' | 'etcdCAFile' | 'etcdCertFile' | 'etcdKeyFile'>): MasterConfig['etcdTLS'] {
  const { etcdCAFile: caFile, etcdCertFile: certFile, etcdKeyFile: keyFile } = flags;
  if (caFile === undefined && certFile === undefined && keyFile === undefined) return undefined;
  if (flags.etcdEndpoints === undefined)
    throw new UsageError(
      '--etcd-cafile, --etcd-certfile and --etcd-keyfile are for an external etcd (--etcd-endpoints); the managed etcd has its own certificates',
    );
  if ((certFile === undefined) !== (keyFile === undefined)) throw new UsageError('--etcd-certfile and --etcd-keyfile go together: give both or neither');
  return {
    ...(caFile !== undefined ? { caFile: resolve(caFile) } : {}),
    ...(certFile !== undefined ? { certFile: resolve(certFile) } : {}),
    ...(keyFile !== undefined ? { keyFile: resolve(keyFile) } : {}),
  };
}

/** Validates the parsed flags; throws UsageError with a message for humans. */
/** The join token from --token, else --token-file, else MINIK8S_JOIN_TOKEN; undefined when none gives one. */
export function joinTokenOf(flags: Pick<RawDaemonFlags, 'token' | 'tokenFile' | 'tokenEnv'>): string | undefined {
  if (flags.token) return flags.token;
  if (flags.tokenFile) {
    let text: string;
    try {
      text = readFileSync(flags.tokenFile, 'utf8');
    } catch (err) {
      throw new UsageError(`--token-file: cannot read ${flags.tokenFile}: ${(err as Error).message}`);
    }
    const token = text.trim();
    if (!token) throw new UsageError(`--token-file: ${flags.tokenFile} is empty`);
    return token;
  }
  return flags.tokenEnv?.trim() || undefined;
}

export function toDaemonConfig(rawFlags: RawDaemonFlags): DaemonConfig {
  const flags = { ...rawFlags, token: joinTokenOf(rawFlags) };
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
  if (flags.activatorAddress !== undefined && isIP(flags.activatorAddress) === 0)
    throw new UsageError(`--activator-address must be an IP address such as 0.0.0.0 or 127.0.0.1, not "${flags.activatorAddress}"`);
  const master = roles.includes('master');
  const worker = roles.includes('worker');
  if (worker && !master) {
    if (!flags.server) throw new UsageError("--role=worker needs --server URL (the master's API, e.g. http://10.0.0.1:6443)");
    if (!flags.token && !flags.storedCredential)
      throw new UsageError(
        '--role=worker needs a join token for its first start: --token-file FILE or the MINIK8S_JOIN_TOKEN environment variable (the master writes its join command to DATA_DIR/join-command; or run "minik8s token create" there); later starts use the node credential kept in --data-dir',
      );
  }
  if (master && (flags.server || rawFlags.token || rawFlags.tokenFile)) {
    throw new UsageError('--server and --token are for --role=worker alone; a master,worker joins its own master');
  }
  if (flags.server) {
    let url: URL | undefined;
    try {
      url = new URL(flags.server);
    } catch {
      /* reported below */
    }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:'))
      throw new UsageError(`--server "${flags.server}" is not a URL such as http://10.0.0.1:6443`);
  }
  if (flags.nodeIP !== undefined && isIP(flags.nodeIP) !== 4) throw new UsageError(`--node-ip must be an IPv4 address, not "${flags.nodeIP}"`);
  if (flags.kubeletAddress !== undefined && isIP(flags.kubeletAddress) === 0)
    throw new UsageError(`--kubelet-address must be an IP address, not "${flags.kubeletAddress}"`);
  const bridge = flags.bridge ?? 'minik8s0';
  if (!/^[A-Za-z0-9][-A-Za-z0-9_.]{0,14}$/.test(bridge)) throw new UsageError(`--bridge "${bridge}" must be a network interface name of at most 15 characters`);
  if (flags.dockerHost !== undefined && !/^(unix:\/\/\/|\/|tcp:\/\/|http:\/\/)/.test(flags.dockerHost)) {
    throw new UsageError(`--docker-host "${flags.dockerHost}" must look like unix:///var/run/docker.sock or tcp://HOST:PORT`);
  }
  if (flags.overlay !== undefined && flags.overlay !== 'vxlan' && flags.overlay !== 'none') {
    throw new UsageError(`--overlay must be vxlan or none, not "${flags.overlay}"`);
  }
  if (flags.proxy !== undefined && flags.proxy !== 'iptables' && flags.proxy !== 'none') {
    throw new UsageError(`--proxy must be iptables or none, not "${flags.proxy}"`);
  }
  if (flags.dns !== undefined && flags.dns !== 'on' && flags.dns !== 'off') throw new UsageError(`--dns must be on or off, not "${flags.dns}"`);
  if (flags.clusterDNS !== undefined && isIP(flags.clusterDNS) !== 4)
    throw new UsageError(`--cluster-dns must be an IPv4 address such as 10.96.0.10, not "${flags.clusterDNS}"`);
  let dnsUpstreams: Upstream[] | undefined;
  try {
    dnsUpstreams = flags.dnsUpstream === undefined ? undefined : parseUpstreamList(flags.dnsUpstream);
  } catch (err) {
    throw new UsageError(`--dns-upstream: ${(err as Error).message}`);
  }
  const fake = parseFakeNodes(flags);
  // Fake pods have no network to join up: the overlay is off for fake nodes.
  if (fake.provider === 'fake' && flags.overlay === 'vxlan')
    throw new UsageError('--overlay=vxlan needs real pods: fake nodes (--provider=fake, --fake-nodes) run with no overlay');
  if (fake.provider === 'fake' && flags.dns === 'on')
    throw new UsageError('--dns=on needs real pods: fake nodes (--provider=fake, --fake-nodes) run no DNS server');
  if (fake.provider === 'fake' && flags.proxy === 'iptables')
    throw new UsageError('--proxy=iptables needs real pods: fake nodes (--provider=fake, --fake-nodes) run with no proxy');
  if (fake.fake?.nodes !== undefined && flags.name !== undefined && flags.name.trim().length + 1 + String(fake.fake.nodes - 1).length > 253) {
    throw new UsageError(`--name "${flags.name}" is too long to prefix the fake nodes' names (NAME-N must fit in 253 characters)`);
  }
  return {
    roles,
    master: {
      dataDir: resolve(flags.dataDir),
      address: flags.address,
      port: parsePort('port', flags.port),
      etcdEndpoints: flags.etcdEndpoints === undefined ? undefined : parseEndpoints(flags.etcdEndpoints),
      // The peer port is the next one, so the client port must leave room for it.
      etcdPort: parsePort('etcd-port', flags.etcdPort, 65534),
      ...(parseEtcdTLS(flags) ? { etcdTLS: parseEtcdTLS(flags) } : {}),
      secretsEncryption: flags.secretsEncryption ?? true,
      ...(parseAuditLog(flags) ? { auditLog: parseAuditLog(flags) } : {}),
      writeClientConfig: flags.writeConfig,
      insecureHttp: flags.insecureHttp ?? false,
      tlsSans: (flags.tlsSan ?? [])
        .flatMap((v) => v.split(','))
        .map((v) => v.trim())
        .filter((v) => v.length > 0),
      registryPort: flags.registry === false ? undefined : parsePort('registry-port', flags.registryPort ?? '5000'),
      clusterCIDR: parseClusterCIDR(flags.clusterCIDR ?? '10.244.0.0/16'),
      serviceCIDR: parseServiceCIDR(flags.serviceCIDR ?? '10.96.0.0/16', parseClusterCIDR(flags.clusterCIDR ?? '10.244.0.0/16')),
      nodePortRange: parseNodePortRangeFlag(flags.serviceNodePortRange ?? '30000-32767'),
      schedulerPolicy: parseSchedulerPolicy(flags.schedulerPolicy ?? 'least-allocated'),
      disableScheduler: flags.disableScheduler ?? false,
      nodeMonitorGracePeriodSeconds: parseSeconds('node-monitor-grace-period', flags.nodeMonitorGracePeriod ?? '40', 1),
      defaultTolerationSeconds: parseSeconds('default-toleration-seconds', flags.defaultTolerationSeconds ?? '300', 0),
      hpaSyncPeriodSeconds: parseSeconds('hpa-sync-period', flags.hpaSyncPeriod ?? '15', 1),
      ...parseLeaderElection(flags),
      ...(flags.dockerHost !== undefined ? { dockerHost: flags.dockerHost } : {}),
      ...(flags.dockerCertsDir !== undefined ? { dockerCertsDir: resolve(flags.dockerCertsDir) } : {}),
      ...(flags.pipIndexUrl !== undefined ? { pipIndexUrl: parsePipIndexUrl(flags.pipIndexUrl) } : {}),
      activatorPort: parsePort('activator-port', flags.activatorPort ?? '8090'),
      ...(flags.activatorAddress !== undefined ? { activatorAddress: flags.activatorAddress } : {}),
      podRoutes: !worker,
      ...(flags.maxConnections !== undefined ? { maxConnections: parseCount('max-connections', flags.maxConnections, 1) } : {}),
      maxRequestsInFlight: parseCount('max-requests-inflight', flags.maxRequestsInflight ?? '400', 0),
      maxMutatingRequestsInFlight: parseCount('max-mutating-requests-inflight', flags.maxMutatingRequestsInflight ?? '200', 0),
    },
    worker: {
      server: flags.server,
      joinToken: flags.token,
      // With --fake-nodes the name is the prefix of the fake nodes' names.
      name: parseNodeName(flags.name ?? (fake.fake?.nodes !== undefined ? 'fake-node' : hostname())),
      nodeIP: flags.nodeIP,
      labels: parseLabels(flags.labels ?? ''),
      taints: parseTaints(flags.taints ?? ''),
      dockerHost: flags.dockerHost,
      ...(flags.dockerCertsDir !== undefined ? { dockerCertsDir: resolve(flags.dockerCertsDir) } : {}),
      dataDir: resolve(flags.dataDir),
      kubeletAddress: flags.kubeletAddress ?? '0.0.0.0',
      kubeletPort: parsePort('kubelet-port', flags.kubeletPort ?? '10250'),
      bridgeName: bridge,
      overlay: flags.overlay === 'none' || fake.provider === 'fake' ? 'none' : 'vxlan',
      proxy: flags.proxy === 'none' || fake.provider === 'fake' ? 'none' : 'iptables',
      dns: flags.dns === 'off' || fake.provider === 'fake' ? 'off' : 'on',
      clusterDNS: flags.clusterDNS ?? '10.96.0.10',
      ...(dnsUpstreams && dnsUpstreams.length > 0 ? { dnsUpstreams } : {}),
      ...fake,
    },
  };
}
