// The HPA decision for one sync (Kubernetes' reconcileAutoscaler): target scale, pods and samples in; new size, status, Events and history out.
import { isDeepStrictEqual } from 'node:util';
import type { HorizontalPodAutoscaler, MetricSpec, MetricStatus } from '../../../core/api/horizontalpodautoscaler.js';
import type { Condition } from '../../../core/api/meta.js';
import type { Pod } from '../../../core/api/pod.js';
import type { Scale } from '../../../core/api/scale.js';
import { matches, parseSelector } from '../../../core/api/selector.js';
import { timestamp } from '../../../core/api/timestamp.js';
import {
  averageValueReplicas,
  formatResourceValue,
  resourceValue,
  utilizationReplicas,
  type CalculatorTiming,
  type PodMetricsInfo,
  type ResourceName,
  type Tolerances,
} from './replica-calculator.js';
import type { PodResourceSample } from './resource-metrics.js';
import { scalingRules, type ScalingRules } from '../../../core/api/hpa-behavior.js';
import { limitByRate, recordScaleEvent, stabilize, type ScalingHistory } from './scaling-behavior.js';

export type HorizontalPodAutoscalerStatus = NonNullable<HorizontalPodAutoscaler['status']>;

export interface AutoscalerSettings {
  /** The scale-down stabilization window of HPAs that set none (Kubernetes' --horizontal-pod-autoscaler-downscale-stabilization, 300 s). */
  downscaleStabilizationSeconds?: number;
  cpuInitializationPeriodMs?: number;
  initialReadinessDelayMs?: number;
}

/** The target's Scale, or why it could not be read (`deployments.apps "web" not found`). */
export type ScaleRead = { scale: Scale } | { error: string };
/** The pods' samples, or why there are none. */
export type SamplesRead = { samples: ReadonlyMap<string, PodResourceSample> } | { error: string };

export interface AutoscalerInput {
  hpa: HorizontalPodAutoscaler;
  target: ScaleRead;
  /** Pods of the HPA's namespace; the plan picks those the Scale's selector matches. */
  pods: readonly Pod[];
  /** Absent when none were asked for (see metricsNeeded). */
  metrics?: SamplesRead;
  /** Undefined the first time this controller sees the HPA. */
  history?: ScalingHistory;
  now: Date;
  settings?: AutoscalerSettings;
}

export interface AutoscalerEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

export interface AutoscalerPlan {
  /** Write this size through the target's scale subresource. */
  rescale?: { from: number; to: number; reason: string };
  /** The status to hold, assuming a rescale succeeds. */
  status: HorizontalPodAutoscalerStatus;
  events: AutoscalerEvent[];
  history: ScalingHistory;
  /** What holds instead when the rescale write fails (see rescaleFailed). */
  beforeRescale?: { status: HorizontalPodAutoscalerStatus; events: AutoscalerEvent[]; history: ScalingHistory };
}

/** Kubernetes' setCondition: the transition time moves only when the status does. */
export function setCondition(
  conditions: readonly Condition[],
  type: string,
  status: Condition['status'],
  reason: string,
  message: string,
  now: Date,
): Condition[] {
  const existing = conditions.find((c) => c.type === type);
  const next: Condition = {
    type,
    status,
    reason,
    message,
    lastTransitionTime: existing && existing.status === status && existing.lastTransitionTime ? existing.lastTransitionTime : timestamp(now),
  };
  return existing ? conditions.map((c) => (c === existing ? next : c)) : [...conditions, next];
}

/** The pods the Scale's selector picks, or the Kubernetes problem when it has none or a bad one. */
export function selectedPods(
  scale: Scale,
  pods: readonly Pod[],
  namespace: string,
): { pods: Pod[] } | { error: string; reason: 'SelectorRequired' | 'InvalidSelector'; condition: string } {
  const text = scale.status.selector;
  if (!text) return { error: 'selector is required', reason: 'SelectorRequired', condition: "the HPA target's scale is missing a selector" };
  try {
    const selector = parseSelector(text);
    return { pods: pods.filter((p) => p.metadata.namespace === namespace && matches(selector, p.metadata.labels)) };
  } catch (err) {
    const message = `couldn't convert selector into a corresponding internal selector object: ${err instanceof Error ? err.message : String(err)}`;
    return { error: message, reason: 'InvalidSelector', condition: message };
  }
}

