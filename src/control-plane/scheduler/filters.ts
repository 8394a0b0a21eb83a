// Filters: can this pod run on this node? One pure function per rule, each answering no reasons (fits) or the reasons kube-scheduler gives.
import type { Taint } from '../../core/api/node.js';
import { getOrCreate } from '../../core/get-or-create.js';
import type { NodeSelectorTerm, Toleration } from '../../core/api/pod.js';
import { TAINT_NOT_READY, toleratesTaint } from '../../core/api/taints.js';
import { matches, requirementsFromExpressions, selectorFromMap, type LabelRequirement, type Selector } from '../../core/api/selector.js';
import type { NodeInfo } from './node-info.js';
import type { PodInfo } from './pod-info.js';
import type { AffinityState } from './inter-pod-affinity.js';

/** kube-scheduler's wording, so that messages read as users know them. */
export const REASONS = {
  notReady: 'node(s) were not ready',
  unschedulable: 'node(s) were unschedulable',
  nodeAffinity: "node(s) didn't match Pod's node affinity/selector",
  ports: "node(s) didn't have free ports for the requested pod ports",
  tooManyPods: 'Too many pods',
  insufficient: (resource: string) => `Insufficient ${resource}`,
  untoleratedTaint: (t: Pick<Taint, 'key' | 'value'>) => `node(s) had untolerated taint {${t.key}: ${t.value ?? ''}}`,
  podAffinity: "node(s) didn't match pod affinity rules",
  podAntiAffinity: "node(s) didn't match pod anti-affinity rules",
  existingAntiAffinity: "node(s) didn't satisfy existing pods anti-affinity rules",
} as const;

/** No reasons: the node passes. Shared, so that passing allocates nothing. */
export const FITS: readonly string[] = Object.freeze([]);

// Fixed answers are shared too: a failing attempt looks at every node, often 1,000 of them.
const NOT_READY: readonly string[] = Object.freeze([REASONS.notReady]);
const UNSCHEDULABLE: readonly string[] = Object.freeze([REASONS.unschedulable]);
const NODE_AFFINITY: readonly string[] = Object.freeze([REASONS.nodeAffinity]);
const PORTS: readonly string[] = Object.freeze([REASONS.ports]);
const POD_AFFINITY: readonly string[] = Object.freeze([REASONS.podAffinity]);
const POD_ANTI_AFFINITY: readonly string[] = Object.freeze([REASONS.podAntiAffinity]);
const EXISTING_ANTI_AFFINITY: readonly string[] = Object.freeze([REASONS.existingAntiAffinity]);

/** A required node-affinity term, compiled: label requirements and metadata.name requirements, ANDed. */
export interface NodeTerm {
  labels: readonly LabelRequirement[];
  names: readonly LabelRequirement[];
  /** A term with nothing in it, or one that failed to compile, matches no node. */
  matchesNothing: boolean;
}

/** What the filters need of the pod, worked out once per scheduling attempt rather than once per node. */
export interface FilterContext {
  pod: PodInfo;
  tolerations: readonly Toleration[];
  nodeSelector?: Selector;
  /** Required node affinity terms (ORed); undefined when the pod has none. */
  nodeAffinity?: readonly NodeTerm[];
  /** Inter-pod affinity counts; undefined when neither the pod nor any bound pod has required terms. */
  affinity?: AffinityState;
}

export type Filter = (ctx: FilterContext, node: NodeInfo) => readonly string[];

export function compileNodeTerm(term: NodeSelectorTerm): NodeTerm {
  const exprs = term.matchExpressions ?? [];
  const fields = term.matchFields ?? [];
  if (exprs.length === 0 && fields.length === 0) return { labels: [], names: [], matchesNothing: true };
  try {
    // Only metadata.name may be matched by field, with In or NotIn, as in Kubernetes.
    if (fields.some((f) => f.key !== 'metadata.name' || (f.operator !== 'In' && f.operator !== 'NotIn'))) {
      return { labels: [], names: [], matchesNothing: true };
    }
    return {
      labels: requirementsFromExpressions(exprs),
      names: fields.map((f) => ({ key: 'name', operator: f.operator as 'In' | 'NotIn', values: f.values ?? [] })),
      matchesNothing: false,
    };
  } catch {
    return { labels: [], names: [], matchesNothing: true };
  }
}

/** The per-attempt context (inter-pod affinity is added by the caller, which sees the cluster). */
export function filterContext(pod: PodInfo): FilterContext {
  const spec = pod.pod.spec;
  const ctx: FilterContext = { pod, tolerations: spec.tolerations ?? [] };
  if (spec.nodeSelector && Object.keys(spec.nodeSelector).length) {
    try {
      ctx.nodeSelector = selectorFromMap(spec.nodeSelector);
    } catch {
      ctx.nodeSelector = { requirements: [{ key: 'invalid', operator: 'In', values: [] }] };
    }
  }
  const terms = spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  if (terms) ctx.nodeAffinity = terms.map(compileNodeTerm);
  return ctx;
}

const NOT_READY_TAINT: Taint = { key: TAINT_NOT_READY, effect: 'NoSchedule' };

/** Ready=True; a pod that tolerates the not-ready taint (as DaemonSet pods do in Kubernetes) may go to a node that is not. */
export function nodeReady(ctx: FilterContext, node: NodeInfo): readonly string[] {
  if (node.ready || ctx.tolerations.some((t) => toleratesTaint(t, NOT_READY_TAINT))) return FITS;
  return NOT_READY;
}

