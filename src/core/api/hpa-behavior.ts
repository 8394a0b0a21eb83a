// HPA `behavior` with Kubernetes' defaults filled in: what the autoscaler applies and `describe` shows.
import type { HorizontalPodAutoscalerSpec, HPAScalingRules } from './horizontalpodautoscaler.js';
import { parseQuantity } from './quantity.js';

/** Kubernetes' default tolerance: no scaling while the usage ratio is within 10% of 1. */
export const DEFAULT_TOLERANCE = 0.1;

export interface ScalingPolicy {
  type: 'Pods' | 'Percent';
  value: number;
  periodSeconds: number;
}

/** One direction's rules with every default filled in. */
export interface ScalingRules {
  stabilizationWindowSeconds: number;
  selectPolicy: 'Max' | 'Min' | 'Disabled';
  policies: ScalingPolicy[];
  tolerance: number;
}

/** Kubernetes' --horizontal-pod-autoscaler-downscale-stabilization: 5 minutes. */
export const DEFAULT_DOWNSCALE_STABILIZATION_SECONDS = 300;

/** Kubernetes' defaults: up at once, by 4 pods or 100% (whichever is more) per 15 s. */
const DEFAULT_SCALE_UP: ScalingRules = {
  stabilizationWindowSeconds: 0,
  selectPolicy: 'Max',
  policies: [
    { type: 'Pods', value: 4, periodSeconds: 15 },
    { type: 'Percent', value: 100, periodSeconds: 15 },
  ],
  tolerance: DEFAULT_TOLERANCE,
};

/** Kubernetes' defaults: down to anything per 15 s, but only to the highest recommendation of the stabilization window. */
const DEFAULT_SCALE_DOWN: Omit<ScalingRules, 'stabilizationWindowSeconds'> = {
  selectPolicy: 'Max',
  policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }],
  tolerance: DEFAULT_TOLERANCE,
};

function fill(given: HPAScalingRules | undefined, defaults: ScalingRules): ScalingRules {
  return {
    stabilizationWindowSeconds: given?.stabilizationWindowSeconds ?? defaults.stabilizationWindowSeconds,
    selectPolicy: given?.selectPolicy ?? defaults.selectPolicy,
    policies: (given?.policies ?? defaults.policies).map((p) => ({ ...p })),
    tolerance: given?.tolerance !== undefined ? parseQuantity(given.tolerance) : defaults.tolerance,
  };
}

/**
 * Both directions' rules. Kubernetes leaves an HPA without `behavior` on an older path with
 * much the same effect; here such an HPA simply gets the default behavior.
 */
export function scalingRules(
  behavior: HorizontalPodAutoscalerSpec['behavior'],
  downscaleStabilizationSeconds = DEFAULT_DOWNSCALE_STABILIZATION_SECONDS,
): { up: ScalingRules; down: ScalingRules } {
  return {
    up: fill(behavior?.scaleUp, DEFAULT_SCALE_UP),
    down: fill(behavior?.scaleDown, { ...DEFAULT_SCALE_DOWN, stabilizationWindowSeconds: downscaleStabilizationSeconds }),
  };
}
