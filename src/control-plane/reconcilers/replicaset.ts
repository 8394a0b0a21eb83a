// ReplicaSet controller: keeps spec.replicas pods matching the selector, adopting orphans and releasing strays.
import { isDeepStrictEqual } from 'node:util';
import type { OwnerReference } from '../../core/api/meta.js';
import { isPodReady, type Pod, podKind, podReadyCondition } from '../../core/api/pod.js';
import { replicaSetKind, type ReplicaSet, type ReplicaSetStatus } from '../../core/api/replicaset.js';
import { matches, selectorFromLabelSelector, type Selector } from '../../core/api/selector.js';
import type { Client } from '../../core/client/client.js';
import { recordEvent } from './record-event.js';
import { runController } from '../../core/controller/controller.js';
import { NAMESPACE_INDEX, objectKey, OWNER_UID_INDEX, type Informer } from '../../core/controller/informer.js';
import type { InformerFactory } from '../../core/controller/informer-factory.js';
import { WorkQueue } from '../../core/controller/work-queue.js';
import { ConflictError, NotFoundError } from '../../core/errors.js';
import { ControllerExpectations } from './expectations.js';

/** Kubernetes' burstReplicas: the most creates or deletes one sync issues. */
export const BURST_REPLICAS = 500;

export type ReplicaSetAction =
  | { type: 'adopt'; pod: Pod; ownerReferences: OwnerReference[] }
  | { type: 'release'; pod: Pod; ownerReferences: OwnerReference[] }
  | { type: 'create'; count: number }
  /** Pods to delete, least valuable first; `replace` marks finished pods that are not counted as active. */
  | { type: 'delete'; pods: Pod[]; finished?: boolean };

export interface ReplicaSetPlan {
  actions: ReplicaSetAction[];
  status: ReplicaSetStatus;
  /** When a Ready pod will have been Ready for minReadySeconds (look again then). */
  recheckAfterMs?: number;
}

export function controllerRef(obj: { metadata: { ownerReferences?: OwnerReference[] } }): OwnerReference | undefined {
  return obj.metadata.ownerReferences?.find((r) => r.controller);
}

export function ownerReferenceTo(rs: ReplicaSet): OwnerReference {
  return { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: rs.metadata.name!, uid: rs.metadata.uid!, controller: true, blockOwnerDeletion: true };
}

function isFinished(pod: Pod): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}

function readySince(pod: Pod): number {
  const t = podReadyCondition(pod)?.lastTransitionTime;
  return t ? Date.parse(t) : 0;
}

function restarts(pod: Pod): number {
  return Math.max(0, ...(pod.status?.containerStatuses ?? []).map((c) => c.restartCount ?? 0));
}

function created(pod: Pod): number {
  const t = pod.metadata.creationTimestamp;
  return t ? Date.parse(t) : 0;
}

const PHASE_RANK: Record<string, number> = { Pending: 0, Unknown: 1, Running: 2 };

/**
 * Kubernetes' ActivePods ordering: negative when `a` is worth less than `b` (deleted first).
 * Unassigned before assigned, Pending before Unknown before Running, not Ready before Ready,
 * Ready more recently before Ready longer, more restarts before fewer, newer before older.
 */
export function compareByValue(a: Pod, b: Pod): number {
  const assigned = (p: Pod) => (p.spec.nodeName ? 1 : 0);
  if (assigned(a) !== assigned(b)) return assigned(a) - assigned(b);
  const phase = (p: Pod) => PHASE_RANK[p.status?.phase ?? 'Pending'] ?? 0;
  if (phase(a) !== phase(b)) return phase(a) - phase(b);
  const ready = (p: Pod) => (isPodReady(p) ? 1 : 0);
  if (ready(a) !== ready(b)) return ready(a) - ready(b);
  if (ready(a) && readySince(a) !== readySince(b)) return readySince(b) - readySince(a);
  if (restarts(a) !== restarts(b)) return restarts(b) - restarts(a);
  if (created(a) !== created(b)) return created(b) - created(a);
  return (a.metadata.name ?? '').localeCompare(b.metadata.name ?? '');
}

function labelsInclude(labels: Readonly<Record<string, string>> | undefined, wanted: Readonly<Record<string, string>>): boolean {
  return Object.entries(wanted).every(([k, v]) => labels?.[k] === v);
}

