// Graceful pod deletion: a pod on a node is only marked, so its kubelet can stop the containers first.
import type { KubeObject } from '../../core/api/meta.js';

/**
 * The grace period a delete gives: 0 (remove now) for anything but a pod bound to a node;
 * for such a pod, the one asked for, else spec.terminationGracePeriodSeconds (default 30).
 * The kubelet deletes again with 0 once the containers have stopped.
 */
export function podGracePeriod(obj: KubeObject, requested: number | undefined): number {
  if (obj.kind !== 'Pod') return 0;
  const spec = obj.spec as { nodeName?: string; terminationGracePeriodSeconds?: number } | undefined;
  if (!spec?.nodeName) return 0;
  const phase = (obj.status as { phase?: string } | undefined)?.phase;
  // A finished pod has nothing left to stop.
  if (phase === 'Succeeded' || phase === 'Failed') return requested ?? 0;
  return Math.max(0, requested ?? spec.terminationGracePeriodSeconds ?? 30);
}
