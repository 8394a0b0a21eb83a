// DaemonSet controller: the shell around planDaemonSet, which keeps one pod on every eligible node and rolls template changes out.
import { isDeepStrictEqual } from 'node:util';
import { daemonSetKind, type DaemonSet } from '../../core/api/daemonset.js';
import { nodeKind, type Node } from '../../core/api/node.js';
import { podKind, type Pod } from '../../core/api/pod.js';
import { matches, selectorFromLabelSelector } from '../../core/api/selector.js';
import type { Client } from '../../core/client/client.js';
import { runController } from '../../core/controller/controller.js';
import { NAMESPACE_INDEX, objectKey, OWNER_UID_INDEX, type Informer } from '../../core/controller/informer.js';
import type { InformerFactory } from '../../core/controller/informer-factory.js';
import { WorkQueue } from '../../core/controller/work-queue.js';
import { ConflictError, NotFoundError } from '../../core/errors.js';
import { daemonPod, planDaemonSet, statusChanged, type DaemonSetAction } from './daemonset-plan.js';
import { ControllerExpectations } from './expectations.js';
import { controllerRef, slowStart } from './replicaset.js';

export interface DaemonSetControllerOptions {
  client: Client;
  /** The process's shared informers: DaemonSets, Nodes and Pods. */
  informers: InformerFactory;
  log?: (message: string) => void;
  workers?: number;
  now?: () => Date;
}

/** What about a Node changes where daemon pods belong. */
function placementInputs(node: Node): unknown {
  return [node.metadata.labels, node.spec?.taints, node.spec?.unschedulable];
}

export class DaemonSetController {
  readonly daemonSets: Informer<DaemonSet>;
  readonly nodes: Informer<Node>;
  readonly pods: Informer<Pod>;
  readonly queue = new WorkQueue();
  readonly expectations = new ControllerExpectations();
  readonly #client: Client;
  readonly #log: (message: string) => void;
  readonly #workers: number;
  readonly #now: () => Date;

