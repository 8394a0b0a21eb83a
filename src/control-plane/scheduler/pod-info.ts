// What the scheduler needs of a pod, computed once per pod version: resource requests, host ports, compiled affinity terms.
import type { Container, Pod, PodAffinityTerm } from '../../core/api/pod.js';
import { parseQuantity, toMilli } from '../../core/api/quantity.js';
import { matches, selectorFromLabelSelector, type Selector } from '../../core/api/selector.js';

/** Kubernetes' stand-ins for a container that requests nothing, used only for scoring (so such pods still spread). */
export const DEFAULT_MILLI_CPU_REQUEST = 100;
export const DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024;

export interface Resources {
  milliCPU: number;
  memory: number;
  /** Other resources by name (nvidia.com/gpu, ephemeral-storage, ...), in base units. */
  scalar?: Readonly<Record<string, number>>;
}

export interface HostPort {
  /** '0.0.0.0' when the port is bound on every address. */
  ip: string;
  protocol: string;
  port: number;
}

/** Where a term looks for pods: its namespaces, or namespaces whose labels match, or all. */
export interface NamespaceScope {
  names: ReadonlySet<string>;
  /** Namespaces whose labels match also count; an empty selector means every namespace. */
  selector?: Selector;
}

/** A required (anti-)affinity term, ready to match pods against. */
export interface AffinityTerm {
  /** Undefined: the term has no labelSelector, which matches no pod (as in Kubernetes). */
  selector?: Selector;
  namespaces: NamespaceScope;
  topologyKey: string;
}

export interface PodInfo {
  /** `namespace/name`. */
  key: string;
  uid: string;
  namespace: string;
  name: string;
  labels: Readonly<Record<string, string>>;
  nodeName: string;
  /** What the resource fit filter checks. */
  requests: Resources;
  /** Requests with Kubernetes' defaults for containers that request nothing: what scores look at. */
  nonZero: { milliCPU: number; memory: number };
  hostPorts: readonly HostPort[];
  affinity: readonly AffinityTerm[];
  antiAffinity: readonly AffinityTerm[];
  pod: Pod;
}

const quantityOr0 = (q: string | number | undefined, milli: boolean): number => {
  if (q === undefined) return 0;
  try {
    return milli ? toMilli(q) : parseQuantity(q);
  } catch {
    return 0;
  }
};

function containerRequests(c: Container): Resources & { nonZero: { milliCPU: number; memory: number } } {
  const req = c.resources?.requests ?? {};
  const scalar: Record<string, number> = {};
  for (const [name, q] of Object.entries(req)) {
    if (name !== 'cpu' && name !== 'memory') scalar[name] = quantityOr0(q, false);
  }
  const milliCPU = quantityOr0(req.cpu, true);
  const memory = quantityOr0(req.memory, false);
  return {
    milliCPU,
    memory,
    scalar,
    nonZero: {
      milliCPU: req.cpu === undefined ? DEFAULT_MILLI_CPU_REQUEST : milliCPU,
      memory: req.memory === undefined ? DEFAULT_MEMORY_REQUEST : memory,
    },
  };
}

/**
 * Kubernetes' effective pod request: app containers run together, so their requests add up;
 * init containers run one at a time before them, so the pod needs the larger of the sum and
 * the biggest init container.
 */
