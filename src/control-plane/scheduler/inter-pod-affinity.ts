// Inter-pod affinity counted once per attempt: per topology value, how many placed pods each required term sees, so the filter is O(1) per node.
import { getOrCreate } from '../../core/get-or-create.js';
import type { ClusterView } from './scheduler-cache.js';
import { termMatches, type PodInfo } from './pod-info.js';

export interface AffinityState {
  /** Per required affinity term of the pod: topology value -> matching pods there. */
  affinityCounts: readonly Map<string, number>[];
  /** Per required anti-affinity term of the pod: topology value -> matching pods there. */
  antiAffinityCounts: readonly Map<string, number>[];
  /** Topology key -> value -> placed pods whose anti-affinity terms select this pod (the symmetric rule). */
  existingAntiAffinity: ReadonlyMap<string, ReadonlyMap<string, number>>;
  /**
   * No placed pod matches the pod's affinity terms but the pod matches them itself: the first
   * of a group that wants to be together may go anywhere (Kubernetes' rule, or no group could start).
   */
  affinityAllowsAnywhere: boolean;
}

function bump(map: Map<string, number>, key: string): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}

/**
 * Undefined when there is nothing to check (the pod has no required terms and no placed pod has
 * anti-affinity), which is the common case and costs nothing. Otherwise O(pods) once.
 */
export function affinityState(pod: PodInfo, cluster: ClusterView): AffinityState | undefined {
  const nsLabels = (ns: string) => cluster.namespaceLabels(ns);
  const existingAntiAffinity = new Map<string, Map<string, number>>();
  for (const other of cluster.podsWithAntiAffinity()) {
    if (other.key === pod.key) continue;
    const node = cluster.nodeOf(other.nodeName);
    if (!node) continue;
    for (const term of other.antiAffinity) {
      if (!termMatches(term, pod, nsLabels)) continue;
      const value = node.topologyValue(term.topologyKey);
      if (value === undefined) continue;
      bump(
        getOrCreate(existingAntiAffinity, term.topologyKey, () => new Map()),
        value,
      );
    }
  }
  if (pod.affinity.length === 0 && pod.antiAffinity.length === 0 && existingAntiAffinity.size === 0) return undefined;

  const affinityCounts = pod.affinity.map(() => new Map<string, number>());
  const antiAffinityCounts = pod.antiAffinity.map(() => new Map<string, number>());
  if (pod.affinity.length || pod.antiAffinity.length) {
    for (const node of cluster.nodes()) {
      for (const other of node.pods.values()) {
        if (other.key === pod.key) continue;
        pod.affinity.forEach((term, i) => {
          if (!termMatches(term, other, nsLabels)) return;
          const value = node.topologyValue(term.topologyKey);
          if (value !== undefined) bump(affinityCounts[i]!, value);
        });
        pod.antiAffinity.forEach((term, i) => {
          if (!termMatches(term, other, nsLabels)) return;
          const value = node.topologyValue(term.topologyKey);
          if (value !== undefined) bump(antiAffinityCounts[i]!, value);
        });
      }
    }
  }
  const noneAnywhere = affinityCounts.every((m) => m.size === 0);
  const affinityAllowsAnywhere = pod.affinity.length > 0 && noneAnywhere && pod.affinity.every((term) => termMatches(term, pod, nsLabels));
  return { affinityCounts, antiAffinityCounts, existingAntiAffinity, affinityAllowsAnywhere };
}