/** True when this sync will look at metrics: the target is read, not scaled to 0 and within min and max. */
export function metricsNeeded(hpa: HorizontalPodAutoscaler, target: ScaleRead): boolean {
  if (!('scale' in target)) return false;
  const current = target.scale.spec.replicas;
  return current !== 0 && current <= hpa.spec.maxReplicas && current >= hpa.spec.minReplicas;
}

/** One resource's samples: the sum over the pod's containers (or one container); a pod missing that container has no sample. */
function resourceMetrics(samples: ReadonlyMap<string, PodResourceSample>, resource: ResourceName, container?: string): PodMetricsInfo {
  const out: PodMetricsInfo = new Map();
  for (const [name, s] of samples) {
    const containers = container === undefined ? s.containers : s.containers.filter((c) => c.name === container);
    if (containers.length === 0) continue;
    const value = containers.reduce((sum, c) => sum + (resource === 'cpu' ? c.cpuMilli : c.memoryBytes), 0);
    out.set(name, { value, timestampMs: s.timestampMs, windowMs: s.windowMs });
  }
  return out;
}

type MetricValue = NonNullable<MetricStatus['resource']>['current'];

interface MetricOutcome {
  status: MetricStatus;
  proposal?: { replicas: number; metricName: string };
  /** A metric that gave no proposal: the ScalingActive condition, the Event, and the error as the summary quotes it. */
  invalid?: { reason: string; event: string; error: string };
}

interface MetricContext {
  specReplicas: number;
  pods: readonly Pod[];
  metrics?: SamplesRead;
  tolerances: Tolerances;
  timing: CalculatorTiming;
}

/** Kubernetes' computeStatusForResourceMetric (and its ContainerResource twin) for one metric. */
function resourceOutcome(spec: MetricSpec, ctx: MetricContext): MetricOutcome {
  const source = (spec.resource ?? spec.containerResource)!;
  const name = source.name as ResourceName;
  const container = spec.containerResource?.container;
  const what = container === undefined ? 'resource' : 'container';
  const reason = container === undefined ? 'FailedGetResourceMetric' : 'FailedGetContainerResourceMetric';
  const status = (current: MetricValue): MetricStatus =>
    container === undefined
      ? { type: 'Resource', resource: { name, current } }
      : { type: 'ContainerResource', containerResource: { name, container, current } };
  const fail = (inner: string, wrap: string): MetricOutcome => ({
    status: status({}),
    invalid: { reason, event: inner, error: `failed to get ${name} ${what} metric value: ${wrap}: ${inner}` },
  });
  const target = source.target;
  if (target.type === 'Value') {
    return fail(
      'invalid resource metric source: neither an average utilization target nor an average value (usage) target was set',
      `failed to get ${name} usage`,
    );
  }
  const wrap = target.type === 'Utilization' ? `failed to get ${name} utilization` : `failed to get ${name} usage`;
  if (!ctx.metrics) return fail(`unable to get metrics for resource ${name}: no metrics were asked for`, wrap);
  if ('error' in ctx.metrics) return fail(`unable to get metrics for resource ${name}: ${ctx.metrics.error}`, wrap);
  const metrics = resourceMetrics(ctx.metrics.samples, name, container);
  const common = { currentReplicas: ctx.specReplicas, resource: name, tolerances: ctx.tolerances, pods: ctx.pods, metrics, timing: ctx.timing, container };
  if (target.type === 'AverageValue') {
    const result = averageValueReplicas({ ...common, targetAverage: resourceValue(name, target.averageValue!) });
    if ('error' in result) return fail(result.error, wrap);
    return {
      status: status({ averageValue: formatResourceValue(name, result.average) }),
      proposal: { replicas: result.replicas, metricName: `${name} ${what}` },
    };
  }
  const result = utilizationReplicas({ ...common, targetUtilization: target.averageUtilization! });
  if ('error' in result) return fail(result.error, wrap);
  return {
    status: status({ averageUtilization: result.utilization, averageValue: formatResourceValue(name, result.rawAverage) }),
    proposal: { replicas: result.replicas, metricName: `${name} ${what} utilization (percentage of request)` },
  };
}

