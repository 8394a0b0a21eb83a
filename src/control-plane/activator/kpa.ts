// The function autoscaler's decision, in the manner of Knative's KPA: observed concurrency in, desired pods (and the panic state) out.

export interface ScaleSettings {
  /** In-flight requests per pod the autoscaler aims at (spec.scaling.target). */
  target: number;
  minScale: number;
  /** 0: no upper bound. */
  maxScale: number;
  /** How long a function must see no request (and have none in flight) before it goes to zero. */
  idleGraceMs: number;
}

export interface KpaState {
  /** Set while panicking: the last time the panic window was over the threshold (panic ends a stable window after). */
  panicTime?: number;
  /** The most pods asked for in this panic: panicking never scales down. */
  maxPanicPods: number;
}

export interface KpaTuning {
  stableWindowMs: number;
  panicWindowMs: number;
  /** Panic when the panic window wants this many times the ready pods (Knative's 200%). */
  panicThreshold: number;
  /** At most divide the ready pods by this per decision (Knative's max-scale-down-rate). */
  maxScaleDownRate: number;
  /** At most multiply the ready pods by this per decision (Knative's max-scale-up-rate). */
  maxScaleUpRate: number;
}

export const DEFAULT_TUNING: KpaTuning = { stableWindowMs: 60_000, panicWindowMs: 6_000, panicThreshold: 2, maxScaleDownRate: 2, maxScaleUpRate: 1000 };

export interface KpaInput {
  now: number;
  /** Average requests in flight over the stable window (60 s). */
  stableConcurrency: number;
  /** Average requests in flight over the panic window (6 s). */
  panicConcurrency: number;
  /** Pods serving now. */
  readyPods: number;
  /** The current version's ReplicaSet's spec.replicas. */
  currentReplicas: number;
  /** Requests in flight now, held ones included. */
  inFlight: number;
  /** Milliseconds since a request last arrived or finished (Infinity: none seen). */
  idleMs: number;
  settings: ScaleSettings;
  state: KpaState;
  tuning?: KpaTuning;
}

export interface KpaDecision {
  desired: number;
  state: KpaState;
  panicking: boolean;
  /** Why, for the log and the Event. */
  reason: string;
}

const fmt = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(1));

/**
 * Knative's KPA: desired = ceil(average concurrency / target) over the stable window, held
 * within [ready / maxScaleDownRate, ready x maxScaleUpRate]; when the panic window wants at
 * least panicThreshold x the ready pods, panic: take the larger of the two at once and never
 * scale down until a stable window has passed without that. To zero only once the function has
 * been idle for its grace (no request, none in flight); min and max scale bound everything.
 */
export function decideScale(input: KpaInput): KpaDecision {
  const t = input.tuning ?? DEFAULT_TUNING;
  const { settings, now } = input;
  const target = settings.target > 0 ? settings.target : 1;
  const ready = Math.max(1, input.readyPods);
  const maxUp = Math.ceil(t.maxScaleUpRate * ready);
  const maxDown = Math.floor(ready / t.maxScaleDownRate);
  const dspc = Math.ceil(input.stableConcurrency / target);
  const dppc = Math.ceil(input.panicConcurrency / target);
  const desiredStable = Math.min(Math.max(dspc, maxDown), maxUp);
  const desiredPanic = Math.min(Math.max(dppc, maxDown), maxUp);
  const over = dppc / ready >= t.panicThreshold;

  let state: KpaState = { ...input.state };
  if (over) state.panicTime = now;
  else if (state.panicTime !== undefined && now - state.panicTime > t.stableWindowMs) state = { maxPanicPods: 0 };

  let desired = desiredStable;
  let reason = `stable: ${fmt(input.stableConcurrency)} in flight over ${t.stableWindowMs / 1000} s, target ${fmt(target)} per pod, ${input.readyPods} ready`;
  const panicking = state.panicTime !== undefined;
  if (panicking) {
    desired = Math.max(desired, desiredPanic);
    if (desired > state.maxPanicPods) state.maxPanicPods = desired;
    else desired = state.maxPanicPods;
    reason = `panic: ${fmt(input.panicConcurrency)} in flight over ${t.panicWindowMs / 1000} s, target ${fmt(target)} per pod, ${input.readyPods} ready`;
  }

  if (input.inFlight > 0) {
    // Requests are waiting or running: never fewer than one pod to serve them.
    if (desired < 1) {
      desired = 1;
      reason = `${input.inFlight} request(s) in flight`;
    }
  } else if (input.idleMs >= settings.idleGraceMs) {
    desired = 0;
    reason = Number.isFinite(input.idleMs) ? `idle for ${fmt(Math.floor(input.idleMs / 1000))} s (grace ${fmt(settings.idleGraceMs / 1000)} s)` : 'no requests';
  } else if (desired < 1 && input.currentReplicas > 0) {
    // Within the idle grace the last pod stays, whatever the windows say.
    desired = 1;
    reason = `idle grace: ${fmt(Math.ceil((settings.idleGraceMs - input.idleMs) / 1000))} s left`;
  }

  if (desired < settings.minScale) {
    desired = settings.minScale;
    reason += `; minScale ${settings.minScale}`;
  }
  if (settings.maxScale > 0 && desired > settings.maxScale) {
    desired = settings.maxScale;
    reason += `; maxScale ${settings.maxScale}`;
  }
  return { desired, state, panicking, reason };
}
