// Kubernetes' HPA replica calculator for resource metrics (cpu, memory): usage ratio, tolerance, and how unready, missing and finished pods count.
import type { Pod } from '../../../core/api/pod.js';
import { formatQuantity, parseQuantity, toMilli } from '../../../core/api/quantity.js';
import { podReadyCondition } from '../../../core/api/pod.js';

export type ResourceName = 'cpu' | 'memory';

/**
 * Values are kept in one unit per resource, integers as Kubernetes keeps them: cpu in
 * millicores (its MilliValue), memory in bytes. Utilization is a ratio, so the unit does not
 * change it; bytes rather than millibytes keep large sums exact in a double.
 */
export function resourceValue(resource: ResourceName, quantity: string | number): number {
  return resource === 'cpu' ? toMilli(quantity) : Math.ceil(parseQuantity(quantity));
}

/** A value back as a quantity for status: `250m`, `2`; memory to whole KiB (`120Mi`, `123457Ki`), as `top` shows it. */
export function formatResourceValue(resource: ResourceName, value: number): string {
  if (resource === 'cpu') return formatQuantity(Math.max(0, Math.round(value)) / 1000);
  return formatQuantity(Math.max(0, Math.round(value / 1024)) * 1024, { binary: true });
}

/** One pod's sample of one resource. */
export interface PodMetric {
  value: number;
  /** When the kubelet took it (ms since the epoch). */
  timestampMs: number;
  /** The span it averages over. */
  windowMs: number;
}

/** Samples by pod name. */
export type PodMetricsInfo = Map<string, PodMetric>;

/** How far the usage ratio may stray from 1 before the replica count changes (Kubernetes' default: 0.1 both ways). */
export interface Tolerances {
  scaleDown: number;
  scaleUp: number;
}

export function isWithinTolerance(t: Tolerances, ratio: number): boolean {
  return 1 - t.scaleDown <= ratio && ratio <= 1 + t.scaleUp;
}

export interface CalculatorTiming {
  now: number;
  /** Kubernetes' --horizontal-pod-autoscaler-cpu-initialization-period (5 min): a pod this young counts for cpu only once Ready and sampled since. */
  cpuInitializationPeriodMs?: number;
  /** Kubernetes' --horizontal-pod-autoscaler-initial-readiness-delay (30 s): an older pod not Ready that turned so this soon after start has never been Ready. */
  initialReadinessDelayMs?: number;
}

export const CPU_INITIALIZATION_PERIOD_MS = 5 * 60_000;
export const INITIAL_READINESS_DELAY_MS = 30_000;

export interface PodGroups {
  readyPodCount: number;
  /** Pending pods, and for cpu pods not yet Ready or sampled before they were: 0 on a scale-up, left out otherwise. */
  unready: Set<string>;
  /** Running pods without a sample: the target on a scale-down, 0 on a scale-up. */
  missing: Set<string>;
  /** Deleted and finished pods: not counted at all. */
  ignored: Set<string>;
}

const time = (t: string | null | undefined): number | undefined => {
  if (!t) return undefined;
  const ms = Date.parse(t);
  return Number.isNaN(ms) ? undefined : ms;
};

/** Kubernetes' groupPods. Succeeded pods are ignored like Failed ones: a finished pod uses nothing and will not run again. */
export function groupPods(pods: readonly Pod[], metrics: PodMetricsInfo, resource: ResourceName, timing: CalculatorTiming): PodGroups {
  const groups: PodGroups = { readyPodCount: 0, unready: new Set(), missing: new Set(), ignored: new Set() };
  const initPeriod = timing.cpuInitializationPeriodMs ?? CPU_INITIALIZATION_PERIOD_MS;
  const readinessDelay = timing.initialReadinessDelayMs ?? INITIAL_READINESS_DELAY_MS;
  for (const pod of pods) {
    const name = pod.metadata.name!;
    const phase = pod.status?.phase;
    if (pod.metadata.deletionTimestamp || phase === 'Failed' || phase === 'Succeeded') {
      groups.ignored.add(name);
      continue;
    }
    if (phase === 'Pending' || phase === undefined) {
      groups.unready.add(name);
      continue;
    }
    const metric = metrics.get(name);
    if (!metric) {
      groups.missing.add(name);
      continue;
    }
    if (resource === 'cpu') {
      const ready = podReadyCondition(pod);
      const started = time(pod.status?.startTime);
      let unready: boolean;
      if (!ready || started === undefined) {
        unready = true;
      } else {
        const transition = time(ready.lastTransitionTime) ?? started;
        if (started + initPeriod > timing.now) {
          // Young pods burn cpu starting up: count one only once Ready and sampled for a whole window since.
          unready = ready.status === 'False' || metric.timestampMs < transition + metric.windowMs;
        } else {
          // Older pods count unless they are not Ready and never have been.
          unready = ready.status === 'False' && started + readinessDelay > transition;
        }
      }
      if (unready) {
        groups.unready.add(name);
        continue;
      }
    }
    groups.readyPodCount++;
  }
  return groups;
}

