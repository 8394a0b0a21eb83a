// Taints and tolerations: Kubernetes' matching rule and the well-known taints the node lifecycle reconciler sets.
import type { Taint } from './node.js';
import type { Toleration } from './pod.js';

/** The node reports Ready=False. */
export const TAINT_NOT_READY = 'node.kubernetes.io/not-ready';
/** The node stopped posting status (Ready=Unknown). */
export const TAINT_UNREACHABLE = 'node.kubernetes.io/unreachable';

/**
 * Kubernetes' ToleratesTaint: an empty effect matches every effect; an empty key with
 * `Exists` matches every taint; `Equal` (the default operator) compares values.
 */
export function toleratesTaint(toleration: Toleration, taint: Pick<Taint, 'key' | 'value' | 'effect'>): boolean {
  if (toleration.effect && toleration.effect !== taint.effect) return false;
  if (toleration.key && toleration.key !== taint.key) return false;
  if (toleration.operator === 'Exists') return true;
  return (toleration.value ?? '') === (taint.value ?? '');
}

/** The first toleration that tolerates the taint, as Kubernetes picks it. */
export function matchingToleration(tolerations: readonly Toleration[], taint: Pick<Taint, 'key' | 'value' | 'effect'>): Toleration | undefined {
  return tolerations.find((t) => toleratesTaint(t, taint));
}

/** `key=value:Effect`, or `key:Effect`, as kubectl prints a taint. */
export function formatTaint(taint: Pick<Taint, 'key' | 'value' | 'effect'>): string {
  return `${taint.key}${taint.value ? `=${taint.value}` : ''}:${taint.effect}`;
}
