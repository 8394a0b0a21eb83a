// The master's resource metrics for the autoscaler: the kubelet Summaries of the pods' nodes, read as metrics.k8s.io's PodMetrics.
import { METRICS_WINDOW, podMetrics, type SummaryLike } from '../../../core/api/metrics.js';
import { nodeKind, type Node } from '../../../core/api/node.js';
import type { Pod } from '../../../core/api/pod.js';
import { parseQuantity, toMilli } from '../../../core/api/quantity.js';
import type { Client } from '../../../core/client/client.js';
import { NotFoundError } from '../../../core/errors.js';
import { NO_METRICS_MESSAGE, type PodResourceSample, type ResourceMetricsClient } from './resource-metrics.js';

export interface KubeletResourceMetricsOptions {
  /** Reads the pods' Nodes. */
  client: Client;
  /**
   * A node's kubelet Summary (GET /stats/summary), undefined when the node is not Ready or its
   * kubelet fails or is slow: in the master, the API server's own call, with the admin token.
   */
  summary(node: Node): Promise<SummaryLike | undefined>;
  now?: () => Date;
}

const WINDOW_MS = Number.parseInt(METRICS_WINDOW, 10) * 1000;

/**
 * Asks only the kubelets of the nodes the pods are bound to, in parallel (a node that is not
 * Ready or does not answer is left out, its pods then have no sample), and turns their pods'
 * entries into samples through the same PodMetrics the metrics API serves.
 */
export class KubeletResourceMetrics implements ResourceMetricsClient {
  readonly #o: KubeletResourceMetricsOptions;

  constructor(options: KubeletResourceMetricsOptions) {
    this.#o = options;
  }

  async podSamples(namespace: string, pods: readonly Pod[]): Promise<Map<string, PodResourceSample>> {
    const uids = new Map<string, string | undefined>();
    const nodeNames = new Set<string>();
    for (const pod of pods) {
      if (!pod.spec.nodeName) continue;
      uids.set(pod.metadata.name!, pod.metadata.uid);
      nodeNames.add(pod.spec.nodeName);
    }
    const summaries = await Promise.all(
      [...nodeNames].map(async (name) => {
        let node: Node;
        try {
          node = (await this.#o.client.get(nodeKind, { name })) as Node;
        } catch (err) {
          if (err instanceof NotFoundError) return undefined;
          throw err;
        }
        return this.#o.summary(node);
      }),
    );
    const now = (this.#o.now ?? (() => new Date()))().toISOString();
    const samples = new Map<string, PodResourceSample>();
    for (const summary of summaries) {
      if (!summary) continue;
      // Only the pods asked about, and not an older pod of the same name.
      const mine: SummaryLike = {
        pods: (summary.pods ?? []).filter(
          (p) => p.podRef?.namespace === namespace && uids.has(p.podRef.name ?? '') && (!p.podRef.uid || uids.get(p.podRef.name!) === p.podRef.uid),
        ),
      };
      for (const m of podMetrics(mine, now, namespace)) {
        samples.set(m.metadata.name, {
          timestampMs: Date.parse(m.timestamp),
          windowMs: WINDOW_MS,
          containers: m.containers.map((c) => ({ name: c.name, cpuMilli: toMilli(c.usage.cpu), memoryBytes: parseQuantity(c.usage.memory) })),
        });
      }
    }
    if (samples.size === 0) throw new Error(NO_METRICS_MESSAGE);
    return samples;
  }
}