/** Each pod's request for the resource (summed over its containers, or of one container); an error names the first container without one. */
export function podRequests(pods: readonly Pod[], resource: ResourceName, container?: string): Map<string, number> | { error: string } {
  const requests = new Map<string, number>();
  for (const pod of pods) {
    let sum = 0;
    for (const c of pod.spec.containers) {
      if (container !== undefined && c.name !== container) continue;
      const request = c.resources?.requests?.[resource];
      if (request === undefined) return { error: `missing request for ${resource} in container ${c.name} of Pod ${pod.metadata.name}` };
      sum += resourceValue(resource, request);
    }
    requests.set(pod.metadata.name!, sum);
  }
  return requests;
}

/** Kubernetes' GetResourceUtilizationRatio: utilization is a whole percent (truncated), the ratio is against the target percent. */
export function utilizationRatio(
  metrics: PodMetricsInfo,
  requests: ReadonlyMap<string, number>,
  targetUtilization: number,
): { ratio: number; utilization: number; rawAverage: number } | { error: string } {
  let metricsTotal = 0;
  let requestsTotal = 0;
  let entries = 0;
  for (const [name, metric] of metrics) {
    const request = requests.get(name);
    // Samples of pods we know no request for are extraneous.
    if (request === undefined) continue;
    metricsTotal += metric.value;
    requestsTotal += request;
    entries++;
  }
  if (requestsTotal === 0) return { error: 'no metrics returned matched known pods' };
  const utilization = Math.trunc((metricsTotal * 100) / requestsTotal);
  return { ratio: utilization / targetUtilization, utilization, rawAverage: Math.trunc(metricsTotal / entries) };
}

/** Kubernetes' GetMetricUsageRatio: the average sample against the target average. */
export function averageRatio(metrics: PodMetricsInfo, targetAverage: number): { ratio: number; average: number } {
  let total = 0;
  for (const m of metrics.values()) total += m.value;
  const average = Math.trunc(total / metrics.size);
  return { ratio: average / targetAverage, average };
}

export interface ReplicaInput {
  currentReplicas: number;
  resource: ResourceName;
  tolerances: Tolerances;
  /** The pods the target's selector picks. */
  pods: readonly Pod[];
  /** Samples of those pods (the calculator does not change it). */
  metrics: PodMetricsInfo;
  timing: CalculatorTiming;
  /** A ContainerResource metric: only this container counts. */
  container?: string;
}

export type UtilizationProposal = { replicas: number; utilization: number; rawAverage: number } | { error: string };
export type AverageProposal = { replicas: number; average: number } | { error: string };

const NO_PODS = 'no pods returned by selector while calculating replica count';
const NO_READY_METRICS = 'did not receive metrics for targeted pods (pods might be unready)';

/**
 * The rest of Kubernetes' algorithm once the first ratio is known: with no unready pod on a
 * scale-up and no missing sample, ceil(ratio x ready pods) unless within tolerance. Otherwise
 * missing pods are assumed at the target (scale-down) or at 0 (scale-up), unready pods at 0 on
 * a scale-up, and the ratio is taken again; any change of direction, or a change within
 * tolerance, keeps the current count.
 */