/**
 * Pure decision for one ReplicaSet given the pods of its namespace. Claims pods as
 * Kubernetes' ControllerRefManager does (adopt matching orphans, release owned pods that no
 * longer match; pods with another controller are not ours), then compares the active pods
 * (owned, not finished, not being deleted) with spec.replicas. Finished (Failed, Succeeded)
 * pods are replaced and, unlike Kubernetes, deleted: nothing else would ever remove them.
 */
export function planReplicaSet(rs: ReplicaSet, pods: readonly Pod[], now: Date): ReplicaSetPlan {
  const uid = rs.metadata.uid;
  const deleting = !!rs.metadata.deletionTimestamp;
  let selector: Selector | undefined;
  try {
    selector = selectorFromLabelSelector(rs.spec.selector);
  } catch {
    selector = undefined;
  }
  const actions: ReplicaSetAction[] = [];
  const owned: Pod[] = [];
  for (const pod of pods) {
    if (pod.metadata.namespace !== rs.metadata.namespace) continue;
    const ref = controllerRef(pod);
    const matching = !!selector && matches(selector, pod.metadata.labels);
    if (ref) {
      if (ref.uid !== uid) continue;
      if (matching) owned.push(pod);
      else if (!pod.metadata.deletionTimestamp) {
        actions.push({ type: 'release', pod, ownerReferences: (pod.metadata.ownerReferences ?? []).filter((r) => r.uid !== uid) });
      }
    } else if (matching && !deleting && !pod.metadata.deletionTimestamp) {
      actions.push({ type: 'adopt', pod, ownerReferences: [...(pod.metadata.ownerReferences ?? []), ownerReferenceTo(rs)] });
      owned.push(pod);
    }
  }

  const active = owned.filter((p) => !isFinished(p) && !p.metadata.deletionTimestamp);
  const finished = owned.filter((p) => isFinished(p) && !p.metadata.deletionTimestamp);
  if (!deleting) {
    const diff = active.length - rs.spec.replicas;
    if (diff < 0) actions.push({ type: 'create', count: Math.min(-diff, BURST_REPLICAS) });
    if (diff > 0) actions.push({ type: 'delete', pods: [...active].sort(compareByValue).slice(0, Math.min(diff, BURST_REPLICAS)) });
    if (finished.length > 0) actions.push({ type: 'delete', pods: finished, finished: true });
  }

  const templateLabels = rs.spec.template.metadata.labels ?? {};
  const minReadyMs = (rs.spec.minReadySeconds ?? 0) * 1000;
  let ready = 0;
  let available = 0;
  let recheckAfterMs: number | undefined;
  for (const pod of active) {
    if (!isPodReady(pod)) continue;
    ready++;
    const since = readySince(pod);
    const wait = minReadyMs === 0 ? 0 : since + minReadyMs - now.getTime();
    if (wait <= 0) available++;
    else recheckAfterMs = Math.min(recheckAfterMs ?? Infinity, wait);
  }
  const status: ReplicaSetStatus = {
    ...rs.status,
    replicas: active.length,
    fullyLabeledReplicas: active.filter((p) => labelsInclude(p.metadata.labels, templateLabels)).length,
    readyReplicas: ready,
    availableReplicas: available,
    ...(rs.metadata.generation !== undefined ? { observedGeneration: rs.metadata.generation } : {}),
  };
  return { actions, status, ...(recheckAfterMs !== undefined ? { recheckAfterMs } : {}) };
}

/** The pod a create action makes: the template with generateName, the RS as controller. */
export function podFromTemplate(rs: ReplicaSet): Record<string, unknown> {
  const meta = rs.spec.template.metadata;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: `${rs.metadata.name}-`,
      namespace: rs.metadata.namespace,
      ...(meta.labels ? { labels: meta.labels } : {}),
      ...(meta.annotations ? { annotations: meta.annotations } : {}),
      ...(meta.finalizers ? { finalizers: meta.finalizers } : {}),
      ownerReferences: [ownerReferenceTo(rs)],
    },
    spec: rs.spec.template.spec,
  };
}

/** Slow start as Kubernetes: batches of 1, 2, 4, ... stopping at the first batch with a failure. Returns how many succeeded and the first error. */
export async function slowStart(count: number, create: () => Promise<void>): Promise<{ created: number; skipped: number; error?: unknown }> {
  let done = 0;
  let batch = 1;
  while (done < count) {
    const size = Math.min(batch, count - done);
    const results = await Promise.allSettled(Array.from({ length: size }, () => create()));
    const ok = results.filter((r) => r.status === 'fulfilled').length;
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    done += size;
    if (failed) return { created: done - size + ok, skipped: count - done, error: failed.reason };
    batch *= 2;
  }
  return { created: done, skipped: 0 };
}

