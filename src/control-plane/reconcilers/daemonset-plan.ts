// DaemonSet decisions, pure: which nodes should run a daemon pod, which pods to create or delete, one rolling-update step, and the status.
import { isDeepStrictEqual } from 'node:util';
import { CONTROLLER_REVISION_HASH_LABEL, POD_TEMPLATE_GENERATION_LABEL, type DaemonSet, type DaemonSetStatus } from '../../core/api/daemonset.js';
import { resolveIntOrPercent } from '../../core/api/deployment.js';
import type { OwnerReference } from '../../core/api/meta.js';
import type { Node, Taint } from '../../core/api/node.js';
import { isPodReady, podReadyCondition, type Pod, type Toleration } from '../../core/api/pod.js';
import { matches, selectorFromLabelSelector, selectorFromMap, type Selector } from '../../core/api/selector.js';
import { TAINT_NOT_READY, TAINT_UNREACHABLE, toleratesTaint } from '../../core/api/taints.js';
import { compileNodeTerm } from '../scheduler/filters.js';
import { podTemplateHash } from './deployment.js';
import { controllerRef } from './replicaset.js';

/**
 * The tolerations Kubernetes adds to every daemon pod: it stays through node outages and
 * pressure, and it still goes to (and stays on) cordoned nodes, because it serves the node itself.
 */
export const DAEMON_TOLERATIONS: readonly Toleration[] = [
  { key: TAINT_NOT_READY, operator: 'Exists', effect: 'NoExecute' },
  { key: TAINT_UNREACHABLE, operator: 'Exists', effect: 'NoExecute' },
  { key: 'node.kubernetes.io/disk-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/pid-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' },
];
/** Only host-network daemon pods tolerate a node whose pod network is not up. */
const NETWORK_UNAVAILABLE: Toleration = { key: 'node.kubernetes.io/network-unavailable', operator: 'Exists', effect: 'NoSchedule' };

/** The template's tolerations plus the daemon ones it does not have already. */
export function daemonTolerations(ds: DaemonSet): Toleration[] {
  const own = ds.spec.template.spec.tolerations ?? [];
  const extra = ds.spec.template.spec.hostNetwork ? [...DAEMON_TOLERATIONS, NETWORK_UNAVAILABLE] : DAEMON_TOLERATIONS;
  return [...own, ...extra.filter((t) => !own.some((o) => o.key === t.key && o.effect === t.effect))];
}

export function ownerReferenceToDaemonSet(ds: DaemonSet): OwnerReference {
  return { apiVersion: 'apps/v1', kind: 'DaemonSet', name: ds.metadata.name!, uid: ds.metadata.uid!, controller: true, blockOwnerDeletion: true };
}

/** The hash of the DaemonSet's current template: pods labelled with another are old. */
export function daemonSetHash(ds: DaemonSet): string {
  return podTemplateHash(ds.spec.template, ds.status?.collisionCount ?? 0);
}

/** Where a daemon pod goes: its node, or before binding the node its affinity names (Kubernetes' GetTargetNodeName). */
export function targetNodeName(pod: Pod): string | undefined {
  if (pod.spec.nodeName) return pod.spec.nodeName;
  for (const term of pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? []) {
    for (const field of term.matchFields ?? []) {
      if (field.key === 'metadata.name' && field.operator === 'In' && field.values?.length === 1) return field.values[0];
    }
  }
  return undefined;
}

export interface NodePlacement {
  /** A new daemon pod belongs here. */
  shouldRun: boolean;
  /** A daemon pod already here may stay (only a NoExecute taint it does not tolerate, or the selector, sends it away). */
  shouldContinueRunning: boolean;
}

/**
 * Kubernetes' nodeShouldRunDaemonPod: the template's nodeSelector and required node affinity
 * must match the node; NoSchedule and NoExecute taints must be tolerated for a new pod, only
 * NoExecute ones for a pod already there. Cordoning is tolerated (daemon tolerations).
 */