  constructor(options: DaemonSetControllerOptions) {
    this.#client = options.client;
    this.#log = options.log ?? (() => {});
    this.#workers = options.workers ?? 2;
    this.#now = options.now ?? (() => new Date());
    this.daemonSets = options.informers.informer<DaemonSet>(daemonSetKind);
    this.nodes = options.informers.informer<Node>(nodeKind);
    this.pods = options.informers.informer<Pod>(podKind);
    const enqueue = (ds: DaemonSet) => this.queue.add(objectKey(ds));
    const enqueueAll = () => {
      for (const ds of this.daemonSets.list()) enqueue(ds);
    };
    this.daemonSets.addHandlers({
      onAdd: enqueue,
      onUpdate: (_old, ds) => enqueue(ds),
      onDelete: (ds) => {
        this.expectations.forget(objectKey(ds));
        for (const pod of this.pods.byIndex(OWNER_UID_INDEX, ds.metadata.uid!)) if (controllerRef(pod)?.uid === ds.metadata.uid) this.#enqueueMatching(pod);
      },
    });
    this.nodes.addHandlers({
      onAdd: enqueueAll,
      onUpdate: (old, node) => {
        if (!isDeepStrictEqual(placementInputs(old), placementInputs(node))) enqueueAll();
      },
      onDelete: enqueueAll,
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
        else if (!controllerRef(pod)) this.#enqueueMatching(pod);
      },
      onDelete: (pod) => this.#podGone(pod),
    });
  }

  #owner(pod: Pod): string | undefined {
    const ref = controllerRef(pod);
    if (ref?.kind !== 'DaemonSet') return undefined;
    const key = `${pod.metadata.namespace}/${ref.name}`;
    return this.daemonSets.get(key)?.metadata.uid === ref.uid ? key : undefined;
  }

  #podGone(pod: Pod): void {
    const owner = this.#owner(pod);
    if (!owner) return;
    this.expectations.deletionObserved(owner, objectKey(pod));
    this.queue.add(owner);
  }

  #enqueueMatching(pod: Pod): void {
    for (const ds of this.daemonSets.byIndex(NAMESPACE_INDEX, pod.metadata.namespace!)) {
      try {
        if (matches(selectorFromLabelSelector(ds.spec.selector), pod.metadata.labels)) this.queue.add(objectKey(ds));
      } catch {
        // An unparsable selector matches nothing.
      }
    }
  }

  async start(signal: AbortSignal): Promise<void> {
    await runController(
      {
        name: 'daemonset',
        queue: this.queue,
        informers: [this.daemonSets, this.nodes, this.pods],
        reconcile: (key) => this.reconcile(key),
        workers: this.#workers,
        log: this.#log,
      },
      signal,
    );
  }

  async reconcile(key: string): Promise<{ requeueAfterMs?: number } | void> {
    const ds = this.daemonSets.get(key);
    if (!ds) {
      this.expectations.forget(key);
      return;
    }
    const namespace = ds.metadata.namespace!;
    const mayChange = this.expectations.satisfied(key);
    const plan = planDaemonSet(ds, this.nodes.list(), this.pods.byIndex(NAMESPACE_INDEX, namespace), this.#now());
    let claimFailed = false;
    for (const action of plan.actions) {
      if (action.type !== 'adopt' && action.type !== 'release') continue;
      try {
        await this.#client.patch(
          podKind,
          { namespace, name: action.pod.metadata.name! },
          { metadata: { resourceVersion: action.pod.metadata.resourceVersion, ownerReferences: action.ownerReferences } },
        );
      } catch (err) {
        if (!(err instanceof ConflictError || err instanceof NotFoundError)) throw err;
        claimFailed = true;
      }
    }
    if (claimFailed) return { requeueAfterMs: 0 };

    let firstError: unknown;
    if (mayChange) {
      const create = plan.actions.find((a): a is Extract<DaemonSetAction, { type: 'create' }> => a.type === 'create');
      const remove = plan.actions.find((a): a is Extract<DaemonSetAction, { type: 'delete' }> => a.type === 'delete');
      if (create || remove)
        this.expectations.expect(
          key,
          create?.nodes.length ?? 0,
          (remove?.pods ?? []).map((p) => objectKey(p)),
        );
      if (remove) firstError = await this.#deleteAll(key, remove.pods);
      if (create) {
        const queue = [...create.nodes];
        const result = await slowStart(queue.length, async () => {
          const node = queue.shift()!;
          try {
            await this.#client.create(podKind, daemonPod(ds, node), { namespace });
          } catch (err) {
            this.expectations.creationObserved(key);
            throw err;
          }
        });
        if (result.skipped > 0) this.expectations.creationObserved(key, result.skipped);
        firstError ??= result.error;
        this.#log(`daemonset ${key}: created ${result.created} of ${create.nodes.length} pods`);
      }
    }

    if (statusChanged(ds, plan.status)) {
      try {
        await this.#client.patch(daemonSetKind, { namespace, name: ds.metadata.name! }, { status: plan.status }, { subresource: 'status' });
      } catch (err) {
        if (!(err instanceof NotFoundError)) throw err;
      }
    }
    if (firstError) throw firstError;
    const waits = [plan.recheckAfterMs, mayChange ? undefined : this.expectations.remainingMs(key)].filter((n): n is number => n !== undefined);
    if (waits.length > 0) return { requeueAfterMs: Math.min(...waits) };
  }

  async #deleteAll(key: string, pods: readonly Pod[]): Promise<unknown> {
    let firstError: unknown;
    await Promise.all(
      pods.map(async (pod) => {
        try {
          await this.#client.delete(podKind, { namespace: pod.metadata.namespace, name: pod.metadata.name! }, { preconditions: { uid: pod.metadata.uid } });
        } catch (err) {
          this.expectations.deletionObserved(key, objectKey(pod));
          if (!(err instanceof NotFoundError)) firstError ??= err;
        }
      }),
    );
    if (pods.length > 0) this.#log(`daemonset ${key}: deleted ${pods.length} pods`);
    return firstError;
  }
}