export interface ReplicaSetControllerOptions {
  client: Client;
  /** The process's shared informers: ReplicaSets and Pods, read through their namespace and owner indexes. */
  informers: InformerFactory;
  log?: (message: string) => void;
  workers?: number;
  now?: () => Date;
}

export class ReplicaSetController {
  readonly replicaSets: Informer<ReplicaSet>;
  readonly pods: Informer<Pod>;
  readonly queue = new WorkQueue();
  readonly expectations = new ControllerExpectations();
  readonly #client: Client;
  readonly #log: (message: string) => void;
  readonly #workers: number;
  readonly #now: () => Date;

  constructor(options: ReplicaSetControllerOptions) {
    this.#client = options.client;
    this.#log = options.log ?? (() => {});
    this.#workers = options.workers ?? 4;
    this.#now = options.now ?? (() => new Date());
    this.replicaSets = options.informers.informer<ReplicaSet>(replicaSetKind);
    this.pods = options.informers.informer<Pod>(podKind);
    const enqueueRs = (rs: ReplicaSet) => this.queue.add(objectKey(rs));
    this.replicaSets.addHandlers({
      onAdd: enqueueRs,
      onUpdate: (_old, rs) => enqueueRs(rs),
      onDelete: (rs) => {
        this.expectations.forget(objectKey(rs));
        // Its pods are orphans now (or being collected): other ReplicaSets may adopt them.
        for (const pod of this.pods.byIndex(OWNER_UID_INDEX, rs.metadata.uid!)) if (controllerRef(pod)?.uid === rs.metadata.uid) this.#enqueueMatching(pod);
      },
    });
    this.pods.addHandlers({
      onAdd: (pod) => {
        if (pod.metadata.deletionTimestamp) return this.#podGone(pod);
        const owner = this.#owner(pod);
        if (owner) {
          this.expectations.creationObserved(owner);
          this.queue.add(owner);
        } else if (!controllerRef(pod)) this.#enqueueMatching(pod);
      },
      onUpdate: (old, pod) => {
        if (pod.metadata.deletionTimestamp && !old.metadata.deletionTimestamp) return this.#podGone(pod);
        const oldOwner = this.#owner(old);
        const owner = this.#owner(pod);
        if (oldOwner && oldOwner !== owner) this.queue.add(oldOwner);
        if (owner) this.queue.add(owner);
        else if (!controllerRef(pod)) {
          this.#enqueueMatching(pod);
          if (!isDeepStrictEqual(old.metadata.labels, pod.metadata.labels)) this.#enqueueMatching(old);
        }
      },
      onDelete: (pod) => this.#podGone(pod),
    });
  }