export function placement(ds: DaemonSet, node: Node, tolerations: readonly Toleration[] = daemonTolerations(ds)): NodePlacement {
  const spec = ds.spec.template.spec;
  const labels = node.metadata.labels ?? {};
  const no = { shouldRun: false, shouldContinueRunning: false };
  if (spec.nodeName && spec.nodeName !== node.metadata.name) return no;
  if (spec.nodeSelector && Object.keys(spec.nodeSelector).length > 0) {
    let selector: Selector;
    try {
      selector = selectorFromMap(spec.nodeSelector);
    } catch {
      return no;
    }
    if (!matches(selector, labels)) return no;
  }
  const terms = spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  if (terms) {
    const fits = terms.map(compileNodeTerm).some((term) => {
      if (term.matchesNothing || !matches({ requirements: term.labels }, labels)) return false;
      return term.names.length === 0 || matches({ requirements: term.names }, { name: node.metadata.name! });
    });
    if (!fits) return no;
  }
  const tolerated = (taint: Taint) => tolerations.some((t) => toleratesTaint(t, taint));
  const taints = node.spec?.taints ?? [];
  const noExecuteOk = taints.every((t) => t.effect !== 'NoExecute' || tolerated(t));
  const noScheduleOk = taints.every((t) => t.effect !== 'NoSchedule' || tolerated(t));
  return { shouldRun: noExecuteOk && noScheduleOk, shouldContinueRunning: noExecuteOk };
}

export type DaemonSetAction =
  | { type: 'adopt'; pod: Pod; ownerReferences: OwnerReference[] }
  | { type: 'release'; pod: Pod; ownerReferences: OwnerReference[] }
  /** A pod of the current template for each node. */
  | { type: 'create'; nodes: string[] }
  | { type: 'delete'; pods: Pod[] };

export interface DaemonSetPlan {
  actions: DaemonSetAction[];
  status: DaemonSetStatus;
  /** When a Ready pod will have been Ready for minReadySeconds (look again then). */
  recheckAfterMs?: number;
}

function created(pod: Pod): number {
  const t = pod.metadata.creationTimestamp;
  return t ? Date.parse(t) : 0;
}

function oldestFirst(a: Pod, b: Pod): number {
  return created(a) - created(b) || (a.metadata.name ?? '').localeCompare(b.metadata.name ?? '');
}

/** Ready for minReadySeconds by `now`; otherwise how long until it will be (undefined when not Ready at all). */
function availability(pod: Pod, minReadyMs: number, now: number): { available: boolean; waitMs?: number } {
  if (!isPodReady(pod)) return { available: false };
  if (minReadyMs === 0) return { available: true };
  const since = Date.parse(podReadyCondition(pod)?.lastTransitionTime ?? '') || 0;
  const wait = since + minReadyMs - now;
  return wait <= 0 ? { available: true } : { available: false, waitMs: wait };
}

/**
 * Pure decision for one DaemonSet given all nodes and the pods of its namespace. Claims pods
 * as the ReplicaSet controller does; per node, creates the missing pod, deletes failed and
 * surplus pods and pods on nodes they may no longer run on; then takes one rolling-update step
 * within maxUnavailable (delete old pods, their nodes get new ones on the next pass) or maxSurge
 * (start the new pod beside the old one, delete the old one once the new one is available).
 */
