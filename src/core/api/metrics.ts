// metrics.k8s.io/v1beta1 objects (NodeMetrics, PodMetrics) built from kubelet Summaries, and the group's discovery documents.

export const METRICS_GROUP = 'metrics.k8s.io';
export const METRICS_VERSION = 'v1beta1';
export const METRICS_API_VERSION = `${METRICS_GROUP}/${METRICS_VERSION}`;
/** The span each figure averages over, as metrics-server reports it. */
export const METRICS_WINDOW = '10s';

/** The parts of a kubelet Summary (GET /stats/summary) that metrics are made from. */
export interface SummaryLike {
  node?: { nodeName?: string; cpu?: { time?: string; usageNanoCores?: number }; memory?: { time?: string; workingSetBytes?: number } };
  pods?: {
    podRef?: { name?: string; namespace?: string; uid?: string };
    cpu?: { time?: string; usageNanoCores?: number };
    containers?: { name?: string; cpu?: { time?: string; usageNanoCores?: number }; memory?: { workingSetBytes?: number } }[];
  }[];
}

export interface Usage {
  cpu: string;
  memory: string;
}

export interface NodeMetrics {
  kind: 'NodeMetrics';
  apiVersion: typeof METRICS_API_VERSION;
  metadata: { name: string; creationTimestamp: string; labels?: Record<string, string> };
  timestamp: string;
  window: string;
  usage: Usage;
}

export interface PodMetrics {
  kind: 'PodMetrics';
  apiVersion: typeof METRICS_API_VERSION;
  metadata: { name: string; namespace: string; creationTimestamp: string };
  timestamp: string;
  window: string;
  containers: { name: string; usage: Usage }[];
}

/** RFC 3339 at whole seconds, as Kubernetes writes metav1.Time. */
export function wholeSeconds(time: string): string {
  return time.replace(/\.\d+Z$/, 'Z');
}

/** CPU in millicores, rounded up so a busy-but-small container never shows 0 ("12m"). */
export function cpuQuantity(nanoCores: number | undefined): string {
  const n = Math.max(0, nanoCores ?? 0);
  return `${Math.ceil(n / 1e6)}m`;
}

/** Memory in KiB, rounded up ("3456Ki"). */
export function memoryQuantity(bytes: number | undefined): string {
  const b = Math.max(0, bytes ?? 0);
  return `${Math.ceil(b / 1024)}Ki`;
}

export function nodeMetrics(nodeName: string, summary: SummaryLike, now: string, labels?: Record<string, string>): NodeMetrics {
  const node = summary.node ?? {};
  return {
    kind: 'NodeMetrics',
    apiVersion: METRICS_API_VERSION,
    metadata: { name: nodeName, creationTimestamp: wholeSeconds(now), ...(labels && Object.keys(labels).length ? { labels } : {}) },
    timestamp: wholeSeconds(node.cpu?.time ?? node.memory?.time ?? now),
    window: METRICS_WINDOW,
    usage: { cpu: cpuQuantity(node.cpu?.usageNanoCores), memory: memoryQuantity(node.memory?.workingSetBytes) },
  };
}

/** One PodMetrics per pod of the Summary (optionally of one namespace), skipping entries without a name. */
export function podMetrics(summary: SummaryLike, now: string, namespace?: string): PodMetrics[] {
  const out: PodMetrics[] = [];
  for (const pod of summary.pods ?? []) {
    const name = pod.podRef?.name;
    const ns = pod.podRef?.namespace;
    if (!name || !ns || (namespace !== undefined && ns !== namespace)) continue;
    out.push({
      kind: 'PodMetrics',
      apiVersion: METRICS_API_VERSION,
      metadata: { name, namespace: ns, creationTimestamp: wholeSeconds(now) },
      timestamp: wholeSeconds(pod.cpu?.time ?? now),
      window: METRICS_WINDOW,
      containers: (pod.containers ?? [])
        .filter((c) => c.name)
        .map((c) => ({
          name: c.name!,
          usage: { cpu: cpuQuantity(c.cpu?.usageNanoCores), memory: memoryQuantity(c.memory?.workingSetBytes) },
        })),
    });
  }
  return out;
}

/** Lists sorted by namespace and name, so output does not depend on which kubelet answered first. */
export function metricsList<T extends { metadata: { name: string; namespace?: string } }>(kind: 'NodeMetricsList' | 'PodMetricsList', items: T[]): unknown {
  const key = (i: T) => `${i.metadata.namespace ?? ''}/${i.metadata.name}`;
  return { kind, apiVersion: METRICS_API_VERSION, metadata: {}, items: [...items].sort((a, b) => key(a).localeCompare(key(b))) };
}

export function metricsResourceList(): unknown {
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: METRICS_API_VERSION,
    resources: [
      { name: 'nodes', singularName: '', namespaced: false, kind: 'NodeMetrics', verbs: ['get', 'list'] },
      { name: 'pods', singularName: '', namespaced: true, kind: 'PodMetrics', verbs: ['get', 'list'] },
    ],
  };
}

export function metricsGroup(): unknown {
  const gv = { groupVersion: METRICS_API_VERSION, version: METRICS_VERSION };
  return { name: METRICS_GROUP, versions: [gv], preferredVersion: gv };
}
