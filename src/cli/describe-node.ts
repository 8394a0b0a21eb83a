// `minik8s describe node`: kubectl's layout for a Node: conditions, addresses, capacity, system info, its pods and what they request.
import { nodeRoles, type Node, type NodeStatus } from '../core/api/node.js';
import type { Pod } from '../core/api/pod.js';
import { formatQuantity, parseQuantity, toMilli } from '../core/api/quantity.js';
import { describeTime, type DescribeWriter } from './describe-writer.js';
import { ageSince, alignColumns } from './printers.js';

/** Requests and limits of a pod, summed over its containers (init containers are not running, so they do not count here). */
export function podResources(pod: Pod): { cpuRequests: number; cpuLimits: number; memoryRequests: number; memoryLimits: number } {
  let cpuRequests = 0;
  let cpuLimits = 0;
  let memoryRequests = 0;
  let memoryLimits = 0;
  for (const c of pod.spec.containers) {
    const requests = c.resources?.requests ?? {};
    const limits = c.resources?.limits ?? {};
    // As in Kubernetes, a limit without a request implies a request of the same size.
    const cpuReq = requests.cpu ?? limits.cpu;
    const memReq = requests.memory ?? limits.memory;
    if (cpuReq !== undefined) cpuRequests += toMilli(cpuReq);
    if (limits.cpu !== undefined) cpuLimits += toMilli(limits.cpu);
    if (memReq !== undefined) memoryRequests += parseQuantity(memReq);
    if (limits.memory !== undefined) memoryLimits += parseQuantity(limits.memory);
  }
  return { cpuRequests, cpuLimits, memoryRequests, memoryLimits };
}

/** `100m (5%)`: an amount with its share of the allocatable, rounded down as kubectl does. */
function share(text: string, amount: number, allocatable: number): string {
  const percent = allocatable > 0 ? Math.floor((amount / allocatable) * 100) : 0;
  return `${text} (${percent}%)`;
}

const cpuText = (milli: number) => (milli === 0 ? '0' : `${milli}m`);
const memoryText = (bytes: number) => (bytes === 0 ? '0' : formatQuantity(bytes, { binary: true }));

export function describeNode(w: DescribeWriter, node: Node, pods: readonly Pod[], now: Date): void {
  const status: NodeStatus = node.status ?? {};
  w.field(0, 'Roles', nodeRoles(node));
  w.field(0, 'CreationTimestamp', describeTime(node.metadata.creationTimestamp));
  const taints = (node.spec?.taints ?? []).map((t) => `${t.key}${t.value ? `=${t.value}` : ''}:${t.effect}`);
  w.field(0, 'Taints', taints);
  w.field(0, 'Unschedulable', String(Boolean(node.spec?.unschedulable)));

  const conditions = status.conditions ?? [];
  if (conditions.length) {
    w.section(0, 'Conditions');
    w.raw(
      1,
      alignColumns([
        ['Type', 'Status', 'LastHeartbeatTime', 'LastTransitionTime', 'Reason', 'Message'],
        ['----', '------', '-----------------', '------------------', '------', '-------'],
        ...conditions.map((c) => [
          String(c.type),
          String(c.status),
          describeTime(c.lastHeartbeatTime) ?? '',
          describeTime(c.lastTransitionTime) ?? '',
          String(c.reason ?? ''),
          String(c.message ?? ''),
        ]),
      ]),
    );
  } else {
    w.field(0, 'Conditions', '<none>');
  }
  const addresses = status.addresses ?? [];
  w.section(0, 'Addresses');
  for (const a of addresses) w.field(1, a.type, a.address);
  for (const [label, list] of [
    ['Capacity', status.capacity],
    ['Allocatable', status.allocatable],
  ] as const) {
    w.section(0, label);
    const resources = list ?? {};
    for (const k of Object.keys(resources).sort()) w.field(1, k, String(resources[k]));
  }
  const info: NonNullable<NodeStatus['nodeInfo']> = status.nodeInfo ?? {};
  w.section(0, 'System Info');
  for (const [label, key] of [
    ['Machine ID', 'machineID'],
    ['System UUID', 'systemUUID'],
    ['Boot ID', 'bootID'],
    ['Kernel Version', 'kernelVersion'],
    ['OS Image', 'osImage'],
    ['Operating System', 'operatingSystem'],
    ['Architecture', 'architecture'],
    ['Container Runtime Version', 'containerRuntimeVersion'],
    ['Kubelet Version', 'kubeletVersion'],
    ['Kube-Proxy Version', 'kubeProxyVersion'],
  ] as const) {
    w.field(1, label, info[key] ?? '');
  }
  w.field(0, 'PodCIDR', node.spec?.podCIDR);
  w.field(0, 'PodCIDRs', (node.spec?.podCIDRs ?? []).join(','));

  const running = pods.filter((p) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed');
  const allocatableCpu = status.allocatable?.cpu !== undefined ? toMilli(status.allocatable.cpu) : 0;
  const allocatableMemory = status.allocatable?.memory !== undefined ? parseQuantity(status.allocatable.memory) : 0;
  w.field(0, 'Non-terminated Pods', `(${running.length} in total)`);
  const totals = { cpuRequests: 0, cpuLimits: 0, memoryRequests: 0, memoryLimits: 0 };
  if (running.length) {
    const rows = running.map((p) => {
      const r = podResources(p);
      for (const k of Object.keys(totals) as (keyof typeof totals)[]) totals[k] += r[k];
      return [
        p.metadata.namespace ?? '',
        p.metadata.name ?? '',
        share(cpuText(r.cpuRequests), r.cpuRequests, allocatableCpu),
        share(cpuText(r.cpuLimits), r.cpuLimits, allocatableCpu),
        share(memoryText(r.memoryRequests), r.memoryRequests, allocatableMemory),
        share(memoryText(r.memoryLimits), r.memoryLimits, allocatableMemory),
        ageSince(p.metadata.creationTimestamp, now),
      ];
    });
    w.raw(
      1,
      alignColumns([
        ['Namespace', 'Name', 'CPU Requests', 'CPU Limits', 'Memory Requests', 'Memory Limits', 'Age'],
        ['---------', '----', '------------', '----------', '---------------', '-------------', '---'],
        ...rows,
      ]),
    );
  }
  w.section(0, 'Allocated resources');
  w.raw(
    1,
    `(Total limits may be over 100 percent, i.e., overcommitted.)\n${alignColumns([
      ['Resource', 'Requests', 'Limits'],
      ['--------', '--------', '------'],
      ['cpu', share(cpuText(totals.cpuRequests), totals.cpuRequests, allocatableCpu), share(cpuText(totals.cpuLimits), totals.cpuLimits, allocatableCpu)],
      [
        'memory',
        share(memoryText(totals.memoryRequests), totals.memoryRequests, allocatableMemory),
        share(memoryText(totals.memoryLimits), totals.memoryLimits, allocatableMemory),
      ],
    ])}`,
  );
}