/** Metric sources that need a custom or external metrics API, which minik8s does not serve. */
function unservedOutcome(spec: MetricSpec): MetricOutcome {
  const kinds = {
    Pods: ['pods', 'FailedGetPodsMetric'],
    Object: ['object', 'FailedGetObjectMetric'],
    External: ['external', 'FailedGetExternalMetric'],
  } as const;
  const [word, reason] = kinds[spec.type as keyof typeof kinds] ?? ['unknown', 'InvalidMetricSourceType'];
  const metric = (spec.pods ?? spec.object ?? spec.external)?.metric;
  const inner = `unable to get ${word} metric ${metric?.name ?? ''}: minik8s serves no ${spec.type === 'External' ? 'external' : 'custom'} metrics API, only cpu and memory (Resource, ContainerResource)`;
  const empty = {};
  const status: MetricStatus =
    spec.type === 'Pods' && spec.pods
      ? { type: 'Pods', pods: { metric: spec.pods.metric, current: empty } }
      : spec.type === 'Object' && spec.object
        ? { type: 'Object', object: { describedObject: spec.object.describedObject, metric: spec.object.metric, current: empty } }
        : { type: 'External', external: { metric: spec.external?.metric ?? { name: '' }, current: empty } };
  return { status, invalid: { reason, event: inner, error: `failed to get ${word} metric value: ${inner}` } };
}

/** Stored JSON drops undefined fields; comparing and writing objects without them keeps "unchanged" unchanged. */
function clean<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

function statusOf(fields: {
  old: HorizontalPodAutoscalerStatus;
  hpa: HorizontalPodAutoscaler;
  current: number;
  desired: number;
  metrics: MetricStatus[];
  conditions: Condition[];
  lastScaleTime?: string | null;
}): HorizontalPodAutoscalerStatus {
  const lastScale = fields.lastScaleTime ?? fields.old.lastScaleTime;
  return clean({
    ...(fields.hpa.metadata.generation !== undefined ? { observedGeneration: fields.hpa.metadata.generation } : {}),
    ...(lastScale ? { lastScaleTime: lastScale } : {}),
    currentReplicas: fields.current,
    desiredReplicas: fields.desired,
    ...(fields.metrics.length ? { currentMetrics: fields.metrics } : {}),
    ...(fields.conditions.length ? { conditions: fields.conditions } : {}),
  });
}

const ABLE_TO_SCALE = 'AbleToScale';
const SCALING_ACTIVE = 'ScalingActive';
const SCALING_LIMITED = 'ScalingLimited';

/**
 * One sync of one HPA, as Kubernetes' reconcileAutoscaler decides it. The target's Scale gives
 * the current size and the selector; each metric proposes a size (the largest wins; invalid
 * metrics block a scale-down but not a scale-up); the proposal is stabilized and rate-limited by
 * `behavior`, then clamped to minReplicas..maxReplicas. A target scaled to 0 is left alone.
 */