export function planDaemonSet(ds: DaemonSet, nodes: readonly Node[], pods: readonly Pod[], now: Date): DaemonSetPlan {
  const uid = ds.metadata.uid;
  const deleting = !!ds.metadata.deletionTimestamp;
  let selector: Selector | undefined;
  try {
    selector = selectorFromLabelSelector(ds.spec.selector);
  } catch {
    selector = undefined;
  }
  const actions: DaemonSetAction[] = [];
  const owned: Pod[] = [];
  for (const pod of pods) {
    if (pod.metadata.namespace !== ds.metadata.namespace) continue;
    const ref = controllerRef(pod);
    const matching = !!selector && matches(selector, pod.metadata.labels);
    if (ref) {
      if (ref.uid !== uid) continue;
      if (matching) owned.push(pod);
      else if (!pod.metadata.deletionTimestamp) {
        actions.push({ type: 'release', pod, ownerReferences: (pod.metadata.ownerReferences ?? []).filter((r) => r.uid !== uid) });
      }
    } else if (matching && !deleting && !pod.metadata.deletionTimestamp) {
      actions.push({ type: 'adopt', pod, ownerReferences: [...(pod.metadata.ownerReferences ?? []), ownerReferenceToDaemonSet(ds)] });
      owned.push(pod);
    }
  }

  const hash = daemonSetHash(ds);
  const isNew = (pod: Pod) => pod.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL] === hash;
  const minReadyMs = ds.spec.minReadySeconds * 1000;
  const nowMs = now.getTime();
  const byNode = new Map<string, Pod[]>();
  const deletes: Pod[] = [];
  for (const pod of owned) {
    if (pod.metadata.deletionTimestamp) continue;
    const node = targetNodeName(pod);
    if (node === undefined) {
      deletes.push(pod);
      continue;
    }
    const list = byNode.get(node) ?? [];
    list.push(pod);
    byNode.set(node, list);
  }

  const tolerations = daemonTolerations(ds);
  const rolling = ds.spec.updateStrategy.type === 'RollingUpdate' ? ds.spec.updateStrategy.rollingUpdate : undefined;
  const creates: string[] = [];
  /** The one (or, while surging, two) pods kept on each node that should run one. */
  const kept = new Map<string, Pod[]>();
  let desired = 0;
  let misscheduled = 0;
  const known = new Set<string>();
  for (const node of nodes) {
    const name = node.metadata.name!;
    known.add(name);
    const { shouldRun, shouldContinueRunning } = placement(ds, node, tolerations);
    if (shouldRun) desired++;
    const here = byNode.get(name) ?? [];
    if (!shouldRun && here.length > 0) misscheduled++;
    if (!shouldContinueRunning) {
      deletes.push(...here);
      continue;
    }
    // Failed daemon pods are replaced (Kubernetes deletes them and makes a new one).
    const running = here.filter((p) => p.status?.phase !== 'Failed' && p.status?.phase !== 'Succeeded');
    deletes.push(...here.filter((p) => !running.includes(p)));
    if (running.length === 0) {
      if (shouldRun) creates.push(name);
      continue;
    }
    running.sort(oldestFirst);
    // Keep the oldest pod; while a surge is allowed also the oldest new pod beside an old one.
    const keep = [running[0]!];
    const newest = running.find(isNew);
    if (rolling && resolveIntOrPercent(rolling.maxSurge, { total: 1, roundUp: true }) > 0 && newest && !isNew(running[0]!)) keep.push(newest);
    deletes.push(...running.filter((p) => !keep.includes(p)));
    kept.set(name, keep);
  }
  // Pods aimed at nodes that are gone: nothing else would remove the ones not yet bound.
  for (const [name, list] of byNode) if (!known.has(name)) deletes.push(...list);

  // One rolling-update step over the nodes that keep pods.
  let recheckAfterMs: number | undefined;
  const availableOf = (pod: Pod) => {
    const a = availability(pod, minReadyMs, nowMs);
    if (a.waitMs !== undefined) recheckAfterMs = Math.min(recheckAfterMs ?? Infinity, a.waitMs);
    return a.available;
  };
  if (rolling && !deleting) {
    let maxUnavailable = resolveIntOrPercent(rolling.maxUnavailable, { total: desired, roundUp: true });
    const maxSurge = resolveIntOrPercent(rolling.maxSurge, { total: desired, roundUp: true });
    if (maxUnavailable === 0 && maxSurge === 0) maxUnavailable = 1;
    const schedulable = nodes.filter((n) => placement(ds, n, tolerations).shouldRun).map((n) => n.metadata.name!);
    if (maxSurge === 0) {
      // Nodes without an available pod are unavailable already; old pods that are not available go first, for free.
      let unavailable = schedulable.filter((n) => !(kept.get(n) ?? []).some(availableOf)).length;
      const oldAvailable: Pod[] = [];
      for (const name of schedulable) {
        const pod = kept.get(name)?.[0];
        if (!pod || isNew(pod)) continue;
        if (availableOf(pod)) oldAvailable.push(pod);
        else deletes.push(pod);
      }
      for (const pod of oldAvailable) {
        if (unavailable >= maxUnavailable) break;
        deletes.push(pod);
        unavailable++;
      }
    } else {
      let surging = 0;
      const candidates: string[] = [];
      for (const name of schedulable) {
        const list = kept.get(name) ?? [];
        const old = list.find((p) => !isNew(p));
        const fresh = list.find(isNew);
        if (!old) continue;
        if (fresh) {
          if (availableOf(fresh)) deletes.push(old);
          else surging++;
        } else if (!availableOf(old)) creates.push(name);
        else candidates.push(name);
      }
      for (const name of candidates) {
        if (surging >= maxSurge) break;
        creates.push(name);
        surging++;
      }
    }
  }

  if (!deleting) {
    if (creates.length > 0) actions.push({ type: 'create', nodes: creates });
    const unique = [...new Map(deletes.map((p) => [p.metadata.uid ?? p.metadata.name, p])).values()];
    if (unique.length > 0) actions.push({ type: 'delete', pods: unique });
  }

  // Status, per node that should run a pod, as Kubernetes counts it.
  let current = 0;
  let ready = 0;
  let available = 0;
  let updated = 0;
  for (const node of nodes) {
    const here = (byNode.get(node.metadata.name!) ?? []).filter((p) => p.status?.phase !== 'Failed' && p.status?.phase !== 'Succeeded');
    if (here.length === 0 || !placement(ds, node, tolerations).shouldRun) continue;
    current++;
    if (here.some(isPodReady)) ready++;
    if (here.some(availableOf)) available++;
    if (here.some(isNew)) updated++;
  }
  const status: DaemonSetStatus = {
    ...ds.status,
    currentNumberScheduled: current,
    numberMisscheduled: misscheduled,
    desiredNumberScheduled: desired,
    numberReady: ready,
    updatedNumberScheduled: updated,
    numberAvailable: available,
    numberUnavailable: Math.max(0, desired - available),
    ...(ds.metadata.generation !== undefined ? { observedGeneration: ds.metadata.generation } : {}),
  };
  return { actions, status, ...(recheckAfterMs !== undefined ? { recheckAfterMs } : {}) };
}

