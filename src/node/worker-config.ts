// The worker's settings, as the daemon's flags give them (src/daemon/daemon-config.ts parses and checks them).
import type { Upstream } from '../net/dns/resolv-conf.js';

export interface WorkerConfig {
  /** The API server, e.g. http://10.0.0.1:6443; undefined when the master runs in the same process. */
  server?: string;
  /** The join token; traded for a node credential on the first start. */
  joinToken?: string;
  /** The node's name (default: the host name). */
  name: string;
  /** The address other nodes and the master reach this node at; undefined picks the one that routes to the server. */
  nodeIP?: string;
  labels: Record<string, string>;
  taints: { key: string; value?: string; effect: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute' }[];
  /** unix:///path or tcp://host:port (default: DOCKER_HOST or /var/run/docker.sock). */
  dockerHost?: string;
  /** Where the engine reads registry CAs (default /etc/docker/certs.d): the worker puts the pinned cluster CA there for the master's registry. */
  dockerCertsDir?: string;
  /** Worker state: the node credential and emptyDir volumes live under DATA_DIR/kubelet. */
  dataDir: string;
  kubeletAddress: string;
  kubeletPort: number;
  /** The Docker network (and Linux bridge) pods attach to. */
  bridgeName: string;
  /** How pods reach other nodes' pods: a VXLAN device kept in step with the Nodes, or nothing (workers sharing one network namespace). */
  overlay: 'vxlan' | 'none';
  /** Service rules on this machine: kube-proxy-style iptables chains, or none (workers sharing one network namespace would fight over them). */
  proxy: 'iptables' | 'none';
  /** The node-local cluster DNS server (on the pod bridge's gateway address, port 53): on, or off (pods then use the node's resolvers). */
  dns: 'on' | 'off';
  /** The cluster DNS service address pods get as their nameserver (the proxy leads it to this node's DNS server). */
  clusterDNS: string;
  /** Where the DNS server forwards names outside the cluster; default: the nameservers of /etc/resolv.conf. */
  dnsUpstreams?: Upstream[];
  /** Where pods run: Docker, or the in-memory fake provider (no containers: pods just report Running). */
  provider: 'docker' | 'fake';
  /** Set when provider is fake. */
  fake?: FakeNodesConfig;
}

/** What each fake node reports as capacity (and allocatable: nothing is reserved on a node that runs nothing). */
export interface FakeNodeCapacity {
  cpuCores: number;
  memoryBytes: number;
  pods: number;
}

export interface FakeNodesConfig {
  /** Set by --fake-nodes: this process hosts that many nodes, named NAME-0 ... NAME-(N-1), kwok-style; unset: one fake node named NAME. */
  nodes?: number;
  capacity: FakeNodeCapacity;
  /** Seconds between each fake node's status posts (--fake-node-heartbeat, default 10, a kubelet's); keep it under the master's --node-monitor-grace-period. */
  heartbeatSeconds: number;
}

/** kwok's default fake node is 32 cores and 256 GiB; 110 pods is Kubernetes' --max-pods. */
export const DEFAULT_FAKE_NODE_CAPACITY: FakeNodeCapacity = { cpuCores: 32, memoryBytes: 256 * 1024 ** 3, pods: 110 };
/** More fake nodes than this in one process is a typo, not a plan (a /8 cluster CIDR holds 65,536 /24s). */
export const MAX_FAKE_NODES = 65_536;
