// What the kubelet reports on its Node: capacity, allocatable, addresses, node info, and the heartbeat conditions. Pure.
import { nodeMaySetLabel } from '../../core/api/node-labels.js';
import type { Condition } from '../../core/api/meta.js';
import type { NodeStatus } from '../../core/api/node.js';
import { VERSION } from '../../core/version.js';
import type { RuntimeInfo } from '../../runtime/provider.js';

/** Kubernetes' default --max-pods. */
export const DEFAULT_MAX_PODS = 110;

export interface NodeStatusInput {
  info: RuntimeInfo;
  nodeIP: string;
  hostname: string;
  kubeletPort: number;
  now: Date;
  /** What the Node reported before, so unchanged conditions keep their lastTransitionTime. */
  previous?: NodeStatus;
  maxPods?: number;
  /** Memory kept back from pods for the system and the worker itself (default: 5% up to 1 GiB, as a kube-reserved would). */
  reservedMemoryBytes?: number;
  machineID?: string;
  bootID?: string;
  /** Set when the container runtime did not answer: the node is then not Ready (its pods cannot be kept running). */
  runtimeError?: string;
}

function condition(type: string, healthy: boolean, reason: string, message: string, input: NodeStatusInput): Condition {
  // Ready is good when True; the pressure conditions are good when False.
  const status = (type === 'Ready') === healthy ? 'True' : 'False';
  const before = input.previous?.conditions?.find((c) => c.type === type);
  const now = input.now.toISOString();
  return {
    type,
    status,
    reason,
    message,
    lastHeartbeatTime: now,
    lastTransitionTime: before?.status === status && before.lastTransitionTime ? before.lastTransitionTime : now,
  };
}

function mebibytes(bytes: number): string {
  return `${Math.floor(bytes / 1024)}Ki`;
}

/** The Node status the kubelet posts at registration and with every heartbeat. */
export function nodeStatus(input: NodeStatusInput): NodeStatus {
  const { info } = input;
  const maxPods = input.maxPods ?? DEFAULT_MAX_PODS;
  const reserved = input.reservedMemoryBytes ?? Math.min(Math.floor(info.memoryBytes * 0.05), 1024 ** 3);
  return {
    capacity: { cpu: String(info.cpuCores), memory: mebibytes(info.memoryBytes), pods: String(maxPods) },
    allocatable: { cpu: String(info.cpuCores), memory: mebibytes(Math.max(0, info.memoryBytes - reserved)), pods: String(maxPods) },
    conditions: [
      condition('MemoryPressure', true, 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available', input),
      condition('DiskPressure', true, 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure', input),
      condition('PIDPressure', true, 'KubeletHasSufficientPID', 'kubelet has sufficient PID available', input),
      input.runtimeError === undefined
        ? condition('Ready', true, 'KubeletReady', 'kubelet is posting ready status', input)
        : condition('Ready', false, 'KubeletNotReady', `container runtime is down: ${input.runtimeError}`, input),
    ],
    addresses: [
      { type: 'InternalIP', address: input.nodeIP },
      { type: 'Hostname', address: input.hostname },
    ],
    daemonEndpoints: { kubeletEndpoint: { Port: input.kubeletPort } },
    nodeInfo: {
      ...(input.machineID ? { machineID: input.machineID, systemUUID: input.machineID } : {}),
      ...(input.bootID ? { bootID: input.bootID } : {}),
      kernelVersion: info.kernelVersion,
      osImage: info.osImage,
      containerRuntimeVersion: info.runtimeVersion,
      kubeletVersion: `v${VERSION}`,
      kubeProxyVersion: `v${VERSION}`,
      operatingSystem: 'linux',
      architecture: info.architecture,
    },
  };
}

export interface NodeMetaInput {
  nodeName: string;
  architecture: string;
  /** Labels from --labels; they win over the well-known ones. */
  labels: Record<string, string>;
}

/**
 * The merge patch the kubelet applies to its Node's labels at every start: only labels a node may
 * set on itself (node restriction). Taints travel with the first join instead, when the master
 * creates the Node (the join refuses --labels a node may not set); later an admin changes them.
 */
export function nodeMetaPatch(input: NodeMetaInput): { metadata: { labels: Record<string, string> } } {
  const labels: Record<string, string> = {
    'kubernetes.io/hostname': input.nodeName,
    'kubernetes.io/os': 'linux',
    'kubernetes.io/arch': input.architecture,
    ...input.labels,
  };
  return { metadata: { labels: Object.fromEntries(Object.entries(labels).filter(([k]) => nodeMaySetLabel(k))) } };
}
