// Node lifecycle: nodes that stop heartbeating (neither their Lease nor their Ready condition renewed) become Unknown and tainted, their pods unready then evicted by taint; pods of deleted nodes are removed.
import { type Lease, leaseKind, NODE_LEASE_NAMESPACE } from '../../core/api/lease.js';
import type { Condition } from '../../core/api/meta.js';
import { type Node, nodeKind, nodeReadyCondition, type Taint } from '../../core/api/node.js';
import { podKind, type Pod } from '../../core/api/pod.js';
import { matchingToleration, TAINT_NOT_READY, TAINT_UNREACHABLE } from '../../core/api/taints.js';
import { timestamp } from '../../core/api/timestamp.js';
import type { Client } from '../../core/client/client.js';
import { runController } from '../../core/controller/controller.js';
import { abortableDelay, NODE_NAME_INDEX, type Informer } from '../../core/controller/informer.js';
import type { InformerFactory } from '../../core/controller/informer-factory.js';
import { WorkQueue } from '../../core/controller/work-queue.js';
import { NotFoundError } from '../../core/errors.js';
import { getOrCreate } from '../../core/get-or-create.js';
import { recordEvent } from './record-event.js';

/** Kubernetes' --node-monitor-grace-period: four missed 10 s heartbeats. */
export const DEFAULT_NODE_MONITOR_GRACE_SECONDS = 40;
/** Kubernetes' --node-monitor-period: every node is looked at at least this often. */
export const NODE_MONITOR_PERIOD_MS = 5_000;
/**
 * Pods naming a Node that was never seen (not one seen deleted) wait this long before they are
 * removed: the Node may be on its way (Kubernetes' pod GC quarantines them 40 s too).
 */
export const ORPHAN_QUARANTINE_MS = 40_000;

/** The conditions the kubelet owns and posts with every heartbeat. */
export const KUBELET_CONDITIONS = ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure'] as const;

const LIFECYCLE_TAINT_KEYS = new Set([TAINT_NOT_READY, TAINT_UNREACHABLE]);

export interface NodeLifecycleSettings {
  /** A node whose heartbeat is older than this is Unknown. */
  gracePeriodMs: number;
  /** See ORPHAN_QUARANTINE_MS. */
  orphanQuarantineMs: number;
}

export interface NodeLifecycleInput {
  now: number;
  /** The key: a node name, whether or not such a Node exists. */
  name: string;
  node: Node | undefined;
  /**
   * When this master last saw the node's heartbeat change (its first sight of the node counts).
   * Measured on the master's clock, as Kubernetes' probe timestamps are, so a worker whose clock
   * is off is judged by when its heartbeats arrive, not by what they say.
   */
  heartbeatSeenAt: number;
  /**
   * When this master last saw the node's Lease renewed (its renewTime change), on the same clock;
   * undefined when the node has no Lease. The node is alive while the later of the two is recent.
   */
  leaseSeenAt?: number;
  /** For a Node that does not exist: since when, and whether it was seen deleted (its pods then go at once). */
  missing?: { since: number; deleted: boolean };
  /** Pods bound to the node (spec.nodeName). */
  pods: readonly Pod[];
  settings: NodeLifecycleSettings;
}

export type NodeLifecycleAction =
  | { type: 'setConditions'; conditions: Condition[] }
  | { type: 'setTaints'; taints: Taint[] }
  | { type: 'nodeEvent'; eventType: 'Normal' | 'Warning'; reason: string; message: string }
  | { type: 'markPodNotReady'; pod: Pod; conditions: Condition[] }
  | { type: 'evictPod'; pod: Pod; taint: Taint }
  | { type: 'removeOrphanPod'; pod: Pod };

export interface NodeLifecyclePlan {
  actions: NodeLifecycleAction[];
  /** Look again after this long: when the heartbeat goes stale, or the next toleration runs out. */
  recheckAfterMs?: number;
}

export function readyCondition(node: Node | undefined): Condition | undefined {
  return node ? nodeReadyCondition(node) : undefined;
}

/** What the master compares to notice a status heartbeat: the Ready condition's lastHeartbeatTime. */
export function heartbeatOf(node: Node): string {
  return readyCondition(node)?.lastHeartbeatTime ?? '';
}

function isFinished(pod: Pod): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}

