// The storage binder's shell: watches volumes, claims, classes, pods and nodes, runs planBinder over them and writes what it decides (one key: the plan looks at the whole cluster, which is small).
import { nodeKind, type Node } from '../../core/api/node.js';
import { BIND_COMPLETED_ANNOTATION, type PersistentVolumeClaim, persistentVolumeClaimKind } from '../../core/api/persistent-volume-claim.js';
import { type PersistentVolume, persistentVolumeKind } from '../../core/api/persistent-volume.js';
import { type Pod, podKind } from '../../core/api/pod.js';
import { storageClassKind, type StorageClass } from '../../core/api/storage-class.js';
import type { Client } from '../../core/client/client.js';
import { runController, WorkQueue } from '../../core/controller/controller.js';
import type { InformerFactory } from '../../core/controller/informer-factory.js';
import type { Informer } from '../../core/controller/informer.js';
import { AlreadyExistsError, ConflictError, NotFoundError } from '../../core/errors.js';
import { recordEvent } from '../reconcilers/record-event.js';
import { type BinderAction, planBinder } from './binder-plan.js';
import { localPathVolume } from './local-path.js';
import type { NodeView } from './volume-match.js';

export interface StorageBinderOptions {
  client: Client;
  informers: InformerFactory;
  log?: (message: string) => void;
}

const KEY = 'cluster';
/** Kubernetes' PV controller resyncs every 15 s; events are only recorded when they say something new. */
const RESYNC_MS = 15_000;

export class StorageBinder {
  readonly queue = new WorkQueue();
  readonly volumes: Informer<PersistentVolume>;
  readonly claims: Informer<PersistentVolumeClaim>;
  readonly classes: Informer<StorageClass>;
  readonly pods: Informer<Pod>;
  readonly nodes: Informer<Node>;
  readonly #client: Client;
  readonly #log: (message: string) => void;
  /** The last event recorded per object uid: the plan is level-triggered, its events must not repeat every pass. */
  readonly #lastEvent = new Map<string, string>();

  constructor(options: StorageBinderOptions) {
    this.#client = options.client;
    this.#log = options.log ?? (() => {});
    this.volumes = options.informers.informer<PersistentVolume>(persistentVolumeKind);
    this.claims = options.informers.informer<PersistentVolumeClaim>(persistentVolumeClaimKind);
    this.classes = options.informers.informer<StorageClass>(storageClassKind);
    this.pods = options.informers.informer<Pod>(podKind);
    this.nodes = options.informers.informer<Node>(nodeKind);
    const poke = () => this.queue.add(KEY);
    this.volumes.addHandlers({ onAdd: poke, onUpdate: poke, onDelete: poke });
    this.claims.addHandlers({ onAdd: poke, onUpdate: poke, onDelete: poke });
    this.classes.addHandlers({ onAdd: poke, onUpdate: poke, onDelete: poke });
    // Pods matter only when they name claims (a WaitForFirstConsumer claim's node, protection).
    const podPoke = (pod: Pod) => {
      if ((pod.spec.volumes ?? []).some((v) => v.persistentVolumeClaim)) poke();
    };
    this.pods.addHandlers({ onAdd: podPoke, onUpdate: (_o, p) => podPoke(p), onDelete: podPoke });
  }

  async start(signal: AbortSignal): Promise<void> {
    await runController(
      {
        name: 'persistentvolume-binder',
        queue: this.queue,
        informers: [this.volumes, this.claims, this.classes, this.pods, this.nodes],
        reconcile: () => this.reconcile(),
        workers: 1,
        log: this.#log,
      },
      signal,
    );
  }

  async reconcile(): Promise<{ requeueAfterMs: number }> {
    const nodes = new Map<string, NodeView>(this.nodes.list().map((n) => [n.metadata.name!, { name: n.metadata.name!, labels: n.metadata.labels ?? {} }]));
    const actions = planBinder({ volumes: this.volumes.list(), claims: this.claims.list(), classes: this.classes.list(), pods: this.pods.list(), nodes });
    let retry = false;
    for (const action of actions) {
      try {
        await this.#apply(action);
      } catch (err) {
        // Someone changed the object meanwhile: the next pass decides again on fresh state.
        if (err instanceof ConflictError || err instanceof NotFoundError || err instanceof AlreadyExistsError) retry = true;
        else throw err;
      }
    }
    return { requeueAfterMs: retry ? 200 : RESYNC_MS };
  }

