// Keeps one probe worker per running container and probe kind, and answers what the sync loop asks: ready, started, kill?
import type { Container, Pod, Probe } from '../../core/api/pod.js';
import type { PodProvider, RuntimePod } from '../../runtime/provider.js';
import { sleep, systemClock, type Clock } from './clock.js';
import type { ProbeVerdict } from './pod-actions.js';
import type { ProbeStatus } from './pod-status.js';
import { runProbe, type ProbeOutcome } from './probe.js';

export type ProbeKind = 'liveness' | 'readiness' | 'startup';
export type ProbeResult = 'unknown' | 'success' | 'failure';

export interface ProbeState {
  result: ProbeResult;
  successes: number;
  failures: number;
  message: string;
}

/** Where each kind of probe starts before it has run: live, not ready, not started. */
export function initialProbeState(kind: ProbeKind): ProbeState {
  return { result: kind === 'liveness' ? 'success' : kind === 'readiness' ? 'failure' : 'unknown', successes: 0, failures: 0, message: '' };
}

/** One probe run moves the counters; the result flips only at successThreshold or failureThreshold in a row. */
export function nextProbeState(state: ProbeState, outcome: ProbeOutcome, probe: Pick<Probe, 'successThreshold' | 'failureThreshold'>): ProbeState {
  const successThreshold = probe.successThreshold ?? 1;
  const failureThreshold = probe.failureThreshold ?? 3;
  if (outcome.ok) {
    const successes = state.successes + 1;
    return { result: successes >= successThreshold ? 'success' : state.result, successes, failures: 0, message: '' };
  }
  const failures = state.failures + 1;
  return { result: failures >= failureThreshold ? 'failure' : state.result, successes: 0, failures, message: outcome.message };
}

const KIND_TITLE: Record<ProbeKind, string> = { liveness: 'Liveness', readiness: 'Readiness', startup: 'Startup' };

interface Worker {
  podUid: string;
  kind: ProbeKind;
  state: ProbeState;
  stop: AbortController;
}

export interface ProbeManagerOptions {
  provider: PodProvider;
  /** A result changed: the pod needs a sync. */
  onChange(podUid: string): void;
  /** A probe failed: the kubelet records an Unhealthy event. */
  onFailure(pod: Pod, container: string, message: string): void;
  /** Times initial delays and periods (default: the system clock). */
  clock?: Clock;
  log?: (message: string) => void;
}

/** Probe workers run on timers; their results are read synchronously by the pure planning and status code. */
export class ProbeManager {
  readonly #options: ProbeManagerOptions;
  readonly #clock: Clock;
  /** By container ID, then probe kind. */
  readonly #workers = new Map<string, Map<ProbeKind, Worker>>();

  constructor(options: ProbeManagerOptions) {
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
  }

  #state(containerID: string, kind: ProbeKind): ProbeState | undefined {
    return this.#workers.get(containerID)?.get(kind)?.state;
  }

  verdict(containerID: string): ProbeVerdict {
    const startup = this.#state(containerID, 'startup');
    const liveness = this.#state(containerID, 'liveness');
    return {
      ...(startup?.result === 'failure' ? { startupFailed: startup.message } : {}),
      ...(liveness?.result === 'failure' ? { livenessFailed: liveness.message } : {}),
    };
  }

  status(containerID: string): ProbeStatus {
    const workers = this.#workers.get(containerID);
    const startup = workers?.get('startup');
    const readiness = workers?.get('readiness');
    return {
      started: !startup || startup.state.result === 'success',
      ready: !readiness || readiness.state.result === 'success',
    };
  }

  /** Starts workers for running containers with probes, stops those whose container is gone. */
  sync(pod: Pod, runtime: RuntimePod | undefined): void {
    const uid = pod.metadata.uid!;
    const live = new Set<string>();
    for (const c of pod.spec.containers) {
      const rc = runtime?.containers.find((x) => x.name === c.name);
      if (rc?.state !== 'running') continue;
      live.add(rc.id);
      if (this.#workers.has(rc.id)) continue;
      const workers = new Map<ProbeKind, Worker>();
      this.#workers.set(rc.id, workers);
      const startedAt = rc.startedAt ? Date.parse(rc.startedAt) : this.#clock.now();
      for (const [kind, probe] of [
        ['startup', c.startupProbe],
        ['liveness', c.livenessProbe],
        ['readiness', c.readinessProbe],
      ] as const) {
        if (!probe) continue;
        const worker: Worker = { podUid: uid, kind, state: initialProbeState(kind), stop: new AbortController() };
        workers.set(kind, worker);
        void this.#run(worker, pod, c, rc.id, probe, startedAt, runtime!.sandbox.ip);
      }
    }
    for (const [id, workers] of this.#workers) {
      const first = workers.values().next().value as Worker | undefined;
      if (first && first.podUid === uid && !live.has(id)) this.#stopContainer(id);
      else if (!first && !live.has(id)) this.#workers.delete(id);
    }
  }

  /** Stops every worker of a pod (deleted or finished). */
  forgetPod(uid: string): void {
    for (const [id, workers] of this.#workers) {
      const first = workers.values().next().value as Worker | undefined;
      if (!first || first.podUid === uid) this.#stopContainer(id);
    }
  }

  stopAll(): void {
    for (const id of [...this.#workers.keys()]) this.#stopContainer(id);
  }

  #stopContainer(id: string): void {
    for (const w of this.#workers.get(id)?.values() ?? []) w.stop.abort();
    this.#workers.delete(id);
  }

  async #run(worker: Worker, pod: Pod, container: Container, containerID: string, probe: Probe, startedAt: number, podIP: string | undefined): Promise<void> {
    const signal = worker.stop.signal;
    const { provider } = this.#options;
    const ref = { uid: pod.metadata.uid!, namespace: pod.metadata.namespace!, name: pod.metadata.name! };
    const initialDelay = Math.max(0, startedAt + (probe.initialDelaySeconds ?? 0) * 1000 - this.#clock.now());
    if (!(await sleep(this.#clock, initialDelay, signal))) return;
    for (;;) {
      // Liveness and readiness wait for the startup probe, as in Kubernetes.
      const gated = worker.kind !== 'startup' && !this.status(containerID).started;
      if (!gated) {
        const outcome = await runProbe(probe, {
          podIP,
          container,
          exec: (command, timeoutMs) => provider.exec(ref, container.name, command, { timeoutMs }),
        });
        if (signal.aborted) return;
        const before = worker.state.result;
        worker.state = nextProbeState(worker.state, outcome, probe);
        if (!outcome.ok) this.#options.onFailure(pod, container.name, `${KIND_TITLE[worker.kind]} probe failed: ${outcome.message}`);
        if (worker.state.result !== before) this.#options.onChange(worker.podUid);
        // A startup probe is done once it succeeds; a failed liveness or startup probe waits for the kill.
        if (worker.kind === 'startup' && worker.state.result === 'success') return;
        if (worker.kind !== 'readiness' && worker.state.result === 'failure') return;
      }
      if (!(await sleep(this.#clock, (probe.periodSeconds ?? 10) * 1000, signal))) return;
    }
  }
}