export function planAutoscaler(input: AutoscalerInput): AutoscalerPlan {
  const { hpa, now } = input;
  const nowMs = now.getTime();
  const old = hpa.status ?? {};
  const settings = input.settings ?? {};
  const events: AutoscalerEvent[] = [];
  let conditions: Condition[] = [...(old.conditions ?? [])];
  const set = (type: string, status: Condition['status'], reason: string, message: string) => {
    conditions = setCondition(conditions, type, status, reason, message, now);
  };

  if ('error' in input.target) {
    events.push({ type: 'Warning', reason: 'FailedGetScale', message: input.target.error });
    set(ABLE_TO_SCALE, 'False', 'FailedGetScale', `the HPA controller was unable to get the target's current scale: ${input.target.error}`);
    const status = clean({ ...old, conditions });
    return { status, events, history: input.history ?? { recommendations: [], scaleUp: [], scaleDown: [] } };
  }
  const scale = input.target.scale;
  set(ABLE_TO_SCALE, 'True', 'SucceededGetScale', "the HPA controller was able to get the target's current scale");
  const current = scale.spec.replicas;
  // Kubernetes' recordInitialRecommendation: the size found first counts as a recommendation, so a restarted controller does not shrink a target at once.
  let history: ScalingHistory = input.history ?? { recommendations: [{ replicas: current, atMs: nowMs }], scaleUp: [], scaleDown: [] };
  const rules = scalingRules(hpa.spec.behavior, settings.downscaleStabilizationSeconds);
  const minReplicas = hpa.spec.minReplicas ?? 1;

  let desired: number;
  let rescaleReason = '';
  let metricStatuses: MetricStatus[] = [];
  if (current === 0 && minReplicas !== 0) {
    desired = 0;
    set(SCALING_ACTIVE, 'False', 'ScalingDisabled', 'scaling is disabled since the replica count of the target is zero');
  } else if (current > hpa.spec.maxReplicas) {
    rescaleReason = 'Current number of replicas above Spec.MaxReplicas';
    desired = hpa.spec.maxReplicas;
  } else if (current < minReplicas) {
    rescaleReason = 'Current number of replicas below Spec.MinReplicas';
    desired = minReplicas;
  } else {
    const computed = computeReplicas(input, scale, rules, events);
    metricStatuses = computed.statuses;
    if (computed.condition) set(SCALING_ACTIVE, 'False', computed.condition.reason, computed.condition.message);
    if (computed.error !== undefined) {
      // Nothing to go on: report what is known and keep the size.
      events.push({ type: 'Warning', reason: 'FailedComputeMetricsReplicas', message: computed.error });
      const status = statusOf({ old, hpa, current, desired: old.desiredReplicas ?? current, metrics: metricStatuses, conditions });
      return { status, events, history };
    }
    set(SCALING_ACTIVE, 'True', 'ValidMetricFound', `the HPA was able to successfully calculate a replica count from ${computed.metricName}`);
    desired = computed.replicas;
    if (desired > current) rescaleReason = `${computed.metricName} above target`;
    if (desired < current) rescaleReason = 'All metrics below target';

    const stabilized = stabilize({ current, desired, rules, recommendations: history.recommendations, nowMs });
    history = { ...history, recommendations: stabilized.recommendations };
    if (stabilized.replicas !== desired) set(ABLE_TO_SCALE, 'True', stabilized.reason, stabilized.message);
    else set(ABLE_TO_SCALE, 'True', 'ReadyForNewScale', 'recommended size matches current size');
    const limited = limitByRate({ current, desired: stabilized.replicas, minReplicas, maxReplicas: hpa.spec.maxReplicas, rules, history, nowMs });
    set(SCALING_LIMITED, limited.replicas === stabilized.replicas ? 'False' : 'True', limited.reason, limited.message);
    desired = limited.replicas;
  }

  if (desired === current) {
    const status = statusOf({ old, hpa, current, desired: current, metrics: metricStatuses, conditions });
    return { status, events, history };
  }

  // Kubernetes' setCurrentReplicasAndMetricsInStatus, should the write fail: desiredReplicas and lastScaleTime stay.
  const beforeRescale = {
    status: statusOf({ old, hpa, current, desired: old.desiredReplicas ?? current, metrics: metricStatuses, conditions }),
    events: [...events],
    history,
  };
  set(ABLE_TO_SCALE, 'True', 'SucceededRescale', `the HPA controller was able to update the target scale to ${desired}`);
  events.push({ type: 'Normal', reason: 'SuccessfulRescale', message: `New size: ${desired}; reason: ${rescaleReason}` });
  return {
    rescale: { from: current, to: desired, reason: rescaleReason },
    status: statusOf({ old, hpa, current, desired, metrics: metricStatuses, conditions, lastScaleTime: timestamp(now) }),
    events,
    history: recordScaleEvent(history, rules, current, desired, nowMs),
    beforeRescale,
  };
}

