// The status the kubelet reports for a pod: phase, conditions, IPs and container states, from runtime facts alone.
import type { Condition } from '../../core/api/meta.js';
import { podQosClass, type ContainerState, type ContainerStatus, type Pod, type PodStatus } from '../../core/api/pod.js';
import type { RuntimeContainer, RuntimePod } from '../../runtime/provider.js';
import type { Waiting } from './pod-actions.js';

/** What the probers say about a container instance for status: readiness and startup. */
export interface ProbeStatus {
  ready: boolean;
  started: boolean;
}

export interface StatusInput {
  pod: Pod;
  runtime: RuntimePod | undefined;
  nodeIP: string;
  waiting: ReadonlyMap<string, Waiting>;
  probes(containerID: string): ProbeStatus;
  now: Date;
}

const CONTAINER_ID_PREFIX = 'docker://';

function terminated(rc: Omit<RuntimeContainer, 'previous'>): ContainerState {
  return {
    terminated: {
      exitCode: rc.exitCode ?? 0,
      reason: rc.reason ?? (rc.exitCode === 0 ? 'Completed' : 'Error'),
      ...(rc.message ? { message: rc.message } : {}),
      ...(rc.startedAt ? { startedAt: rc.startedAt } : {}),
      ...(rc.finishedAt ? { finishedAt: rc.finishedAt } : {}),
      containerID: CONTAINER_ID_PREFIX + rc.id,
    },
  };
}

function containerStatus(input: StatusInput, name: string, image: string): ContainerStatus {
  const rc = input.runtime?.containers.find((c) => c.name === name);
  const wait = input.waiting.get(name);
  const previous = input.pod.status?.containerStatuses?.find((s) => s.name === name);
  if (!rc) {
    return {
      name,
      state: { waiting: { reason: wait?.reason ?? 'ContainerCreating', ...(wait?.message ? { message: wait.message } : {}) } },
      ...(previous?.lastState && Object.keys(previous.lastState).length ? { lastState: previous.lastState } : {}),
      ready: false,
      started: false,
      restartCount: previous?.restartCount ?? 0,
      image,
    };
  }
  const base = {
    name,
    restartCount: rc.attempt,
    image,
    ...(rc.imageID ? { imageID: rc.imageID } : {}),
    containerID: CONTAINER_ID_PREFIX + rc.id,
    // As Kubernetes 1.31+: the ids the process actually got, image groups included.
    ...(rc.user ? { user: { linux: rc.user } } : {}),
  };
  if (rc.state === 'running' || rc.state === 'created') {
    const probe = input.probes(rc.id);
    return {
      ...base,
      state: rc.state === 'running' ? { running: { ...(rc.startedAt ? { startedAt: rc.startedAt } : {}) } } : { waiting: { reason: 'ContainerCreating' } },
      lastState: rc.previous ? terminated(rc.previous) : {},
      ready: rc.state === 'running' && probe.started && probe.ready,
      started: rc.state === 'running' && probe.started,
    };
  }
  if (wait) {
    // Waiting to restart (CrashLoopBackOff): the instance that ended is the last state.
    return {
      ...base,
      state: { waiting: { reason: wait.reason, ...(wait.message ? { message: wait.message } : {}) } },
      lastState: terminated(rc),
      ready: false,
      started: false,
    };
  }
  return { ...base, state: terminated(rc), lastState: rc.previous ? terminated(rc.previous) : {}, ready: false, started: false };
}

/** Kubernetes' getPhase: waiting containers keep a pod Pending; a restartable exit keeps it Running. */
export function podPhase(pod: Pod, statuses: readonly ContainerStatus[]): NonNullable<PodStatus['phase']> {
  let running = 0,
    waiting = 0,
    stopped = 0,
    succeeded = 0;
  for (const s of statuses) {
    if (s.state?.running) running++;
    else if (s.state?.terminated) {
      stopped++;
      if (s.state.terminated.exitCode === 0) succeeded++;
    } else if (s.state?.waiting) {
      if (s.lastState?.terminated) stopped++;
      else waiting++;
    } else waiting++;
  }
  if (waiting > 0) return 'Pending';
  if (running > 0) return 'Running';
  if (stopped > 0) {
    if (pod.spec.restartPolicy === 'Always') return 'Running';
    if (stopped === succeeded) return 'Succeeded';
    return pod.spec.restartPolicy === 'OnFailure' ? 'Running' : 'Failed';
  }
  return 'Pending';
}