/** Kubernetes' node lifecycle controller marks every kubelet condition Unknown when the heartbeats stop. */
function unknownConditions(node: Node, at: string): Condition[] | undefined {
  const current = node.status?.conditions ?? [];
  let changed = false;
  const next = current.map((c) => {
    if (!(KUBELET_CONDITIONS as readonly string[]).includes(c.type) || c.status === 'Unknown') return c;
    changed = true;
    return { ...c, status: 'Unknown' as const, reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.', lastTransitionTime: at };
  });
  for (const type of KUBELET_CONDITIONS) {
    if (current.some((c) => c.type === type)) continue;
    changed = true;
    next.push({
      type,
      status: 'Unknown',
      reason: 'NodeStatusNeverUpdated',
      message: 'Kubelet never posted node status.',
      lastHeartbeatTime: node.metadata.creationTimestamp ?? at,
      lastTransitionTime: at,
    });
  }
  return changed ? next : undefined;
}

/**
 * The taints the node should carry: not-ready (Ready=False) or unreachable (Ready=Unknown),
 * each NoSchedule (keeps new pods off) and NoExecute (evicts the ones there). Other taints stay;
 * NoExecute taints get a timeAdded if they lack one, since tolerationSeconds count from it.
 */
function wantedTaints(current: readonly Taint[], ready: Condition['status'] | undefined, at: string): Taint[] {
  // Never reported and not yet overdue: nothing is known, so nothing changes.
  if (ready === undefined) return current.map((t) => (t.effect === 'NoExecute' && !t.timeAdded ? { ...t, timeAdded: at } : t));
  const key = ready === 'False' ? TAINT_NOT_READY : ready === 'Unknown' ? TAINT_UNREACHABLE : undefined;
  const next: Taint[] = [];
  for (const t of current) {
    if (LIFECYCLE_TAINT_KEYS.has(t.key) && (t.key !== key || (t.effect !== 'NoSchedule' && t.effect !== 'NoExecute'))) continue;
    next.push(t.effect === 'NoExecute' && !t.timeAdded ? { ...t, timeAdded: at } : t);
  }
  if (key) {
    if (!next.some((t) => t.key === key && t.effect === 'NoSchedule')) next.push({ key, effect: 'NoSchedule' });
    if (!next.some((t) => t.key === key && t.effect === 'NoExecute')) next.push({ key, effect: 'NoExecute', timeAdded: at });
  }
  return next;
}

function sameTaints(a: readonly Taint[], b: readonly Taint[]): boolean {
  return a.length === b.length && a.every((t, i) => JSON.stringify(t) === JSON.stringify(b[i]));
}

const hasLifecycleNoExecute = (taints: readonly Taint[]) => taints.some((t) => LIFECYCLE_TAINT_KEYS.has(t.key) && t.effect === 'NoExecute');

/**
 * When a pod must leave a node with these NoExecute taints: at once for a taint it does not
 * tolerate, `tolerationSeconds` after the taint's timeAdded for one it tolerates for a while,
 * never (Infinity) when it tolerates them all for good.
 */
export function evictionTime(pod: Pod, noExecute: readonly Taint[], now: number): { at: number; taint?: Taint } {
  let earliest: { at: number; taint?: Taint } = { at: Infinity };
  for (const taint of noExecute) {
    const toleration = matchingToleration(pod.spec.tolerations ?? [], taint);
    if (!toleration) return { at: -Infinity, taint };
    if (toleration.tolerationSeconds === undefined) continue;
    const added = taint.timeAdded ? Date.parse(taint.timeAdded) : NaN;
    const at = (Number.isFinite(added) ? added : now) + Math.max(0, toleration.tolerationSeconds) * 1000;
    if (at < earliest.at) earliest = { at, taint };
  }
  return earliest;
}

/** Pure decision: what to do about one node name (and the pods bound to it) now. */
export function planNodeLifecycle(input: NodeLifecycleInput): NodeLifecyclePlan {
  const { node, now, pods, settings } = input;
  const at = timestamp(new Date(now));
  const actions: NodeLifecycleAction[] = [];
  const rechecks: number[] = [];

  if (!node) {
    // Pod GC: nothing will ever run or stop these pods; removing them (grace 0) is how deleting a Node frees them.
    if (pods.length === 0) return { actions };
    const missing = input.missing ?? { since: now, deleted: false };
    const due = missing.deleted ? missing.since : missing.since + settings.orphanQuarantineMs;
    if (now < due) return { actions, recheckAfterMs: due - now };
    for (const pod of pods) actions.push({ type: 'removeOrphanPod', pod });
    return { actions };
  }

  // Kubernetes' rule: a Lease renewal and a status heartbeat count alike; the later one decides.
  const staleAt = Math.max(input.heartbeatSeenAt, input.leaseSeenAt ?? -Infinity) + settings.gracePeriodMs;
  const stale = now >= staleAt;
  if (stale) {
    const conditions = unknownConditions(node, at);
    if (conditions) actions.push({ type: 'setConditions', conditions });
  } else {
    rechecks.push(staleAt - now);
  }
  const ready = stale ? 'Unknown' : readyCondition(node)?.status;

  const before = node.spec?.taints ?? [];
  const taints = wantedTaints(before, ready, at);
  if (!sameTaints(before, taints)) {
    actions.push({ type: 'setTaints', taints });
    const was = hasLifecycleNoExecute(before);
    const is = hasLifecycleNoExecute(taints);
    const name = node.metadata.name;
    if (!was && is) actions.push({ type: 'nodeEvent', eventType: 'Normal', reason: 'NodeNotReady', message: `Node ${name} status is now: NodeNotReady` });
    if (was && !is) actions.push({ type: 'nodeEvent', eventType: 'Normal', reason: 'NodeReady', message: `Node ${name} status is now: NodeReady` });
  }

  // Only for Unknown: a kubelet that reports Ready=False is alive and writes its pods' status itself.
  if (ready === 'Unknown') {
    for (const pod of pods) {
      if (isFinished(pod)) continue;
      const conditions = pod.status?.conditions ?? [];
      const i = conditions.findIndex((c) => c.type === 'Ready');
      if (i < 0 || conditions[i]!.status === 'False') continue;
      const next = conditions.slice();
      next[i] = { ...conditions[i]!, status: 'False', reason: 'NodeNotReady', message: 'Node is not ready', lastTransitionTime: at };
      actions.push({ type: 'markPodNotReady', pod, conditions: next });
    }
  }

  const noExecute = taints.filter((t) => t.effect === 'NoExecute');
  if (noExecute.length > 0) {
    for (const pod of pods) {
      if (pod.metadata.deletionTimestamp) continue;
      const eviction = evictionTime(pod, noExecute, now);
      if (eviction.at <= now) actions.push({ type: 'evictPod', pod, taint: eviction.taint! });
      else if (Number.isFinite(eviction.at)) rechecks.push(eviction.at - now);
    }
  }

  return rechecks.length ? { actions, recheckAfterMs: Math.max(1, Math.min(...rechecks)) } : { actions };
}

export interface NodeLifecycleOptions {
  client: Client;
  /** The process's shared informers: Nodes, Leases, and Pods read through their nodeName index. */
  informers: InformerFactory;
  /** Default DEFAULT_NODE_MONITOR_GRACE_SECONDS. */
  gracePeriodSeconds?: number;
  monitorPeriodMs?: number;
  orphanQuarantineMs?: number;
  now?: () => number;
  log?: (message: string) => void;
}

/**
 * The shell: informers on Nodes and Pods (a node's pods from the nodeName index), heartbeat
 * arrival times, and a work queue keyed by node name. NodeCleanup releases a deleted Node's pod
 * CIDR and credential; this removes its pods. Neither writes what the other reads, so they never fight.
 */
export class NodeLifecycleReconciler {
  readonly nodes: Informer<Node>;
  readonly pods: Informer<Pod>;
  /** Node Leases (kube-node-lease) among all Leases. */
  readonly leases: Informer<Lease>;
  readonly queue = new WorkQueue();
  readonly #client: Client;
  readonly #settings: NodeLifecycleSettings;
  readonly #monitorPeriodMs: number;
  readonly #now: () => number;
  readonly #log: (message: string) => void;
  readonly #heartbeats = new Map<string, { beat: string; seenAt: number }>();
  /** Each node Lease's renewTime as last seen changing, and when (the master's clock). */
  readonly #renewals = new Map<string, { beat: string; seenAt: number }>();
  /** Nodes gone (deleted, or never seen while pods name them), since when; dropped once no pod names them. */
  readonly #missing = new Map<string, { since: number; deleted: boolean }>();
  /** Pods (by uid) this master has evicted, so that a cache a step behind does not evict and report them twice. */
  readonly #evicted = new Set<string>();

  constructor(options: NodeLifecycleOptions) {
    this.#client = options.client;
    this.#settings = {
      gracePeriodMs: (options.gracePeriodSeconds ?? DEFAULT_NODE_MONITOR_GRACE_SECONDS) * 1000,
      orphanQuarantineMs: options.orphanQuarantineMs ?? ORPHAN_QUARANTINE_MS,
    };
    this.#monitorPeriodMs = options.monitorPeriodMs ?? NODE_MONITOR_PERIOD_MS;
    this.#now = options.now ?? Date.now;
    this.#log = options.log ?? (() => {});
    this.nodes = options.informers.informer<Node>(nodeKind);
    this.pods = options.informers.informer<Pod>(podKind);
    this.leases = options.informers.informer<Lease>(leaseKind);
    const leaseSeen = (lease: Lease) => {
      if (lease.metadata.namespace !== NODE_LEASE_NAMESPACE) return;
      this.#observeRenewal(lease);
      // Nothing to do for a renewal of a node that is fine: the monitor looks at every node anyway.
      const node = this.nodes.get(lease.metadata.name!);
      if (node && readyCondition(node)?.status !== 'True') this.queue.add(lease.metadata.name!);
    };
    this.leases.addHandlers({
      onAdd: leaseSeen,
      onUpdate: (_old, lease) => leaseSeen(lease),
      onDelete: (lease) => {
        if (lease.metadata.namespace === NODE_LEASE_NAMESPACE) this.#renewals.delete(lease.metadata.name!);
      },
    });
    const nodeSeen = (node: Node) => {
      const name = node.metadata.name!;
      this.#observeHeartbeat(node);
      this.#missing.delete(name);
      this.queue.add(name);
    };
    this.nodes.addHandlers({
      onAdd: nodeSeen,
      onUpdate: (_old, node) => nodeSeen(node),
      onDelete: (node) => {
        const name = node.metadata.name!;
        this.#heartbeats.delete(name);
        this.#missing.set(name, { since: this.#now(), deleted: true });
        this.queue.add(name);
      },
    });
    this.pods.addHandlers({
      onAdd: (pod) => this.#podChanged(pod),
      onUpdate: (_old, pod) => this.#podChanged(pod),
      onDelete: (pod) => {
        this.#evicted.delete(pod.metadata.uid!);
      },
    });
  }

  /** Runs the worker and the monitor once the informers (started by the process's factory) have synced. */
  async start(signal: AbortSignal): Promise<void> {
    // One listener on the master's shared signal rather than one per loop (Node warns past 10).
    const own = new AbortController();
    if (signal.aborted) own.abort();
    else signal.addEventListener('abort', () => own.abort(), { once: true });
    await Promise.all([
      runController(
        {
          name: 'node-lifecycle',
          queue: this.queue,
          informers: [this.nodes, this.pods, this.leases],
          reconcile: (name) => this.reconcile(name),
          log: this.#log,
        },
        own.signal,
      ),
      this.#monitor(own.signal),
    ]);
  }

  async reconcile(name: string): Promise<{ requeueAfterMs?: number } | void> {
    const now = this.#now();
    const node = this.nodes.get(name);
    const pods = this.pods.byIndex(NODE_NAME_INDEX, name);
    let missing: { since: number; deleted: boolean } | undefined;
    if (!node) {
      if (pods.length === 0) {
        this.#missing.delete(name);
        return;
      }
      missing = getOrCreate(this.#missing, name, () => ({ since: now, deleted: false }));
    }
    const heartbeatSeenAt = node ? this.#observeHeartbeat(node) : now;
    const lease = node ? this.leases.get(`${NODE_LEASE_NAMESPACE}/${name}`) : undefined;
    const leaseSeenAt = lease ? this.#observeRenewal(lease) : undefined;
    const plan = planNodeLifecycle({ now, name, node, heartbeatSeenAt, leaseSeenAt, missing, pods, settings: this.#settings });
    await this.#apply(name, node, plan.actions);
    if (plan.recheckAfterMs !== undefined) return { requeueAfterMs: plan.recheckAfterMs };
  }

  /** Records when a heartbeat was first seen; returns that time. */
  #observeHeartbeat(node: Node): number {
    const name = node.metadata.name!;
    const beat = heartbeatOf(node);
    const seen = this.#heartbeats.get(name);
    if (seen && seen.beat === beat) return seen.seenAt;
    const now = this.#now();
    this.#heartbeats.set(name, { beat, seenAt: now });
    return now;
  }

  /** Records when a Lease renewal was first seen; returns that time. */
  #observeRenewal(lease: Lease): number {
    const name = lease.metadata.name!;
    const beat = lease.spec?.renewTime ?? '';
    const seen = this.#renewals.get(name);
    if (seen && seen.beat === beat) return seen.seenAt;
    const now = this.#now();
    this.#renewals.set(name, { beat, seenAt: now });
    return now;
  }

  #podChanged(pod: Pod): void {
    const nodeName = pod.spec.nodeName;
    if (!nodeName) return;
    // A pod on a healthy node needs nothing from us: spare the queue the churn of a busy cluster.
    const node = this.nodes.get(nodeName);
    if (!node || readyCondition(node)?.status !== 'True' || node.spec?.taints?.some((t) => t.effect === 'NoExecute')) this.queue.add(nodeName);
  }

  /**
   * Every node, and every missing node pods still name, at least once per monitor period. A pod
   * naming a node that is not there queues that name (#podChanged), whose reconcile notes it in
   * #missing until no pod names it any more: so #missing holds every such name.
   */
  async #monitor(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await abortableDelay(this.#monitorPeriodMs, signal);
      if (signal.aborted || !this.nodes.hasSynced || !this.pods.hasSynced) continue;
      for (const node of this.nodes.list()) this.queue.add(node.metadata.name!);
      for (const name of this.#missing.keys()) this.queue.add(name);
    }
  }

  async #apply(name: string, node: Node | undefined, actions: readonly NodeLifecycleAction[]): Promise<void> {
    let current = node;
    const component = 'node-controller';
    for (const action of actions) {
      switch (action.type) {
        case 'setConditions':
          // The resourceVersion guards against a heartbeat that arrived after our cache saw the node.
          current = (await this.#client.patch(
            nodeKind,
            { name },
            {
              metadata: { resourceVersion: current!.metadata.resourceVersion },
              status: { conditions: action.conditions },
            },
            { subresource: 'status' },
          )) as Node;
          this.#log(`node-lifecycle: node ${name} stopped posting status: conditions Unknown`);
          break;
        case 'setTaints':
          current = (await this.#client.patch(
            nodeKind,
            { name },
            {
              metadata: { resourceVersion: current!.metadata.resourceVersion },
              spec: { taints: action.taints.length ? action.taints : null },
            },
          )) as Node;
          break;
        case 'nodeEvent':
          await recordEvent(
            { client: this.#client, object: current!, type: action.eventType, reason: action.reason, message: action.message, component },
            this.#log,
          );
          break;
        case 'markPodNotReady': {
          const { pod } = action;
          if (
            await this.#ignoreGone(() =>
              this.#client.patch(
                podKind,
                { namespace: pod.metadata.namespace, name: pod.metadata.name! },
                {
                  metadata: { resourceVersion: pod.metadata.resourceVersion },
                  status: { conditions: action.conditions },
                },
                { subresource: 'status' },
              ),
            )
          ) {
            await recordEvent(
              { client: this.#client, object: pod, type: 'Warning', reason: 'NodeNotReady', message: 'Node is not ready', component },
              this.#log,
            );
          }
          break;
        }
        case 'evictPod': {
          const { pod } = action;
          if (this.#evicted.has(pod.metadata.uid!)) break;
          const ref = `${pod.metadata.namespace}/${pod.metadata.name}`;
          // Graceful, as Kubernetes' taint eviction: on a lost node the pod stays Terminating until the node returns or is deleted.
          if (
            await this.#ignoreGone(() =>
              this.#client.delete(podKind, { namespace: pod.metadata.namespace, name: pod.metadata.name! }, { preconditions: { uid: pod.metadata.uid } }),
            )
          ) {
            this.#evicted.add(pod.metadata.uid!);
            this.#log(`node-lifecycle: evicting pod ${ref} from node ${name} (taint ${action.taint.key}:${action.taint.effect})`);
            await recordEvent(
              {
                client: this.#client,
                object: pod,
                type: 'Normal',
                reason: 'TaintManagerEviction',
                message: `Marking for deletion Pod ${ref}`,
                component: 'taint-eviction-controller',
              },
              this.#log,
            );
          }
          break;
        }
        case 'removeOrphanPod': {
          const { pod } = action;
          if (
            await this.#ignoreGone(() =>
              this.#client.delete(
                podKind,
                { namespace: pod.metadata.namespace, name: pod.metadata.name! },
                { gracePeriodSeconds: 0, preconditions: { uid: pod.metadata.uid } },
              ),
            )
          ) {
            this.#log(`node-lifecycle: removed pod ${pod.metadata.namespace}/${pod.metadata.name}: its node ${name} does not exist`);
          }
          break;
        }
      }
    }
  }

  /** Runs a pod write; false when the pod is already gone (or replaced: the uid precondition), which is what we wanted anyway. */
  async #ignoreGone(write: () => Promise<unknown>): Promise<boolean> {
    try {
      await write();
      return true;
    } catch (err) {
      if (err instanceof NotFoundError) return false;
      throw err;
    }
  }
}