/** Not cordoned (spec.unschedulable). */
export function nodeSchedulable(ctx: FilterContext, node: NodeInfo): readonly string[] {
  if (!node.unschedulable) return FITS;
  // As in Kubernetes, a pod that tolerates the unschedulable taint (DaemonSet-style) may still go there.
  const taint: Taint = { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' };
  return ctx.tolerations.some((t) => toleratesTaint(t, taint)) ? FITS : UNSCHEDULABLE;
}

/** The reason for each taint object, made once (Node objects, and so their taints, live until the node changes). */
const taintReasons = new WeakMap<Taint, readonly string[]>();
function untolerated(taint: Taint): readonly string[] {
  return getOrCreate(taintReasons, taint, () => Object.freeze([REASONS.untoleratedTaint(taint)]));
}

/** NoSchedule and NoExecute taints must be tolerated; PreferNoSchedule is only a preference. */
export function taintsTolerated(ctx: FilterContext, node: NodeInfo): readonly string[] {
  for (const taint of node.taints) {
    if (taint.effect === 'PreferNoSchedule') continue;
    if (!ctx.tolerations.some((t) => toleratesTaint(t, taint))) return untolerated(taint);
  }
  return FITS;
}

export function termMatchesNode(term: NodeTerm, node: Pick<NodeInfo, 'name' | 'labels'>): boolean {
  if (term.matchesNothing) return false;
  if (!matches({ requirements: term.labels }, node.labels)) return false;
  return term.names.length === 0 || matches({ requirements: term.names }, { name: node.name });
}

/** nodeSelector (every label) and required node affinity (any term; every expression of it). */
export function nodeAffinity(ctx: FilterContext, node: NodeInfo): readonly string[] {
  if (ctx.nodeSelector && !matches(ctx.nodeSelector, node.labels)) return NODE_AFFINITY;
  if (ctx.nodeAffinity && !ctx.nodeAffinity.some((term) => termMatchesNode(term, node))) return NODE_AFFINITY;
  return FITS;
}

export function hostPortsFree(ctx: FilterContext, node: NodeInfo): readonly string[] {
  for (const hp of ctx.pod.hostPorts) if (node.portConflict(hp)) return PORTS;
  return FITS;
}

/** Requests of the pods bound here plus this pod's against allocatable: pod count, cpu, memory and any other resource the pod asks for. */
export function resourcesFit(ctx: FilterContext, node: NodeInfo): readonly string[] {
  const reasons: string[] = [];
  const a = node.allocatable;
  if (node.podCount + 1 > a.pods) reasons.push(REASONS.tooManyPods);
  const r = ctx.pod.requests;
  if (r.milliCPU > 0 && r.milliCPU > a.milliCPU - node.requestedMilliCPU) reasons.push(REASONS.insufficient('cpu'));
  if (r.memory > 0 && r.memory > a.memory - node.requestedMemory) reasons.push(REASONS.insufficient('memory'));
  if (r.scalar) {
    for (const [name, n] of Object.entries(r.scalar)) {
      if (n <= 0) continue;
      // Nodes that do not report local storage are not judged on it (Kubernetes checks it only where it is isolated).
      if (name === 'ephemeral-storage' && a.scalar[name] === undefined) continue;
      if (n > (a.scalar[name] ?? 0) - (node.requestedScalar.get(name) ?? 0)) reasons.push(REASONS.insufficient(name));
    }
  }
  return reasons.length ? reasons : FITS;
}

/** Required pod affinity, the pod's own anti-affinity, and the anti-affinity of pods already placed (in kube-scheduler's order). */
export function interPodAffinity(ctx: FilterContext, node: NodeInfo): readonly string[] {
  const state = ctx.affinity;
  if (!state) return FITS;
  if (!state.affinityAllowsAnywhere) {
    for (let i = 0; i < state.affinityCounts.length; i++) {
      const value = node.topologyValue(ctx.pod.affinity[i]!.topologyKey);
      if (value === undefined || !state.affinityCounts[i]!.get(value)) return POD_AFFINITY;
    }
  }
  for (let i = 0; i < state.antiAffinityCounts.length; i++) {
    const value = node.topologyValue(ctx.pod.antiAffinity[i]!.topologyKey);
    if (value !== undefined && state.antiAffinityCounts[i]!.get(value)) return POD_ANTI_AFFINITY;
  }
  for (const [key, values] of state.existingAntiAffinity) {
    const value = node.topologyValue(key);
    if (value !== undefined && values.get(value)) return EXISTING_ANTI_AFFINITY;
  }
  return FITS;
}

/** In the order kube-scheduler runs them; a node's reasons are those of the first filter it fails. */
export const FILTERS: readonly (readonly [string, Filter])[] = [
  ['NodeReady', nodeReady],
  ['NodeUnschedulable', nodeSchedulable],
  ['TaintToleration', taintsTolerated],
  ['NodeAffinity', nodeAffinity],
  ['NodePorts', hostPortsFree],
  ['NodeResourcesFit', resourcesFit],
  ['InterPodAffinity', interPodAffinity],
];

/** Runs every filter; FITS when the node passes them all. */
export function runFilters(ctx: FilterContext, node: NodeInfo): readonly string[] {
  for (const [, filter] of FILTERS) {
    const reasons = filter(ctx, node);
    if (reasons.length) return reasons;
  }
  return FITS;
}