/** Kubernetes' computeReplicasForMetrics: each metric's proposal, the largest wins; invalid ones block scaling down. */
function computeReplicas(
  input: AutoscalerInput,
  scale: Scale,
  rules: { up: ScalingRules; down: ScalingRules },
  events: AutoscalerEvent[],
): { replicas: number; metricName: string; statuses: MetricStatus[]; condition?: { reason: string; message: string }; error?: string } {
  const { hpa } = input;
  const namespace = hpa.metadata.namespace!;
  const selected = selectedPods(scale, input.pods, namespace);
  if ('error' in selected) {
    events.push({ type: 'Warning', reason: selected.reason, message: selected.error });
    return { replicas: -1, metricName: '', statuses: [], condition: { reason: 'InvalidSelector', message: selected.condition }, error: selected.error };
  }
  const settings = input.settings ?? {};
  const ctx: MetricContext = {
    specReplicas: scale.spec.replicas,
    pods: selected.pods,
    metrics: input.metrics,
    tolerances: { scaleDown: rules.down.tolerance, scaleUp: rules.up.tolerance },
    timing: {
      now: input.now.getTime(),
      cpuInitializationPeriodMs: settings.cpuInitializationPeriodMs,
      initialReadinessDelayMs: settings.initialReadinessDelayMs,
    },
  };
  const specs = hpa.spec.metrics;
  const statuses: MetricStatus[] = [];
  let replicas = 0;
  let metricName = '';
  let invalidCount = 0;
  let firstInvalid: MetricOutcome['invalid'];
  for (const spec of specs) {
    const outcome = spec.type === 'Resource' || spec.type === 'ContainerResource' ? resourceOutcome(spec, ctx) : unservedOutcome(spec);
    statuses.push(outcome.status);
    if (outcome.invalid) {
      events.push({ type: 'Warning', reason: outcome.invalid.reason, message: outcome.invalid.event });
      if (!firstInvalid) firstInvalid = outcome.invalid;
      invalidCount++;
      continue;
    }
    if (replicas === 0 || outcome.proposal!.replicas > replicas) {
      replicas = outcome.proposal!.replicas;
      metricName = outcome.proposal!.metricName;
    }
  }
  if (specs.length === 0) {
    return {
      replicas: -1,
      metricName: '',
      statuses,
      condition: { reason: 'InvalidMetricSourceType', message: 'the HPA was unable to compute the replica count: no metrics are specified' },
      error: 'no metrics are specified',
    };
  }
  if (invalidCount >= specs.length || (invalidCount > 0 && replicas < scale.spec.replicas)) {
    return {
      replicas: -1,
      metricName: '',
      statuses,
      condition: { reason: firstInvalid!.reason, message: `the HPA was unable to compute the replica count: ${firstInvalid!.event}` },
      error: `invalid metrics (${invalidCount} invalid out of ${specs.length}), first error is: ${firstInvalid!.error}`,
    };
  }
  return { replicas, metricName, statuses };
}

/** The plan once the rescale write failed: the size stays, AbleToScale says why, a FailedRescale Event, no scale event in the history. */
export function rescaleFailed(plan: AutoscalerPlan, message: string, now: Date): AutoscalerPlan {
  if (!plan.rescale || !plan.beforeRescale) return plan;
  const before = plan.beforeRescale;
  const conditions = setCondition(
    before.status.conditions ?? [],
    ABLE_TO_SCALE,
    'False',
    'FailedUpdateScale',
    `the HPA controller was unable to update the target scale: ${message}`,
    now,
  );
  return {
    status: clean({ ...before.status, conditions }),
    events: [
      ...before.events,
      { type: 'Warning', reason: 'FailedRescale', message: `New size: ${plan.rescale.to}; reason: ${plan.rescale.reason}; error: ${message}` },
    ],
    history: before.history,
  };
}

/** True when writing `next` would change nothing. */
export function sameStatus(old: HorizontalPodAutoscaler['status'], next: HorizontalPodAutoscalerStatus): boolean {
  return isDeepStrictEqual(clean(old ?? {}), clean(next));
}
