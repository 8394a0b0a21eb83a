// The root CA publisher: every namespace that is not being deleted has the ConfigMap kube-root-ca.crt holding the cluster CA (ca.crt), which pods' kube-api-access volumes project.
import type { ConfigMap } from '../../core/api/configmap.js';
import { configMapKind } from '../../core/api/configmap.js';
import type { Namespace } from '../../core/api/namespace.js';
import { namespaceKind } from '../../core/api/namespace.js';
import type { Client } from '../../core/client/client.js';
import { runController } from '../../core/controller/controller.js';
import type { Informer } from '../../core/controller/informer.js';
import type { InformerFactory } from '../../core/controller/informer-factory.js';
import { WorkQueue } from '../../core/controller/work-queue.js';
import { AlreadyExistsError, ApiError, ConflictError, NotFoundError } from '../../core/errors.js';
import { ROOT_CA_CONFIGMAP } from './admission.js';

/** The key the CA is kept under (what client libraries and the kubelet's projection read). */
export const ROOT_CA_KEY = 'ca.crt';

export type RootCaAction = { type: 'none' } | { type: 'create' } | { type: 'update'; resourceVersion: string };

/** Pure decision for one namespace: nothing in a namespace gone or going, else make the ConfigMap or put the CA back into it. */
export function planRootCa(ns: Namespace | undefined, current: ConfigMap | undefined, caPem: string): RootCaAction {
  if (!ns || ns.metadata.deletionTimestamp || ns.status?.phase === 'Terminating') return { type: 'none' };
  if (!current) return { type: 'create' };
  const data = current.data ?? {};
  // Exactly one key, the CA: anything else an admin wrote into it is replaced, as Kubernetes' publisher does.
  if (data[ROOT_CA_KEY] === caPem && Object.keys(data).length === 1 && !current.binaryData) return { type: 'none' };
  return { type: 'update', resourceVersion: current.metadata.resourceVersion ?? '' };
}

export interface RootCaPublisherOptions {
  client: Client;
  informers: InformerFactory;
  /** The cluster CA certificate (PEM). */
  caPem: string;
  log?: (message: string) => void;
}

export class RootCaPublisher {
  readonly queue = new WorkQueue();
  readonly #o: RootCaPublisherOptions;
  readonly #namespaces: Informer<Namespace>;
  readonly #configMaps: Informer<ConfigMap>;

  constructor(options: RootCaPublisherOptions) {
    this.#o = options;
    this.#namespaces = options.informers.informer<Namespace>(namespaceKind);
    this.#configMaps = options.informers.informer<ConfigMap>(configMapKind);
    const byName = (ns: Namespace) => this.queue.add(ns.metadata.name!);
    this.#namespaces.addHandlers({ onAdd: byName, onUpdate: (_old, ns) => byName(ns) });
    // A deleted or edited copy is put back; one seen after a refused create is checked.
    const ours = (cm: ConfigMap) => cm.metadata.name === ROOT_CA_CONFIGMAP && cm.metadata.namespace && this.queue.add(cm.metadata.namespace);
    this.#configMaps.addHandlers({ onAdd: ours, onUpdate: (_old, cm) => ours(cm), onDelete: ours });
  }

  async start(signal: AbortSignal): Promise<void> {
    await runController(
      {
        name: 'root-ca-cert-publisher',
        queue: this.queue,
        informers: [this.#namespaces, this.#configMaps],
        reconcile: (key) => this.reconcile(key),
        log: this.#o.log,
      },
      signal,
    );
  }

  async reconcile(namespace: string): Promise<void> {
    const current = this.#configMaps.get(`${namespace}/${ROOT_CA_CONFIGMAP}`);
    const action = planRootCa(this.#namespaces.get(namespace), current, this.#o.caPem);
    if (action.type === 'none') return;
    const object = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { ...(current?.metadata ?? {}), name: ROOT_CA_CONFIGMAP, namespace },
      data: { [ROOT_CA_KEY]: this.#o.caPem },
    };
    try {
      if (action.type === 'create') await this.#o.client.create(configMapKind, object, { namespace });
      else await this.#o.client.replace(configMapKind, { namespace, name: ROOT_CA_CONFIGMAP }, object);
    } catch (err) {
      // A lagging cache: the informer's next event queues the namespace again.
      if (err instanceof AlreadyExistsError || err instanceof ConflictError || err instanceof NotFoundError) return;
      // A namespace being deleted refuses creates (403): nothing to do there.
      if (err instanceof ApiError && err.code === 403) return;
      throw err;
    }
  }
}
