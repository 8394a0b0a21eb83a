// PodDisruptionBudget decisions, pure: a budget's status from its pods and their controllers' scale, and whether an eviction may go ahead.
import { isDeepStrictEqual } from 'node:util';
import { resolveIntOrPercent } from '../../core/api/deployment.js';
import type { Condition, OwnerReference } from '../../core/api/meta.js';
import {
  DISRUPTION_ALLOWED_CONDITION,
  INSUFFICIENT_PODS,
  SUFFICIENT_PODS,
  SYNC_FAILED,
  type PodDisruptionBudget,
  type PodDisruptionBudgetStatus,
} from '../../core/api/poddisruptionbudget.js';
import { isPodReady, type Pod } from '../../core/api/pod.js';
import { matches, selectorFromLabelSelector } from '../../core/api/selector.js';
import { ApiError } from '../../core/errors.js';
import { controllerRef } from './replicaset.js';

/** Kubernetes' DeletionTimeout: a granted eviction whose pod has not started going by then no longer counts. */
export const DISRUPTED_POD_TIMEOUT_MS = 2 * 60 * 1000;
/** What kube-apiserver answers an eviction the budget refuses with (and kubectl drain prints). */
export const EVICTION_REFUSED_MESSAGE = "Cannot evict pod as it would violate the pod's disruption budget.";

/** The pods a budget covers: its namespace's pods its selector matches (an empty selector matches all, a missing one none). */
export function podsOfBudget(pdb: PodDisruptionBudget, pods: readonly Pod[]): Pod[] {
  const ls = pdb.spec?.selector;
  if (!ls) return [];
  let selector: ReturnType<typeof selectorFromLabelSelector>;
  try {
    selector = selectorFromLabelSelector(ls);
  } catch {
    return [];
  }
  return pods.filter((p) => p.metadata.namespace === pdb.metadata.namespace && matches(selector, p.metadata.labels));
}

/** How many pods a controller wants (its scale), or undefined when the controller is unknown or has no scale. */
export type ScaleOf = (namespace: string, ref: OwnerReference) => number | undefined;

export interface DisruptionPlan {
  status: PodDisruptionBudgetStatus;
  /** When the oldest disrupted-pod entry expires (look again then). */
  recheckAfterMs?: number;
}

function condition(previous: readonly Condition[] | undefined, next: Omit<Condition, 'lastTransitionTime'>, now: Date): Condition[] {
  const old = previous?.find((c) => c.type === next.type);
  const same = old && old.status === next.status && old.reason === next.reason;
  const lastTransitionTime = same && old.lastTransitionTime ? old.lastTransitionTime : now.toISOString().replace(/\.\d{3}Z$/, 'Z');
  return [...(previous ?? []).filter((c) => c.type !== next.type), { ...next, lastTransitionTime }];
}

/**
 * Kubernetes' disruption controller for one budget. minAvailable as a number counts the
 * matching pods as expected; a percentage or maxUnavailable needs the scale of the pods'
 * controllers (one pod without a known scalable controller makes the sync fail, and then no
 * disruption is allowed). Healthy pods are Ready, not being deleted and not already granted an
 * eviction (disruptedPods, kept until the pod goes or two minutes pass).
 */
