// Disruption controller: keeps each PodDisruptionBudget's status (healthy pods, allowed disruptions) for the eviction subresource to read.
import { deploymentKind, type Deployment } from '../../core/api/deployment.js';
import type { OwnerReference } from '../../core/api/meta.js';
import { podDisruptionBudgetKind, type PodDisruptionBudget } from '../../core/api/poddisruptionbudget.js';
import { podKind, type Pod } from '../../core/api/pod.js';
import { replicaSetKind, type ReplicaSet } from '../../core/api/replicaset.js';
import type { Client } from '../../core/client/client.js';
import { runController } from '../../core/controller/controller.js';
import { NAMESPACE_INDEX, objectKey, type Informer } from '../../core/controller/informer.js';
import type { InformerFactory } from '../../core/controller/informer-factory.js';
import { WorkQueue } from '../../core/controller/work-queue.js';
import { ConflictError, NotFoundError } from '../../core/errors.js';
import { disruptionStatusChanged, planDisruption } from './disruption-plan.js';
import { controllerRef } from './replicaset.js';

export interface DisruptionControllerOptions {
  client: Client;
  informers: InformerFactory;
  log?: (message: string) => void;
  now?: () => Date;
}

export class DisruptionController {
  readonly budgets: Informer<PodDisruptionBudget>;
  readonly pods: Informer<Pod>;
  readonly replicaSets: Informer<ReplicaSet>;
  readonly deployments: Informer<Deployment>;
  readonly queue = new WorkQueue();
  readonly #client: Client;
  readonly #log: (message: string) => void;
  readonly #now: () => Date;

  constructor(options: DisruptionControllerOptions) {
    this.#client = options.client;
    this.#log = options.log ?? (() => {});
    this.#now = options.now ?? (() => new Date());
    this.budgets = options.informers.informer<PodDisruptionBudget>(podDisruptionBudgetKind);
    this.pods = options.informers.informer<Pod>(podKind);
    this.replicaSets = options.informers.informer<ReplicaSet>(replicaSetKind);
    this.deployments = options.informers.informer<Deployment>(deploymentKind);
    this.budgets.addHandlers({ onAdd: (b) => this.queue.add(objectKey(b)), onUpdate: (_o, b) => this.queue.add(objectKey(b)) });
    // Any change of a namespace's pods or scales may change its budgets; budgets per namespace are few.
    const touch = (obj: { metadata: { namespace?: string } }) => {
      for (const b of this.budgets.byIndex(NAMESPACE_INDEX, obj.metadata.namespace ?? '')) this.queue.add(objectKey(b));
    };
    for (const informer of [this.pods, this.replicaSets, this.deployments] as Informer<Pod | ReplicaSet | Deployment>[]) {
      informer.addHandlers({ onAdd: touch, onUpdate: (_o, obj) => touch(obj), onDelete: touch });
    }
  }

  /** The scale a budget counts for a pod's controller: a ReplicaSet's replicas, or its Deployment's. */
  #scaleOf = (namespace: string, ref: OwnerReference): number | undefined => {
    if (ref.kind !== 'ReplicaSet') return undefined;
    const rs = this.replicaSets.get(`${namespace}/${ref.name}`);
    if (!rs || rs.metadata.uid !== ref.uid) return undefined;
    const owner = controllerRef(rs);
    if (owner?.kind === 'Deployment') {
      const d = this.deployments.get(`${namespace}/${owner.name}`);
      if (d && d.metadata.uid === owner.uid) return d.spec.replicas;
    }
    return rs.spec.replicas;
  };

  async start(signal: AbortSignal): Promise<void> {
    await runController(
      {
        name: 'disruption',
        queue: this.queue,
        informers: [this.budgets, this.pods, this.replicaSets, this.deployments],
        reconcile: (key) => this.reconcile(key),
        workers: 1,
        log: this.#log,
      },
      signal,
    );
  }

  async reconcile(key: string): Promise<{ requeueAfterMs?: number } | void> {
    const pdb = this.budgets.get(key);
    if (!pdb) return;
    const plan = planDisruption(pdb, this.pods.byIndex(NAMESPACE_INDEX, pdb.metadata.namespace!), this.#scaleOf, this.#now());
    if (disruptionStatusChanged(pdb, plan.status)) {
      try {
        // Guarded by the cached resourceVersion: an eviction that took a disruption meanwhile is not overwritten.
        await this.#client.patch(
          podDisruptionBudgetKind,
          { namespace: pdb.metadata.namespace, name: pdb.metadata.name! },
          { metadata: { resourceVersion: pdb.metadata.resourceVersion }, status: { ...plan.status, disruptedPods: plan.status.disruptedPods ?? null } },
          { subresource: 'status' },
        );
      } catch (err) {
        if (err instanceof NotFoundError) return;
        if (err instanceof ConflictError) return { requeueAfterMs: 0 };
        throw err;
      }
    }
    if (plan.recheckAfterMs !== undefined) return { requeueAfterMs: plan.recheckAfterMs };
  }
}
