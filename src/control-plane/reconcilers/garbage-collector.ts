// Garbage collector: deletes dependents whose owners are gone, runs foreground deletion and orphaning through ownerReferences.
import type { KindDefinition } from '../../core/api/kind.js';
import type { KubeObject, OwnerReference } from '../../core/api/meta.js';
import {
  FOREGROUND_FINALIZER,
  GARBAGE_COLLECTED_KINDS,
  ORPHAN_FINALIZER,
  ownsDependents,
  type PropagationPolicy,
} from '../../core/api/deletion-propagation.js';
import { kindByApiVersion } from '../../core/api/registry.js';
import type { Client } from '../../core/client/client.js';
import { runController } from '../../core/controller/controller.js';
import { objectKey, OWNER_UID_INDEX, type Informer } from '../../core/controller/informer.js';
import type { InformerFactory } from '../../core/controller/informer-factory.js';
import { WorkQueue } from '../../core/controller/work-queue.js';
import { NotFoundError } from '../../core/errors.js';

/**
 * What became of one owner a dependent points at: `present` (exists and is not being deleted
 * in the foreground, or is of a kind the collector does not track), `absent` (no object with
 * that uid), `waiting` (being deleted in the foreground, waiting for its dependents).
 */
export type OwnerState = 'present' | 'absent' | 'waiting';

export interface OwnerView {
  ref: OwnerReference;
  state: OwnerState;
}

export type DependentAction = { type: 'none' } | { type: 'delete'; policy: PropagationPolicy } | { type: 'removeOwnerRefs'; uids: string[] };

/**
 * Pure decision for one dependent, as Kubernetes' collector: with a live owner left it only
 * drops the references to owners that are gone or going; with none it is deleted (in the
 * foreground when a foreground-deleted owner asked to be blocked and it may own others itself).
 */
export function planDependent(dependent: KubeObject, owners: readonly OwnerView[], canOwn: boolean): DependentAction {
  if (dependent.metadata.deletionTimestamp || owners.length === 0) return { type: 'none' };
  const solid = owners.filter((o) => o.state === 'present');
  const gone = owners.filter((o) => o.state !== 'present');
  if (gone.length === 0) return { type: 'none' };
  if (solid.length > 0) return { type: 'removeOwnerRefs', uids: gone.map((o) => o.ref.uid) };
  const blocking = owners.some((o) => o.state === 'waiting' && o.ref.blockOwnerDeletion === true);
  return { type: 'delete', policy: blocking && canOwn ? 'Foreground' : 'Background' };
}

export type OwnerAction = { type: 'removeOwnerRef'; dependent: KubeObject } | { type: 'removeFinalizer'; finalizer: string };

/**
 * Pure decision for an owner being deleted. Orphan: unlink every dependent, then release the
 * `orphan` finalizer. Foreground: release `foregroundDeletion` once no dependent that blocks
 * its owner's deletion is left (deleting them is each dependent's own decision, planDependent).
 */
export function planOwner(owner: KubeObject, dependents: readonly KubeObject[]): OwnerAction[] {
  if (!owner.metadata.deletionTimestamp) return [];
  const finalizers = owner.metadata.finalizers ?? [];
  const uid = owner.metadata.uid;
  const mine = dependents.filter((d) => d.metadata.ownerReferences?.some((r) => r.uid === uid));
  if (finalizers.includes(ORPHAN_FINALIZER)) {
    if (mine.length > 0) return mine.map((dependent) => ({ type: 'removeOwnerRef', dependent }));
    return [{ type: 'removeFinalizer', finalizer: ORPHAN_FINALIZER }];
  }
  if (finalizers.includes(FOREGROUND_FINALIZER)) {
    const blocking = mine.some((d) => d.metadata.ownerReferences?.some((r) => r.uid === uid && r.blockOwnerDeletion === true));
    if (!blocking) return [{ type: 'removeFinalizer', finalizer: FOREGROUND_FINALIZER }];
  }
  return [];
}

/** True for an owner being deleted in the foreground (its dependents go first). */
export function waitingForDependents(obj: KubeObject): boolean {
  return Boolean(obj.metadata.deletionTimestamp) && (obj.metadata.finalizers ?? []).includes(FOREGROUND_FINALIZER);
}