export function podRequests(pod: Pod): { requests: Resources; nonZero: { milliCPU: number; memory: number } } {
  const sum = { milliCPU: 0, memory: 0, scalar: {} as Record<string, number>, nonZero: { milliCPU: 0, memory: 0 } };
  for (const c of pod.spec.containers) {
    const r = containerRequests(c);
    sum.milliCPU += r.milliCPU;
    sum.memory += r.memory;
    sum.nonZero.milliCPU += r.nonZero.milliCPU;
    sum.nonZero.memory += r.nonZero.memory;
    for (const [k, n] of Object.entries(r.scalar ?? {})) sum.scalar[k] = (sum.scalar[k] ?? 0) + n;
  }
  for (const c of pod.spec.initContainers ?? []) {
    const r = containerRequests(c);
    sum.milliCPU = Math.max(sum.milliCPU, r.milliCPU);
    sum.memory = Math.max(sum.memory, r.memory);
    sum.nonZero.milliCPU = Math.max(sum.nonZero.milliCPU, r.nonZero.milliCPU);
    sum.nonZero.memory = Math.max(sum.nonZero.memory, r.nonZero.memory);
    for (const [k, n] of Object.entries(r.scalar ?? {})) sum.scalar[k] = Math.max(sum.scalar[k] ?? 0, n);
  }
  const requests: Resources = { milliCPU: sum.milliCPU, memory: sum.memory };
  if (Object.keys(sum.scalar).length) requests.scalar = sum.scalar;
  return { requests, nonZero: sum.nonZero };
}

/** Host ports the pod binds on its node; with hostNetwork every container port is one. */
export function podHostPorts(pod: Pod): HostPort[] {
  const out: HostPort[] = [];
  for (const c of [...(pod.spec.initContainers ?? []), ...pod.spec.containers]) {
    for (const p of c.ports ?? []) {
      const port = p.hostPort ?? (pod.spec.hostNetwork ? p.containerPort : undefined);
      if (!port) continue;
      out.push({ ip: p.hostIP || '0.0.0.0', protocol: p.protocol || 'TCP', port });
    }
  }
  return out;
}

/** Compiles a term; a selector that cannot be compiled matches nothing rather than failing the pod. */
export function compileTerm(term: PodAffinityTerm, ownNamespace: string): AffinityTerm {
  let selector: Selector | undefined;
  try {
    selector = term.labelSelector ? selectorFromLabelSelector(term.labelSelector) : undefined;
  } catch {
    selector = undefined;
  }
  const names = new Set(term.namespaces ?? []);
  let nsSelector: Selector | undefined;
  if (term.namespaceSelector) {
    try {
      nsSelector = selectorFromLabelSelector(term.namespaceSelector);
    } catch {
      nsSelector = undefined;
    }
  }
  // Neither a list nor a selector: the namespace of the pod that has the term.
  if (names.size === 0 && !term.namespaceSelector) names.add(ownNamespace);
  return { selector, namespaces: { names, ...(nsSelector ? { selector: nsSelector } : {}) }, topologyKey: term.topologyKey };
}

/** Whether a term (of a pod in some namespace) selects `target`; namespace labels come from the cluster. */
export function termMatches(
  term: AffinityTerm,
  target: Pick<PodInfo, 'namespace' | 'labels'>,
  namespaceLabels: (ns: string) => Readonly<Record<string, string>> | undefined,
): boolean {
  if (!term.selector) return false;
  const scope = term.namespaces;
  let inScope = scope.names.has(target.namespace);
  if (!inScope && scope.selector) inScope = matches(scope.selector, namespaceLabels(target.namespace) ?? {});
  return inScope && matches(term.selector, target.labels);
}

/** Everything the scheduler keeps about a pod. */
export function podInfo(pod: Pod): PodInfo {
  const namespace = pod.metadata.namespace ?? 'default';
  const name = pod.metadata.name ?? '';
  const { requests, nonZero } = podRequests(pod);
  const affinity = pod.spec.affinity;
  return {
    key: `${namespace}/${name}`,
    uid: pod.metadata.uid ?? '',
    namespace,
    name,
    labels: pod.metadata.labels ?? {},
    nodeName: pod.spec.nodeName ?? '',
    requests,
    nonZero,
    hostPorts: podHostPorts(pod),
    affinity: (affinity?.podAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []).map((t) => compileTerm(t, namespace)),
    antiAffinity: (affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []).map((t) => compileTerm(t, namespace)),
    pod,
  };
}
