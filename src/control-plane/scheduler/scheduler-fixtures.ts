// Pods and Nodes for the scheduler's unit tests, written the short way (only what a case is about).
import type { Node, Taint } from '../../core/api/node.js';
import type { Affinity, Container, Pod, Toleration } from '../../core/api/pod.js';
import { SchedulerCache } from './scheduler-cache.js';

export interface FixtureNode {
  name: string;
  cpu?: string;
  memory?: string;
  pods?: number;
  labels?: Record<string, string>;
  taints?: Taint[];
  ready?: boolean;
  unschedulable?: boolean;
  extra?: Record<string, string>;
}

export function node(n: FixtureNode): Node {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: n.name, labels: n.labels ?? {} },
    spec: { ...(n.taints ? { taints: n.taints } : {}), ...(n.unschedulable ? { unschedulable: true } : {}) },
    status: {
      allocatable: { cpu: n.cpu ?? '4', memory: n.memory ?? '8Gi', pods: String(n.pods ?? 110), ...n.extra },
      conditions: [{ type: 'Ready', status: n.ready === false ? 'False' : 'True' }],
    },
  } as Node;
}

export interface FixturePod {
  name: string;
  namespace?: string;
  uid?: string;
  cpu?: string;
  memory?: string;
  requests?: Record<string, string>;
  labels?: Record<string, string>;
  nodeName?: string;
  nodeSelector?: Record<string, string>;
  tolerations?: Toleration[];
  affinity?: Affinity;
  hostPorts?: { port: number; ip?: string; protocol?: 'TCP' | 'UDP' }[];
  phase?: 'Pending' | 'Running' | 'Succeeded' | 'Failed';
  containers?: Container[];
  initContainers?: Container[];
}

export function pod(p: FixturePod): Pod {
  const requests: Record<string, string> = { ...p.requests };
  if (p.cpu) requests.cpu = p.cpu;
  if (p.memory) requests.memory = p.memory;
  const container = {
    name: 'c',
    image: 'busybox:1.35',
    ...(Object.keys(requests).length ? { resources: { requests } } : {}),
    ...(p.hostPorts
      ? { ports: p.hostPorts.map((h) => ({ containerPort: 80, hostPort: h.port, protocol: h.protocol ?? 'TCP', ...(h.ip ? { hostIP: h.ip } : {}) })) }
      : {}),
  } as Container;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: p.name, namespace: p.namespace ?? 'default', uid: p.uid ?? `uid-${p.name}`, labels: p.labels ?? {} },
    spec: {
      containers: p.containers ?? [container],
      ...(p.initContainers ? { initContainers: p.initContainers } : {}),
      ...(p.nodeName ? { nodeName: p.nodeName } : {}),
      ...(p.nodeSelector ? { nodeSelector: p.nodeSelector } : {}),
      ...(p.tolerations ? { tolerations: p.tolerations } : {}),
      ...(p.affinity ? { affinity: p.affinity } : {}),
      schedulerName: 'default-scheduler',
    },
    status: { phase: p.phase ?? (p.nodeName ? 'Running' : 'Pending') },
  } as Pod;
}

/** A cache holding these nodes and (bound) pods. */
export function cacheOf(nodes: readonly Node[], pods: readonly Pod[] = []): SchedulerCache {
  const cache = new SchedulerCache();
  for (const n of nodes) cache.setNode(n);
  for (const p of pods) cache.updatePod(p);
  return cache;
}

/** Anti-affinity (or affinity) to pods labelled app=VALUE on the same node. */
export function sameNodeTerm(app: string) {
  return { labelSelector: { matchLabels: { app } }, topologyKey: 'kubernetes.io/hostname' };
}
