// One scheduling decision, pure: filter every node, rank those that fit by the policy, or explain per node why none does.
import { filterContext, runFilters } from './filters.js';
import { affinityState } from './inter-pod-affinity.js';
import type { NodeInfo } from './node-info.js';
import type { PodInfo } from './pod-info.js';
import type { ClusterView } from './scheduler-cache.js';
import { POLICY_SCORES, type SchedulerPolicy } from './scores.js';

/** Carried from one decision to the next: where the rotation over the nodes stands. */
export interface SchedulingState {
  /**
   * The next search starts at the first node named after this one (wrapping around): the node
   * round-robin chose last, or the last node the other policies looked at.
   */
  after?: string;
}

export type ScheduleResult =
  | { nodeName: string; state: SchedulingState }
  | { nodeName?: undefined; message: string; reasons: ReadonlyMap<string, number>; state: SchedulingState };

export const NO_NODES_MESSAGE = 'no nodes available to schedule pods';

/**
 * kube-scheduler's FitError text: "0/3 nodes are available: 2 Insufficient memory, 1 node(s) had
 * untolerated taint {k: v}." Each node counts once per reason of the filter it failed; the parts
 * are sorted by reason text.
 */
export function unschedulableMessage(totalNodes: number, reasons: ReadonlyMap<string, number>): string {
  if (totalNodes === 0) return NO_NODES_MESSAGE;
  const parts = [...reasons].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([reason, n]) => `${n} ${reason}`);
  return `0/${totalNodes} nodes are available: ${parts.join(', ')}.`;
}

/** Index of the first node whose name sorts after `name` (0 when none does: the rotation wraps). */
function rotationStart(nodes: readonly NodeInfo[], name: string | undefined): number {
  if (name === undefined) return 0;
  let lo = 0;
  let hi = nodes.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (nodes[mid]!.name <= name) lo = mid + 1;
    else hi = mid;
  }
  return lo === nodes.length ? 0 : lo;
}

/** Kubernetes never filters more than this many nodes in a small cluster... */
const MIN_FEASIBLE_NODES = 100;
/** ...nor fewer than this share of a big one. */
const MIN_FEASIBLE_PERCENT = 5;

/**
 * kube-scheduler's percentageOfNodesToScore, adaptive: in a big cluster it stops filtering once
 * it has found this many nodes that fit (50% less 1% per 125 nodes, at least 5% and 100 nodes)
 * and scores only those; the next pod carries on from where this one stopped, so every node
 * gets its turn. 420 nodes of 1,000; all of them below 100.
 */
export function feasibleNodesToFind(total: number): number {
  if (total < MIN_FEASIBLE_NODES) return total;
  const percent = Math.max(MIN_FEASIBLE_PERCENT, 50 - Math.floor(total / 125));
  return Math.max(MIN_FEASIBLE_NODES, Math.floor((total * percent) / 100));
}

/**
 * Filters the nodes in name order, starting after where the last decision stopped, O(1) each
 * (inter-pod affinity adds one pass over the pods when terms exist), then picks: round-robin
 * takes the first node that fits; the other policies score the nodes that fit (up to
 * feasibleNodesToFind) and take the best, ties going to the first found.
 */
export function schedule(pod: PodInfo, cluster: ClusterView, policy: SchedulerPolicy, state: SchedulingState): ScheduleResult {
  const nodes = cluster.nodes();
  if (nodes.length === 0) return { message: NO_NODES_MESSAGE, reasons: new Map(), state };
  const ctx = filterContext(pod);
  ctx.affinity = affinityState(pod, cluster);
  const score = policy === 'round-robin' ? undefined : POLICY_SCORES[policy];
  const start = rotationStart(nodes, state.after);
  const wanted = score ? feasibleNodesToFind(nodes.length) : 1;
  const reasons = new Map<string, number>();
  let best: NodeInfo | undefined;
  let bestScore = -Infinity;
  let found = 0;
  let last = start;
  for (let n = 0; n < nodes.length && found < wanted; n++) {
    last = (start + n) % nodes.length;
    const node = nodes[last]!;
    const failed = runFilters(ctx, node);
    if (failed.length) {
      for (const r of failed) reasons.set(r, (reasons.get(r) ?? 0) + 1);
      continue;
    }
    found++;
    const s = score ? score(pod, node) : 0;
    if (s > bestScore) {
      best = node;
      bestScore = s;
    }
  }
  if (best) return { nodeName: best.name, state: { after: nodes[last]!.name } };
  return { message: unschedulableMessage(nodes.length, reasons), reasons, state };
}