  /** The key of the ReplicaSet controlling the pod, if it is one we know. */
  #owner(pod: Pod): string | undefined {
    const ref = controllerRef(pod);
    if (ref?.kind !== 'ReplicaSet') return undefined;
    const key = `${pod.metadata.namespace}/${ref.name}`;
    return this.replicaSets.get(key)?.metadata.uid === ref.uid ? key : undefined;
  }

  #podGone(pod: Pod): void {
    const owner = this.#owner(pod);
    if (!owner) return;
    this.expectations.deletionObserved(owner, objectKey(pod));
    this.queue.add(owner);
  }

  #enqueueMatching(pod: Pod): void {
    for (const rs of this.replicaSets.byIndex(NAMESPACE_INDEX, pod.metadata.namespace!)) {
      try {
        if (matches(selectorFromLabelSelector(rs.spec.selector), pod.metadata.labels)) this.queue.add(objectKey(rs));
      } catch {
        // An unparsable selector matches nothing.
      }
    }
  }

  /** Runs the workers once the informers (started by the process's factory) have synced. */
  async start(signal: AbortSignal): Promise<void> {
    await runController(
      {
        name: 'replicaset',
        queue: this.queue,
        informers: [this.replicaSets, this.pods],
        reconcile: (key) => this.reconcile(key),
        workers: this.#workers,
        log: this.#log,
      },
      signal,
    );
  }

  async reconcile(key: string): Promise<{ requeueAfterMs?: number } | void> {
    const rs = this.replicaSets.get(key);
    if (!rs) {
      this.expectations.forget(key);
      return;
    }
    const namespace = rs.metadata.namespace!;
    const mayScale = this.expectations.satisfied(key);
    const plan = planReplicaSet(rs, this.pods.byIndex(NAMESPACE_INDEX, namespace), this.#now());
    let claimFailed = false;
    for (const action of plan.actions) {
      if (action.type !== 'adopt' && action.type !== 'release') continue;
      try {
        // Guarded by the cached resourceVersion: a pod changed meanwhile is looked at again, never overwritten.
        await this.#client.patch(
          podKind,
          { namespace, name: action.pod.metadata.name! },
          { metadata: { resourceVersion: action.pod.metadata.resourceVersion, ownerReferences: action.ownerReferences } },
        );
        this.#log(`replicaset ${key}: ${action.type === 'adopt' ? 'adopted' : 'released'} pod ${action.pod.metadata.name}`);
      } catch (err) {
        if (!(err instanceof ConflictError || err instanceof NotFoundError)) throw err;
        claimFailed = true;
      }
    }
    // Counts assumed the claims went through; when one did not, decide again on fresh state.
    if (claimFailed) return { requeueAfterMs: 0 };

    let firstError: unknown;
    if (mayScale) {
      const create = plan.actions.find((a) => a.type === 'create');
      const scaleDown = plan.actions.find((a) => a.type === 'delete' && !a.finished) as Extract<ReplicaSetAction, { type: 'delete' }> | undefined;
      if (create) {
        this.expectations.expect(key, create.count);
        const body = podFromTemplate(rs);
        const result = await slowStart(create.count, async () => {
          try {
            const pod = await this.#client.create(podKind, body, { namespace });
            this.#event(rs, 'Normal', 'SuccessfulCreate', `Created pod: ${pod.metadata.name}`);
          } catch (err) {
            this.expectations.creationObserved(key);
            this.#event(rs, 'Warning', 'FailedCreate', `Error creating: ${err instanceof Error ? err.message : String(err)}`);
            throw err;
          }
        });
        // Creates never tried will never be observed either.
        if (result.skipped > 0) this.expectations.creationObserved(key, result.skipped);
        if (result.error) firstError = result.error;
        this.#log(`replicaset ${key}: created ${result.created} of ${create.count} pods`);
      } else if (scaleDown) {
        this.expectations.expect(
          key,
          0,
          scaleDown.pods.map((p) => objectKey(p)),
        );
        firstError = await this.#deleteAll(key, scaleDown.pods, true, rs);
        this.#log(`replicaset ${key}: deleted ${scaleDown.pods.length} pods`);
      }
    }
    for (const action of plan.actions) {
      if (action.type === 'delete' && action.finished) firstError ??= await this.#deleteAll(key, action.pods, false);
    }

    if (!isDeepStrictEqual(rs.status ?? {}, plan.status)) {
      try {
        await this.#client.patch(replicaSetKind, { namespace, name: rs.metadata.name! }, { status: plan.status }, { subresource: 'status' });
      } catch (err) {
        if (!(err instanceof NotFoundError)) throw err;
      }
    }
    if (firstError) throw firstError;
    const waits = [plan.recheckAfterMs, mayScale ? undefined : this.expectations.remainingMs(key)].filter((n): n is number => n !== undefined);
    if (waits.length > 0) return { requeueAfterMs: Math.min(...waits) };
  }

  /**
   * The ReplicaSet's Events, as Kubernetes' controller records them (`describe rs` shows them).
   * Not awaited: like Kubernetes' event broadcaster, a slow or failed event never holds up a sync.
   */
  #event(rs: ReplicaSet, type: 'Normal' | 'Warning', reason: string, message: string): void {
    void recordEvent(
      {
        client: this.#client,
        object: { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: rs.metadata },
        type,
        reason,
        message,
        component: 'replicaset-controller',
      },
      this.#log,
    );
  }

  /** Deletes pods; `scaledFrom`, for a scale-down, names the ReplicaSet whose Events record each delete. */
  async #deleteAll(key: string, pods: readonly Pod[], expected: boolean, scaledFrom?: ReplicaSet): Promise<unknown> {
    let firstError: unknown;
    await Promise.all(
      pods.map(async (pod) => {
        try {
          await this.#client.delete(podKind, { namespace: pod.metadata.namespace, name: pod.metadata.name! }, { preconditions: { uid: pod.metadata.uid } });
          if (scaledFrom) this.#event(scaledFrom, 'Normal', 'SuccessfulDelete', `Deleted pod: ${pod.metadata.name}`);
        } catch (err) {
          // A delete that failed will never be observed; one of a pod already gone is done.
          if (expected) this.expectations.deletionObserved(key, objectKey(pod));
          if (!(err instanceof NotFoundError)) firstError ??= err;
        }
      }),
    );
    return firstError;
  }
}