  async #apply(a: BinderAction): Promise<void> {
    const c = this.#client;
    switch (a.type) {
      case 'bindVolume': {
        const { claim, volume } = a;
        const claimRef = {
          apiVersion: 'v1',
          kind: 'PersistentVolumeClaim',
          namespace: claim.metadata.namespace,
          name: claim.metadata.name,
          uid: claim.metadata.uid,
        };
        await c.patch(
          persistentVolumeKind,
          { name: volume.metadata.name! },
          { metadata: { resourceVersion: volume.metadata.resourceVersion }, spec: { claimRef } },
        );
        await c.patch(persistentVolumeKind, { name: volume.metadata.name! }, { status: { phase: 'Bound' } }, { subresource: 'status' });
        return;
      }
      case 'bindClaim': {
        const { claim, volume } = a;
        const ref = { namespace: claim.metadata.namespace, name: claim.metadata.name! };
        if (claim.spec.volumeName !== volume.metadata.name)
          await c.patch(persistentVolumeClaimKind, ref, {
            metadata: { resourceVersion: claim.metadata.resourceVersion, annotations: { [BIND_COMPLETED_ANNOTATION]: 'yes' } },
            spec: { volumeName: volume.metadata.name },
          });
        await c.patch(
          persistentVolumeClaimKind,
          ref,
          { status: { phase: 'Bound', accessModes: volume.spec.accessModes, capacity: { storage: volume.spec.capacity.storage } } },
          { subresource: 'status' },
        );
        this.#log(`storage: bound claim ${claim.metadata.namespace}/${claim.metadata.name} to volume ${volume.metadata.name}`);
        return;
      }
      case 'volumePhase':
        await c.patch(
          persistentVolumeKind,
          { name: a.volume.metadata.name! },
          {
            status: { phase: a.phase, ...(a.message ? { message: a.message } : {}), lastPhaseTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z') },
          },
          { subresource: 'status' },
        );
        return;
      case 'claimLost':
        await c.patch(
          persistentVolumeClaimKind,
          { namespace: a.claim.metadata.namespace, name: a.claim.metadata.name! },
          { status: { phase: 'Lost' } },
          { subresource: 'status' },
        );
        return;
      case 'setClass':
        await c.patch(
          persistentVolumeClaimKind,
          { namespace: a.claim.metadata.namespace, name: a.claim.metadata.name! },
          { metadata: { resourceVersion: a.claim.metadata.resourceVersion }, spec: { storageClassName: a.className } },
        );
        return;
      case 'provision': {
        const pv = localPathVolume(a.claim, a.storageClass, a.node);
        await c.create(persistentVolumeKind, pv);
        await this.#event({
          type: 'event',
          object: a.claim,
          eventType: 'Normal',
          reason: 'ProvisioningSucceeded',
          message: `Successfully provisioned volume ${pv.metadata.name}`,
        });
        return;
      }
      case 'deleteVolume':
        await c.delete(persistentVolumeKind, { name: a.volume.metadata.name! });
        this.#log(`storage: deleted released volume ${a.volume.metadata.name} (reclaim policy Delete)`);
        return;
      case 'finalizers': {
        const def = a.object.kind === 'PersistentVolume' ? persistentVolumeKind : persistentVolumeClaimKind;
        await c.patch(
          def,
          { namespace: a.object.metadata.namespace, name: a.object.metadata.name! },
          { metadata: { resourceVersion: a.object.metadata.resourceVersion, finalizers: a.finalizers } },
        );
        return;
      }
      case 'event':
        await this.#event(a);
        return;
    }
  }

  async #event(a: Extract<BinderAction, { type: 'event' }>): Promise<void> {
    const uid = a.object.metadata.uid ?? `${a.object.metadata.namespace}/${a.object.metadata.name}`;
    const said = `${a.reason}\n${a.message}`;
    if (this.#lastEvent.get(uid) === said) return;
    this.#lastEvent.set(uid, said);
    await recordEvent(
      {
        client: this.#client,
        object: a.object,
        type: a.eventType,
        reason: a.reason,
        message: a.message,
        component: 'persistentvolume-controller',
      },
      this.#log,
    );
  }
}