function condition(previous: readonly Condition[] | undefined, now: string, type: string, ok: boolean, reason?: string, message?: string): Condition {
  const status = ok ? 'True' : 'False';
  const before = previous?.find((c) => c.type === type);
  // The transition time moves only when the status does.
  const lastTransitionTime = before && before.status === status && before.lastTransitionTime ? before.lastTransitionTime : now;
  return { type, status, lastProbeTime: null, lastTransitionTime, ...(!ok && reason ? { reason } : {}), ...(!ok && message ? { message } : {}) } as Condition;
}

/** The pod conditions the kubelet (and the scheduler, for PodScheduled) owns; any other type is set by someone else. */
const KUBELET_CONDITIONS = new Set(['Initialized', 'Ready', 'ContainersReady', 'PodScheduled']);

/**
 * Kubernetes' readiness gates: each `spec.readinessGates[].conditionType` must be a True
 * condition in the pod's status, set by whoever owns it; the messages are the kubelet's.
 */
export function unmetReadinessGates(pod: Pod): string[] {
  const unmet: string[] = [];
  for (const gate of pod.spec.readinessGates ?? []) {
    const c = pod.status?.conditions?.find((x) => x.type === gate.conditionType);
    if (!c) unmet.push(`corresponding condition of pod readiness gate "${gate.conditionType}" does not exist.`);
    else if (c.status !== 'True') unmet.push(`the status of pod readiness gate "${gate.conditionType}" is not "True", but ${c.status}`);
  }
  return unmet;
}

export function computePodStatus(input: StatusInput): PodStatus {
  const { pod, runtime } = input;
  const now = input.now.toISOString();
  const statuses = pod.spec.containers.map((c) => containerStatus(input, c.name, c.image));
  const phase = podPhase(pod, statuses);
  const unready = statuses.filter((s) => !s.ready).map((s) => s.name);
  const finished = phase === 'Succeeded' || phase === 'Failed';
  const containersReady = unready.length === 0 && !finished;
  const previous = pod.status?.conditions;
  const notReadyMessage = `containers with unready status: [${unready.join(' ')}]`;
  const gates = containersReady ? unmetReadinessGates(pod) : [];
  const ready = containersReady && gates.length === 0;
  const conditions = [
    condition(previous, now, 'Initialized', true),
    gates.length > 0
      ? condition(previous, now, 'Ready', false, 'ReadinessGatesNotReady', gates.join(', '))
      : condition(previous, now, 'Ready', ready, finished ? 'PodCompleted' : 'ContainersNotReady', finished ? undefined : notReadyMessage),
    condition(previous, now, 'ContainersReady', containersReady, finished ? 'PodCompleted' : 'ContainersNotReady', finished ? undefined : notReadyMessage),
    condition(previous, now, 'PodScheduled', true),
    // Conditions others own (readiness gates' among them) are theirs to set: the kubelet keeps them as they are.
    ...(previous ?? []).filter((c) => !KUBELET_CONDITIONS.has(c.type)),
  ];
  const podIP = runtime?.sandbox.state === 'ready' ? runtime.sandbox.ip : undefined;
  return {
    phase,
    conditions,
    hostIP: input.nodeIP,
    hostIPs: [{ ip: input.nodeIP }],
    ...(podIP ? { podIP, podIPs: [{ ip: podIP }] } : {}),
    startTime: pod.status?.startTime ?? now,
    containerStatuses: statuses,
    qosClass: podQosClass(pod.spec),
  };
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([, v]) => v !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([k, v]) => [k, canonical(v)]),
    );
  }
  return value;
}

/** The kubelet writes status only when it differs; key order is the server's business, so it is ignored. */
export function sameStatus(a: PodStatus | undefined, b: PodStatus): boolean {
  return JSON.stringify(canonical(a ?? {})) === JSON.stringify(canonical(b));
}