function settle(options: {
  input: ReplicaInput;
  groups: PodGroups;
  metrics: PodMetricsInfo;
  ratio: number;
  /** What a missing pod is assumed to use on a scale-down. */
  missingOnScaleDown: (pod: string) => number;
  ratioOf: (metrics: PodMetricsInfo) => number | { error: string };
}): number | { error: string } {
  const { input, groups, metrics, ratio } = options;
  const scaleUpWithUnready = groups.unready.size > 0 && ratio > 1;
  if (!scaleUpWithUnready && groups.missing.size === 0) {
    if (isWithinTolerance(input.tolerances, ratio)) return input.currentReplicas;
    return Math.ceil(ratio * groups.readyPodCount);
  }
  const filled: PodMetricsInfo = new Map(metrics);
  const stamp = { timestampMs: input.timing.now, windowMs: 0 };
  if (ratio < 1) for (const name of groups.missing) filled.set(name, { value: options.missingOnScaleDown(name), ...stamp });
  else if (ratio > 1) for (const name of groups.missing) filled.set(name, { value: 0, ...stamp });
  if (scaleUpWithUnready) for (const name of groups.unready) filled.set(name, { value: 0, ...stamp });
  const newRatio = options.ratioOf(filled);
  if (typeof newRatio !== 'number') return newRatio;
  if (isWithinTolerance(input.tolerances, newRatio) || (ratio < 1 && newRatio > 1) || (ratio > 1 && newRatio < 1)) return input.currentReplicas;
  const replicas = Math.ceil(newRatio * filled.size);
  // Counting more pods must not turn the direction around either.
  if ((newRatio < 1 && replicas > input.currentReplicas) || (newRatio > 1 && replicas < input.currentReplicas)) return input.currentReplicas;
  return replicas;
}

/** Only the samples of pods that count now (ready pods and, for memory, all running ones). */
function countedMetrics(input: ReplicaInput, groups: PodGroups): PodMetricsInfo {
  const counted: PodMetricsInfo = new Map();
  for (const [name, metric] of input.metrics) {
    if (!groups.ignored.has(name) && !groups.unready.has(name)) counted.set(name, metric);
  }
  return counted;
}

/** Kubernetes' GetResourceReplicas: a target average utilization (percent of the pods' requests). */
export function utilizationReplicas(input: ReplicaInput & { targetUtilization: number }): UtilizationProposal {
  if (input.pods.length === 0) return { error: NO_PODS };
  const groups = groupPods(input.pods, input.metrics, input.resource, input.timing);
  const metrics = countedMetrics(input, groups);
  if (metrics.size === 0) return { error: NO_READY_METRICS };
  const requests = podRequests(input.pods, input.resource, input.container);
  if (!(requests instanceof Map)) return requests;
  const first = utilizationRatio(metrics, requests, input.targetUtilization);
  if ('error' in first) return first;
  // Missing pods on a scale-down: 100% of their request, or the target when that is higher.
  const fallback = Math.max(100, input.targetUtilization);
  const replicas = settle({
    input,
    groups,
    metrics,
    ratio: first.ratio,
    missingOnScaleDown: (name) => Math.trunc(((requests.get(name) ?? 0) * fallback) / 100),
    ratioOf: (m) => {
      const r = utilizationRatio(m, requests, input.targetUtilization);
      return 'error' in r ? r : r.ratio;
    },
  });
  if (typeof replicas !== 'number') return replicas;
  return { replicas, utilization: first.utilization, rawAverage: first.rawAverage };
}

/** Kubernetes' GetRawResourceReplicas: a target average value per pod (e.g. 100Mi of memory). */
export function averageValueReplicas(input: ReplicaInput & { targetAverage: number }): AverageProposal {
  if (input.pods.length === 0) return { error: NO_PODS };
  const groups = groupPods(input.pods, input.metrics, input.resource, input.timing);
  const metrics = countedMetrics(input, groups);
  if (metrics.size === 0) return { error: NO_READY_METRICS };
  const first = averageRatio(metrics, input.targetAverage);
  const replicas = settle({
    input,
    groups,
    metrics,
    ratio: first.ratio,
    missingOnScaleDown: () => input.targetAverage,
    ratioOf: (m) => averageRatio(m, input.targetAverage).ratio,
  });
  if (typeof replicas !== 'number') return replicas;
  return { replicas, average: first.average };
}