function hasCollectorFinalizer(obj: KubeObject): boolean {
  const f = obj.metadata.finalizers ?? [];
  return f.includes(FOREGROUND_FINALIZER) || f.includes(ORPHAN_FINALIZER);
}

export interface GarbageCollectorOptions {
  client: Client;
  /** The process's shared informers, one per watched kind; dependents are found through their owner index. */
  informers: InformerFactory;
  /** The kinds to watch (default GARBAGE_COLLECTED_KINDS). */
  kinds?: readonly { def: KindDefinition; owner: boolean }[];
  log?: (message: string) => void;
}

interface Tracked {
  def: KindDefinition;
  owner: boolean;
  informer: Informer<KubeObject>;
}

/** Queue keys: `index|namespace/name`, the index into the tracked kinds. */
export class GarbageCollector {
  readonly queue = new WorkQueue();
  readonly #client: Client;
  readonly #log: (message: string) => void;
  readonly #tracked: Tracked[];
  /** uid -> the queue key of the object with that uid. */
  readonly #byUid = new Map<string, string>();

  constructor(options: GarbageCollectorOptions) {
    this.#client = options.client;
    this.#log = options.log ?? (() => {});
    this.#tracked = (options.kinds ?? GARBAGE_COLLECTED_KINDS).map(({ def, owner }, index) => {
      const informer = options.informers.informer(def);
      const keyOf = (obj: KubeObject) => `${index}|${objectKey(obj)}`;
      informer.addHandlers({
        onAdd: (obj) => this.#observe(keyOf(obj), undefined, obj),
        onUpdate: (old, obj) => this.#observe(keyOf(obj), old, obj),
        onDelete: (obj) => this.#observe(keyOf(obj), obj, undefined),
      });
      return { def, owner, informer };
    });
  }

  /** Queues whoever an event concerns. The informers have filed `obj` in their indexes before any handler runs. */
  #observe(key: string, old: KubeObject | undefined, obj: KubeObject | undefined): void {
    const newRefs = obj?.metadata.ownerReferences ?? [];
    if (old?.metadata.uid && (!obj || obj.metadata.uid !== old.metadata.uid)) {
      this.#byUid.delete(old.metadata.uid);
      // The owner is gone: its dependents must look again.
      for (const dep of this.#dependentKeys(old.metadata.uid)) this.queue.add(dep);
    }
    if (obj?.metadata.uid) this.#byUid.set(obj.metadata.uid, key);
    for (const ref of old?.metadata.ownerReferences ?? []) {
      if (newRefs.some((r) => r.uid === ref.uid)) continue;
      // An owner waiting for (or orphaning) this dependent may now finish.
      const ownerKey = this.#byUid.get(ref.uid);
      if (ownerKey) this.queue.add(ownerKey);
    }
    if (!obj) return;
    if (newRefs.length > 0) this.queue.add(key);
    if (obj.metadata.deletionTimestamp && hasCollectorFinalizer(obj)) {
      this.queue.add(key);
      if (!old?.metadata.deletionTimestamp || waitingForDependents(obj) !== waitingForDependents(old)) {
        for (const dep of this.#dependentKeys(obj.metadata.uid ?? '')) this.queue.add(dep);
      }
    }
  }

  /** The objects of every watched kind that reference `ownerUid`, from the informers' owner index. */
  #dependents(ownerUid: string): { tracked: Tracked; obj: KubeObject; key: string }[] {
    return this.#tracked.flatMap((tracked, index) =>
      tracked.informer.byIndex(OWNER_UID_INDEX, ownerUid).map((obj) => ({ tracked, obj, key: `${index}|${objectKey(obj)}` })),
    );
  }

  #dependentKeys(ownerUid: string): string[] {
    return this.#dependents(ownerUid).map((d) => d.key);
  }

  /** Runs the worker once the informers (started by the process's factory) have synced. */
  async start(signal: AbortSignal): Promise<void> {
    await runController(
      {
        name: 'garbage-collector',
        queue: this.queue,
        informers: this.#tracked.map((t) => t.informer),
        reconcile: (key) => this.reconcile(key),
        log: this.#log,
      },
      signal,
    );
  }

  #lookup(key: string): { tracked: Tracked; obj: KubeObject | undefined } | undefined {
    const bar = key.indexOf('|');
    const tracked = this.#tracked[Number(key.slice(0, bar))];
    if (!tracked) return undefined;
    return { tracked, obj: tracked.informer.get(key.slice(bar + 1)) };
  }

  async reconcile(key: string): Promise<void> {
    const found = this.#lookup(key);
    if (!found?.obj) return;
    const { tracked, obj } = found;
    try {
      if (obj.metadata.ownerReferences?.length) await this.#reconcileDependent(tracked, obj);
      if (tracked.owner && obj.metadata.deletionTimestamp && hasCollectorFinalizer(obj)) await this.#reconcileOwner(tracked, obj);
    } catch (err) {
      // Gone meanwhile: its own delete event brings whatever follows.
      if (err instanceof NotFoundError) return;
      throw err;
    }
  }

  async #reconcileDependent(tracked: Tracked, dep: KubeObject): Promise<void> {
    if (dep.metadata.deletionTimestamp) return;
    const owners: OwnerView[] = [];
    for (const ref of dep.metadata.ownerReferences ?? []) owners.push({ ref, state: await this.#ownerState(ref, dep.metadata.namespace) });
    const action = planDependent(dep, owners, ownsDependents(tracked.def));
    const { namespace, name } = { namespace: dep.metadata.namespace, name: dep.metadata.name! };
    if (action.type === 'delete') {
      await this.#client.delete(tracked.def, { namespace, name }, { propagationPolicy: action.policy, preconditions: { uid: dep.metadata.uid } });
      this.#log(`garbage collector: deleted ${tracked.def.kind} ${objectKey(dep)} (owners gone, ${action.policy.toLowerCase()})`);
    } else if (action.type === 'removeOwnerRefs') {
      const left = (dep.metadata.ownerReferences ?? []).filter((r) => !action.uids.includes(r.uid));
      await this.#patch(tracked.def, dep, { metadata: { resourceVersion: dep.metadata.resourceVersion, ownerReferences: left.length ? left : null } });
    }
  }

  /**
   * The cache answers for live owners; an owner it does not hold (or holds as going) is read
   * from the store, so a dependent is never deleted because its owner's event is still on the way.
   */
  async #ownerState(ref: OwnerReference, namespace: string | undefined): Promise<OwnerState> {
    const cachedKey = this.#byUid.get(ref.uid);
    const cached = cachedKey ? this.#lookup(cachedKey)?.obj : undefined;
    if (cached?.metadata.uid === ref.uid && !waitingForDependents(cached)) return 'present';
    const def = kindByApiVersion(ref.apiVersion, ref.kind);
    if (!def || !this.#tracked.some((t) => t.def === def)) return 'present';
    try {
      const live = await this.#client.get(def, { namespace: def.namespaced ? namespace : undefined, name: ref.name });
      if (live.metadata.uid !== ref.uid) return 'absent';
      return waitingForDependents(live) ? 'waiting' : 'present';
    } catch (err) {
      if (err instanceof NotFoundError) return 'absent';
      throw err;
    }
  }

  async #reconcileOwner(tracked: Tracked, owner: KubeObject): Promise<void> {
    const dependents = this.#dependents(owner.metadata.uid ?? '');
    for (const action of planOwner(
      owner,
      dependents.map((d) => d.obj),
    )) {
      if (action.type === 'removeOwnerRef') {
        const dep = action.dependent;
        const depTracked = dependents.find((d) => d.obj === dep)?.tracked;
        if (!depTracked) continue;
        const left = (dep.metadata.ownerReferences ?? []).filter((r) => r.uid !== owner.metadata.uid);
        await this.#patch(depTracked.def, dep, { metadata: { resourceVersion: dep.metadata.resourceVersion, ownerReferences: left.length ? left : null } });
      } else {
        const finalizers = (owner.metadata.finalizers ?? []).filter((f) => f !== action.finalizer);
        await this.#patch(tracked.def, owner, {
          metadata: { resourceVersion: owner.metadata.resourceVersion, finalizers: finalizers.length ? finalizers : null },
        });
        this.#log(`garbage collector: ${tracked.def.kind} ${objectKey(owner)}: released ${action.finalizer}`);
      }
    }
  }

  /** A conditional patch: built from the cache, so a stale cache is a conflict, retried with backoff by the runner. */
  async #patch(def: KindDefinition, obj: KubeObject, patch: Record<string, unknown>): Promise<void> {
    await this.#client.patch(def, { namespace: obj.metadata.namespace, name: obj.metadata.name! }, patch);
  }
}
