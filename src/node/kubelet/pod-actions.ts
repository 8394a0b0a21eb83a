// The kubelet's decision for one pod: what to create, start, kill, or wait for; a pure function of spec, runtime and clock.
import type { Container, Pod } from '../../core/api/pod.js';
import type { RuntimeContainer, RuntimePod, StartFailureReason } from '../../runtime/provider.js';
import type { RestartBackoff } from './restart-backoff.js';

export type PodAction =
  | { type: 'createSandbox' }
  /** The sandbox died under running containers: tear everything down before creating it again. */
  | { type: 'killPod'; reason: string }
  | { type: 'start'; container: string; attempt: number }
  | { type: 'kill'; container: string; gracePeriodSeconds: number; reason: string; message: string };

/** A container that is not running, and why: shown as `state.waiting` in its status. */
export interface Waiting {
  reason: string;
  message?: string;
}

/** A failed attempt to start a container (or, under the name POD, the sandbox). */
export interface StartFailure {
  reason: StartFailureReason;
  message: string;
  /** When it failed (ms since epoch). */
  at: number;
}

/** What the probers say about one running container instance. */
export interface ProbeVerdict {
  /** Set when the liveness probe has failed failureThreshold times in a row: why. */
  livenessFailed?: string;
  startupFailed?: string;
}

export interface PlanInput {
  pod: Pod;
  runtime: RuntimePod | undefined;
  now: number;
  backoff: Pick<RestartBackoff, 'waitUntil' | 'delayMs'>;
  /** Start failures not yet followed by a successful start, by container name (`POD` for the sandbox). */
  failures: ReadonlyMap<string, StartFailure>;
  probes(containerID: string): ProbeVerdict;
}

export interface PodPlan {
  actions: PodAction[];
  waiting: Map<string, Waiting>;
  /** Look again after this long (a backoff ends). */
  requeueAfterMs?: number;
}

export const SANDBOX = 'POD';

export function backoffKey(pod: Pod, container: string): string {
  return `${pod.metadata.uid}/${container}`;
}

export function shouldRestart(policy: Pod['spec']['restartPolicy'], exitCode: number | undefined): boolean {
  if (policy === 'Never') return false;
  if (policy === 'OnFailure') return exitCode !== 0;
  return true;
}

/** True when no container will ever run again: the pod has finished. */
export function podFinished(pod: Pod, runtime: RuntimePod | undefined): boolean {
  if (!runtime) return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
  return pod.spec.containers.every((c) => {
    const rc = runtime.containers.find((x) => x.name === c.name);
    return rc?.state === 'exited' && !shouldRestart(pod.spec.restartPolicy, rc.exitCode);
  });
}

function previousRestarts(pod: Pod, name: string): number | undefined {
  return pod.status?.containerStatuses?.find((s) => s.name === name)?.restartCount;
}

/** Next attempt number for a container with no live instance: one more than any we know of. */
function nextAttempt(pod: Pod, c: Container, rc: RuntimeContainer | undefined): number {
  if (rc) return rc.attempt + 1;
  const known = previousRestarts(pod, c.name);
  const hadStatus = pod.status?.containerStatuses?.find((s) => s.name === c.name)?.containerID;
  return hadStatus ? (known ?? 0) + 1 : (known ?? 0);
}

/** As Kubernetes: a failed pull is shown as ImagePullBackOff while the kubelet waits to retry it. */
export function backoffWaiting(failure: StartFailure): Waiting {
  if (failure.reason === 'ErrImagePull') return { reason: 'ImagePullBackOff', message: `Back-off pulling image: ${failure.message}` };
  return { reason: failure.reason, message: failure.message };
}

export function planPod(input: PlanInput): PodPlan {
  const { pod, runtime, now, backoff, failures } = input;
  const actions: PodAction[] = [];
  const waiting = new Map<string, Waiting>();
  let requeueAt: number | undefined;
  const wake = (t: number) => {
    requeueAt = requeueAt === undefined ? t : Math.min(requeueAt, t);
  };
  const plan = (): PodPlan => ({ actions, waiting, ...(requeueAt !== undefined ? { requeueAfterMs: Math.max(0, requeueAt - now) } : {}) });

  const sandboxReady = runtime?.sandbox.state === 'ready';
  if (!sandboxReady) {
    if (podFinished(pod, runtime)) return plan();
    const failure = failures.get(SANDBOX);
    if (failure) {
      const until = backoff.waitUntil(backoffKey(pod, SANDBOX), failure.at, now);
      if (until !== undefined) {
        for (const c of pod.spec.containers) waiting.set(c.name, backoffWaiting(failure));
        wake(until);
        return plan();
      }
    }
    if (runtime) actions.push({ type: 'killPod', reason: 'the pod sandbox is not running' });
    actions.push({ type: 'createSandbox' });
    for (const c of pod.spec.containers) {
      const rc = runtime?.containers.find((x) => x.name === c.name);
      if (rc?.state === 'exited' && !shouldRestart(pod.spec.restartPolicy, rc.exitCode)) continue;
      actions.push({ type: 'start', container: c.name, attempt: nextAttempt(pod, c, rc) });
    }
    return plan();
  }

  for (const c of pod.spec.containers) {
    const key = backoffKey(pod, c.name);
    const rc = runtime.containers.find((x) => x.name === c.name);
    const failure = failures.get(c.name);

    if (rc?.state === 'running') {
      const verdict = input.probes(rc.id);
      const why = verdict.startupFailed ? 'startup' : verdict.livenessFailed ? 'liveness' : undefined;
      if (why) {
        const grace = (why === 'startup' ? c.startupProbe : c.livenessProbe)?.terminationGracePeriodSeconds ?? pod.spec.terminationGracePeriodSeconds ?? 30;
        actions.push({
          type: 'kill',
          container: c.name,
          gracePeriodSeconds: grace,
          reason: 'Killing',
          message: `Container ${c.name} failed ${why} probe, will be restarted`,
        });
      }
      continue;
    }

    if (rc && rc.state === 'exited' && !shouldRestart(pod.spec.restartPolicy, rc.exitCode)) continue;

    // A start that failed after this instance ended is what the user needs to see.
    const finishedAt = rc?.finishedAt ? Date.parse(rc.finishedAt) : undefined;
    if (failure && (finishedAt === undefined || failure.at >= finishedAt)) {
      const until = backoff.waitUntil(key, failure.at, now);
      if (until !== undefined) {
        waiting.set(c.name, backoffWaiting(failure));
        wake(until);
        continue;
      }
    } else if (rc) {
      const until = backoff.waitUntil(key, finishedAt ?? now, now);
      if (until !== undefined) {
        const delayS = Math.round(backoff.delayMs(key, now) / 1000);
        const m = pod.metadata;
        waiting.set(c.name, {
          reason: 'CrashLoopBackOff',
          message: `back-off ${formatDelay(delayS)} restarting failed container=${c.name} pod=${m.name}_${m.namespace}(${m.uid})`,
        });
        wake(until);
        continue;
      }
    }
    actions.push({ type: 'start', container: c.name, attempt: nextAttempt(pod, c, rc) });
  }
  return plan();
}

/** Go's duration format for whole seconds, as Kubernetes prints back-off delays: 10s, 1m20s, 5m0s. */
export function formatDelay(seconds: number): string {
  if (seconds < 60) return `${seconds}s`;
  return `${Math.floor(seconds / 60)}m${seconds % 60}s`;
}
