// HPA `behavior` at work: stabilization over the recommendation history, and rate policies over the scale events history.
import type { ScalingRules } from '../../../core/api/hpa-behavior.js';

export interface Recommendation {
  replicas: number;
  atMs: number;
}

export interface ScaleEvent {
  /** Pods added (scale-up history) or removed (scale-down history). */
  change: number;
  atMs: number;
}

/** What the controller remembers of one HPA between syncs (in memory, as Kubernetes' controller does). */
export interface ScalingHistory {
  recommendations: Recommendation[];
  scaleUp: ScaleEvent[];
  scaleDown: ScaleEvent[];
}

export const EMPTY_HISTORY: ScalingHistory = { recommendations: [], scaleUp: [], scaleDown: [] };

export interface Stabilized {
  replicas: number;
  /** The AbleToScale reason when stabilization changed the recommendation. */
  reason: 'ScaleUpStabilized' | 'ScaleDownStabilized';
  message: string;
  /** The history with this recommendation added and those too old for either window dropped. */
  recommendations: Recommendation[];
}

/**
 * Kubernetes' stabilizeRecommendationWithBehaviors: the result may not rise above the lowest
 * recommendation of the scale-up window nor fall below the highest of the scale-down window
 * (both including this one), starting from the current count.
 */
export function stabilize(options: {
  current: number;
  desired: number;
  rules: { up: ScalingRules; down: ScalingRules };
  recommendations: readonly Recommendation[];
  nowMs: number;
}): Stabilized {
  const { current, desired, rules, nowMs } = options;
  const upCutoff = nowMs - rules.up.stabilizationWindowSeconds * 1000;
  const downCutoff = nowMs - rules.down.stabilizationWindowSeconds * 1000;
  let upLimit = desired;
  let downLimit = desired;
  const kept: Recommendation[] = [];
  for (const rec of options.recommendations) {
    if (rec.atMs > upCutoff) upLimit = Math.min(upLimit, rec.replicas);
    if (rec.atMs > downCutoff) downLimit = Math.max(downLimit, rec.replicas);
    if (rec.atMs > upCutoff || rec.atMs > downCutoff) kept.push(rec);
  }
  let replicas = current;
  if (replicas < upLimit) replicas = upLimit;
  if (replicas > downLimit) replicas = downLimit;
  kept.push({ replicas: desired, atMs: nowMs });
  return desired >= current
    ? {
        replicas,
        reason: 'ScaleUpStabilized',
        message: 'recent recommendations were lower than current one, applying the lowest recent recommendation',
        recommendations: kept,
      }
    : {
        replicas,
        reason: 'ScaleDownStabilized',
        message: 'recent recommendations were higher than current one, applying the highest recent recommendation',
        recommendations: kept,
      };
}

/** Pods added (or removed) by the events of the last periodSeconds. */
function changeInPeriod(events: readonly ScaleEvent[], periodSeconds: number, nowMs: number): number {
  const cutoff = nowMs - periodSeconds * 1000;
  return events.reduce((sum, e) => (e.atMs > cutoff ? sum + e.change : sum), 0);
}

/** Kubernetes' calculateScaleUpLimitWithScalingRules: each policy allows a count from where its period started; Max takes the largest. */
export function scaleUpLimit(current: number, history: Pick<ScalingHistory, 'scaleUp' | 'scaleDown'>, rules: ScalingRules, nowMs: number): number {
  if (rules.selectPolicy === 'Disabled') return current;
  const pick = rules.selectPolicy === 'Min' ? Math.min : Math.max;
  let result = rules.selectPolicy === 'Min' ? Infinity : -Infinity;
  for (const policy of rules.policies) {
    const periodStart = current - changeInPeriod(history.scaleUp, policy.periodSeconds, nowMs) + changeInPeriod(history.scaleDown, policy.periodSeconds, nowMs);
    // Percent rounds up, or a small target could never grow.
    const proposed = policy.type === 'Pods' ? periodStart + policy.value : Math.ceil(periodStart * (1 + policy.value / 100));
    result = pick(result, proposed);
  }
  return Number.isFinite(result) ? result : current;
}

