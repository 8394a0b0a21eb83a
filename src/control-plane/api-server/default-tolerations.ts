// Admission of new pods: Kubernetes' DefaultTolerationSeconds, which lets every pod ride out a short node outage before eviction.
import type { Pod, Toleration } from '../../core/api/pod.js';
import { TAINT_NOT_READY, TAINT_UNREACHABLE } from '../../core/api/taints.js';

/** Kubernetes' --default-not-ready-toleration-seconds and --default-unreachable-toleration-seconds. */
export const DEFAULT_TOLERATION_SECONDS = 300;

/** True when some toleration already covers the NoExecute taint `key` (an empty key or effect matches all). */
function covers(tolerations: readonly Toleration[], key: string): boolean {
  return tolerations.some((t) => (!t.key || t.key === key) && (!t.effect || t.effect === 'NoExecute'));
}

/**
 * Adds `not-ready` and `unreachable` NoExecute tolerations of `seconds` to a pod that has none
 * for those taints, so that its pods are evicted that long after their node is lost rather than
 * at once. Pods that say otherwise (tolerate forever, or for 0 s) keep what they say.
 */
export function withDefaultTolerations(pod: Pod, seconds: number): Pod {
  const tolerations = pod.spec.tolerations ?? [];
  const added: Toleration[] = [];
  for (const key of [TAINT_NOT_READY, TAINT_UNREACHABLE]) {
    if (!covers(tolerations, key)) added.push({ key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: seconds });
  }
  if (added.length === 0) return pod;
  return { ...pod, spec: { ...pod.spec, tolerations: [...tolerations, ...added] } };
}