export function planDisruption(pdb: PodDisruptionBudget, pods: readonly Pod[], scaleOf: ScaleOf, now: Date): DisruptionPlan {
  const covered = podsOfBudget(pdb, pods);
  const nowMs = now.getTime();
  const disrupted: Record<string, string> = {};
  let recheckAfterMs: number | undefined;
  for (const [name, at] of Object.entries(pdb.status?.disruptedPods ?? {})) {
    const pod = covered.find((p) => p.metadata.name === name);
    const expires = Date.parse(at) + DISRUPTED_POD_TIMEOUT_MS;
    if (!pod || pod.metadata.deletionTimestamp || !(expires > nowMs)) continue;
    disrupted[name] = at;
    recheckAfterMs = Math.min(recheckAfterMs ?? Infinity, expires - nowMs);
  }
  const spec = pdb.spec ?? {};
  let expected = covered.length;
  let desired = 0;
  let failure: string | undefined;
  const needsScale = spec.maxUnavailable !== undefined || typeof spec.minAvailable === 'string';
  if (needsScale) {
    const seen = new Map<string, number>();
    for (const pod of covered) {
      const ref = controllerRef(pod);
      const scale = ref ? scaleOf(pdb.metadata.namespace!, ref) : undefined;
      if (ref === undefined || scale === undefined) {
        failure = `found no controllers for pod "${pod.metadata.name}"`;
        break;
      }
      seen.set(ref.uid, scale);
    }
    expected = [...seen.values()].reduce((a, b) => a + b, 0);
  }
  if (spec.maxUnavailable !== undefined) {
    desired = Math.max(0, expected - resolveIntOrPercent(spec.maxUnavailable, { total: expected, roundUp: true }));
  } else if (spec.minAvailable !== undefined) {
    desired = resolveIntOrPercent(spec.minAvailable, { total: expected, roundUp: true });
  }
  const healthy = covered.filter((p) => !p.metadata.deletionTimestamp && isPodReady(p) && !(p.metadata.name! in disrupted)).length;
  const allowed = failure ? 0 : Math.max(0, healthy - desired);
  const conditions = condition(
    pdb.status?.conditions,
    failure
      ? { type: DISRUPTION_ALLOWED_CONDITION, status: 'False', reason: SYNC_FAILED, message: failure }
      : allowed > 0
        ? { type: DISRUPTION_ALLOWED_CONDITION, status: 'True', reason: SUFFICIENT_PODS, message: '' }
        : { type: DISRUPTION_ALLOWED_CONDITION, status: 'False', reason: INSUFFICIENT_PODS, message: '' },
    now,
  );
  const status: PodDisruptionBudgetStatus = {
    ...(pdb.metadata.generation !== undefined ? { observedGeneration: pdb.metadata.generation } : {}),
    ...(Object.keys(disrupted).length > 0 ? { disruptedPods: disrupted } : {}),
    disruptionsAllowed: allowed,
    currentHealthy: healthy,
    desiredHealthy: desired,
    expectedPods: expected,
    conditions,
  };
  return { status, ...(recheckAfterMs !== undefined ? { recheckAfterMs } : {}) };
}

export function disruptionStatusChanged(pdb: PodDisruptionBudget, status: PodDisruptionBudgetStatus): boolean {
  return !isDeepStrictEqual(pdb.status ?? {}, status);
}

/** kube-apiserver's 429 for a refused eviction, the budget's reason as the cause. */
export function evictionRefused(causeMessage: string): ApiError {
  return new ApiError(429, 'TooManyRequests', EVICTION_REFUSED_MESSAGE, { causes: [{ reason: 'DisruptionBudget', message: causeMessage }] });
}

export type EvictionVerdict =
  /** Delete the pod; with `status`, first write it (guarded by the budget's resourceVersion). */
  { allow: true; status?: PodDisruptionBudgetStatus } | { allow: false; error: ApiError };

/**
 * The eviction subresource's check against the one budget covering the pod (Kubernetes'
 * checkAndDecrement): a budget the controller has not yet seen refuses; one with no
 * disruptions left refuses with its numbers; otherwise one disruption is taken and the pod
 * recorded in disruptedPods. Pods that are finished, or not Ready while the budget is healthy
 * (unhealthyPodEvictionPolicy IfHealthyBudget, or AlwaysAllow), go without taking one.
 */
export function evictionVerdict(pdb: PodDisruptionBudget, pod: Pod, now: Date): EvictionVerdict {
  const phase = pod.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed' || pod.metadata.deletionTimestamp) return { allow: true };
  const s = pdb.status ?? {};
  if (!isPodReady(pod)) {
    if (pdb.spec?.unhealthyPodEvictionPolicy === 'AlwaysAllow') return { allow: true };
    if ((s.observedGeneration ?? 0) >= (pdb.metadata.generation ?? 0) && (s.currentHealthy ?? 0) >= (s.desiredHealthy ?? 0) && (s.expectedPods ?? 0) > 0) {
      return { allow: true };
    }
  }
  const name = pdb.metadata.name;
  if ((s.observedGeneration ?? 0) < (pdb.metadata.generation ?? 0)) {
    return { allow: false, error: evictionRefused(`The disruption budget ${name} is still being processed by the server.`) };
  }
  const allowed = s.disruptionsAllowed ?? 0;
  if (allowed <= 0) {
    return {
      allow: false,
      error: evictionRefused(`The disruption budget ${name} needs ${s.desiredHealthy ?? 0} healthy pods and has ${s.currentHealthy ?? 0} currently`),
    };
  }
  const at = now.toISOString().replace(/\.\d{3}Z$/, 'Z');
  return { allow: true, status: { ...s, disruptionsAllowed: allowed - 1, disruptedPods: { ...(s.disruptedPods ?? {}), [pod.metadata.name!]: at } } };
}