/** Kubernetes' calculateScaleDownLimitWithBehaviors: Max takes the policy that allows the lowest count. */
export function scaleDownLimit(current: number, history: Pick<ScalingHistory, 'scaleUp' | 'scaleDown'>, rules: ScalingRules, nowMs: number): number {
  if (rules.selectPolicy === 'Disabled') return current;
  const pick = rules.selectPolicy === 'Min' ? Math.max : Math.min;
  let result = rules.selectPolicy === 'Min' ? -Infinity : Infinity;
  for (const policy of rules.policies) {
    const periodStart = current - changeInPeriod(history.scaleUp, policy.periodSeconds, nowMs) + changeInPeriod(history.scaleDown, policy.periodSeconds, nowMs);
    const proposed = policy.type === 'Pods' ? periodStart - policy.value : Math.trunc(periodStart * (1 - policy.value / 100));
    result = pick(result, proposed);
  }
  return Number.isFinite(result) ? result : current;
}

export interface Limited {
  replicas: number;
  /** The ScalingLimited reason: DesiredWithinRange when nothing limited it. */
  reason: 'DesiredWithinRange' | 'ScaleUpLimit' | 'TooManyReplicas' | 'ScaleDownLimit' | 'TooFewReplicas';
  message: string;
}

/** Kubernetes' convertDesiredReplicasWithBehaviorRate: the rate policies, then minReplicas and maxReplicas. */
export function limitByRate(options: {
  current: number;
  desired: number;
  minReplicas: number;
  maxReplicas: number;
  rules: { up: ScalingRules; down: ScalingRules };
  history: ScalingHistory;
  nowMs: number;
}): Limited {
  const { current, desired, nowMs, history } = options;
  if (desired > current) {
    // A limit below the current count (scale-downs since) holds the count rather than shrinking it.
    const limit = Math.max(current, scaleUpLimit(current, history, options.rules.up, nowMs));
    const [allowed, reason, message] =
      options.maxReplicas > limit
        ? ([limit, 'ScaleUpLimit', 'the desired replica count is increasing faster than the maximum scale rate'] as const)
        : ([options.maxReplicas, 'TooManyReplicas', 'the desired replica count is more than the maximum replica count'] as const);
    if (desired > allowed) return { replicas: allowed, reason, message };
  } else if (desired < current) {
    const limit = Math.min(current, scaleDownLimit(current, history, options.rules.down, nowMs));
    const [allowed, reason, message] =
      options.minReplicas < limit
        ? ([limit, 'ScaleDownLimit', 'the desired replica count is decreasing faster than the maximum scale rate'] as const)
        : ([options.minReplicas, 'TooFewReplicas', 'the desired replica count is less than the minimum replica count'] as const);
    if (desired < allowed) return { replicas: allowed, reason, message };
  }
  return { replicas: desired, reason: 'DesiredWithinRange', message: 'the desired count is within the acceptable range' };
}

function longestPeriod(rules: ScalingRules): number {
  return Math.max(0, ...rules.policies.map((p) => p.periodSeconds));
}

/** The history after a rescale from `from` to `to`: the event added, events older than every policy period of their direction dropped. */
export function recordScaleEvent(
  history: ScalingHistory,
  rules: { up: ScalingRules; down: ScalingRules },
  from: number,
  to: number,
  nowMs: number,
): ScalingHistory {
  const fresh = (events: readonly ScaleEvent[], r: ScalingRules) => events.filter((e) => e.atMs > nowMs - longestPeriod(r) * 1000);
  const scaleUp = fresh(history.scaleUp, rules.up);
  const scaleDown = fresh(history.scaleDown, rules.down);
  if (to > from) scaleUp.push({ change: to - from, atMs: nowMs });
  if (to < from) scaleDown.push({ change: from - to, atMs: nowMs });
  return { recommendations: history.recommendations, scaleUp, scaleDown };
}
