// Which pods of a function may take requests, which the activator should probe itself, and which one gets the next request.
import type { Pod } from '../../core/api/pod.js';
import { isPodReady } from '../../core/api/pod.js';
import { podCrash } from './fail-fast.js';

/** On the function's ReplicaSets and pods (set by the function controller). */
export const FUNCTION_LABEL = 'minik8s.io/function';
export const VERSION_LABEL = 'minik8s.io/function-version';
/** The runtime's port when the pod names none. */
export const RUNTIME_PORT = 8080;

export interface PodFacts {
  /** `namespace/name`. */
  key: string;
  uid: string;
  /** `namespace/function`. */
  functionKey: string;
  version: number;
  ip?: string;
  port: number;
  /** The kubelet's Ready condition is True. */
  kubeletReady: boolean;
  deleting: boolean;
  finished: boolean;
  /** Its runtime exited and is not running now (why, from the container's status). */
  crash?: string;
}

/** A pod of a function as the activator sees it; undefined for pods of no function. */
export function podFacts(pod: Pod): PodFacts | undefined {
  const labels = pod.metadata.labels ?? {};
  const fn = labels[FUNCTION_LABEL];
  if (!fn) return undefined;
  const ns = pod.metadata.namespace ?? 'default';
  const ports = pod.spec.containers.flatMap((c) => c.ports ?? []);
  const port = (ports.find((p) => p.name === 'http') ?? ports[0])?.containerPort ?? RUNTIME_PORT;
  const phase = pod.status?.phase;
  const crash = podCrash(pod);
  return {
    key: `${ns}/${pod.metadata.name}`,
    uid: pod.metadata.uid ?? pod.metadata.name!,
    functionKey: `${ns}/${fn}`,
    version: Number(labels[VERSION_LABEL] ?? 0) || 0,
    ip: pod.status?.podIP || undefined,
    port,
    kubeletReady: isPodReady(pod),
    deleting: Boolean(pod.metadata.deletionTimestamp),
    finished: phase === 'Succeeded' || phase === 'Failed',
    ...(crash ? { crash } : {}),
  };
}

export interface ProbeView {
  /** Pods whose /healthz answered the activator's own probe. */
  probedHealthy: ReadonlySet<string>;
  /** Pods the kubelet has called Ready at least once: from then on its word alone counts. */
  everKubeletReady: ReadonlySet<string>;
}

/**
 * May take requests: has an address, is not going, and is Ready by the kubelet, or (before the
 * kubelet has ever said so) answered the activator's own health probe, which is how a cold
 * start skips the kubelet's probe period and status round trip, as Knative's activator does.
 */
export function isServing(p: PodFacts, probes: ProbeView): boolean {
  if (!p.ip || p.deleting || p.finished) return false;
  return p.kubeletReady || (probes.probedHealthy.has(p.uid) && !probes.everKubeletReady.has(p.uid));
}

/** Pods worth probing directly: an address but not yet serving, never called Ready by the kubelet. */
export function needsProbe(p: PodFacts, probes: ProbeView): boolean {
  return Boolean(p.ip) && !p.deleting && !p.finished && !p.kubeletReady && !probes.everKubeletReady.has(p.uid) && !probes.probedHealthy.has(p.uid);
}

/**
 * The pods requests go to: the current version's serving pods when it has any, else any
 * serving pod (the old version's during a soft update, until the new one's are ready).
 */
export function servingPods(pods: readonly PodFacts[], probes: ProbeView, currentVersion: number | undefined): PodFacts[] {
  const serving = pods.filter((p) => isServing(p, probes));
  if (currentVersion === undefined) return serving;
  const current = serving.filter((p) => p.version === currentVersion);
  return current.length ? current : serving;
}

/**
 * Least requests in flight first; among equals, the one after the previous choice (`turn`
 * rotates), so that an idle function's requests still spread. Pods in `exclude` (one that
 * refused this request a moment ago) are skipped.
 */
export function pickPod<T extends { key: string }>(
  pods: readonly T[],
  inFlight: (key: string) => number,
  turn: number,
  exclude?: ReadonlySet<string>,
): T | undefined {
  let best: T | undefined;
  let bestLoad = Infinity;
  const n = pods.length;
  for (let i = 0; i < n; i++) {
    const p = pods[(turn + i) % n]!;
    if (exclude?.has(p.key)) continue;
    const load = inFlight(p.key);
    if (load < bestLoad) {
      best = p;
      bestLoad = load;
    }
  }
  return best;
}
