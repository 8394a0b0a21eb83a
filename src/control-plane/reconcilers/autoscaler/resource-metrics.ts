// What the autoscaler asks of a metrics source: the latest cpu and memory samples of some pods, per container.
import type { Pod } from '../../../core/api/pod.js';

export interface ContainerSample {
  name: string;
  /** Millicores. */
  cpuMilli: number;
  memoryBytes: number;
}

/** One pod's sample, as metrics.k8s.io's PodMetrics carries it. */
export interface PodResourceSample {
  /** When the kubelet took it (ms since the epoch). */
  timestampMs: number;
  /** The span the cpu figure averages over. */
  windowMs: number;
  containers: ContainerSample[];
}

/**
 * The resource metrics API as the controller sees it. The master's implementation asks the
 * kubelets of the pods' nodes (kubelet-metrics.ts); unit tests give a fake.
 */
export interface ResourceMetricsClient {
  /**
   * Samples of these pods (all of one namespace), by pod name; pods without one are left out.
   * Rejects when no sample at all can be had, with a message saying why.
   */
  podSamples(namespace: string, pods: readonly Pod[]): Promise<Map<string, PodResourceSample>>;
}

/** Kubernetes' wording when the metrics API returned nothing for the selector. */
export const NO_METRICS_MESSAGE = 'no metrics returned from resource metrics API';