/**
 * The pod a create makes for `nodeName`: the template with the revision labels, the daemon
 * tolerations, and a required node affinity naming only that node. The default scheduler then
 * binds it (as Kubernetes does since 1.12), so resources and ports are still checked and the
 * pod shows the scheduler's reasons when it cannot fit.
 */
export function daemonPod(ds: DaemonSet, nodeName: string): Record<string, unknown> {
  const meta = ds.spec.template.metadata;
  const spec = ds.spec.template.spec;
  const nodeAffinity = {
    ...(spec.affinity?.nodeAffinity ?? {}),
    requiredDuringSchedulingIgnoredDuringExecution: {
      nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [nodeName] }] }],
    },
  };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: `${ds.metadata.name}-`,
      namespace: ds.metadata.namespace,
      labels: {
        ...(meta.labels ?? {}),
        [CONTROLLER_REVISION_HASH_LABEL]: daemonSetHash(ds),
        ...(ds.metadata.generation !== undefined ? { [POD_TEMPLATE_GENERATION_LABEL]: String(ds.metadata.generation) } : {}),
      },
      ...(meta.annotations ? { annotations: meta.annotations } : {}),
      ...(meta.finalizers ? { finalizers: meta.finalizers } : {}),
      ownerReferences: [ownerReferenceToDaemonSet(ds)],
    },
    spec: { ...spec, tolerations: daemonTolerations(ds), affinity: { ...(spec.affinity ?? {}), nodeAffinity } },
  };
}

/** True when the status the plan computed differs from the stored one. */
export function statusChanged(ds: DaemonSet, status: DaemonSetStatus): boolean {
  return !isDeepStrictEqual(ds.status ?? {}, status);
}
