// The service account controller: every namespace that is not being deleted has a `default` ServiceAccount (made again if deleted).
import type { Namespace } from '../../core/api/namespace.js';
import { namespaceKind } from '../../core/api/namespace.js';
import { DEFAULT_SERVICE_ACCOUNT, type ServiceAccount, serviceAccountKind } from '../../core/api/serviceaccount.js';
import type { Client } from '../../core/client/client.js';
import { runController } from '../../core/controller/controller.js';
import { type Informer, NAMESPACE_INDEX } from '../../core/controller/informer.js';
import type { InformerFactory } from '../../core/controller/informer-factory.js';
import { WorkQueue } from '../../core/controller/work-queue.js';
import { AlreadyExistsError, ApiError, NotFoundError } from '../../core/errors.js';

/** Pure decision for one namespace: the ServiceAccounts to create (none for a namespace gone or going). */
export function planServiceAccounts(ns: Namespace | undefined, existing: ReadonlySet<string>): string[] {
  if (!ns || ns.metadata.deletionTimestamp || ns.status?.phase === 'Terminating') return [];
  return existing.has(DEFAULT_SERVICE_ACCOUNT) ? [] : [DEFAULT_SERVICE_ACCOUNT];
}

export interface ServiceAccountControllerOptions {
  client: Client;
  informers: InformerFactory;
  log?: (message: string) => void;
}

export class ServiceAccountController {
  readonly queue = new WorkQueue();
  readonly #client: Client;
  readonly #log: (message: string) => void;
  readonly #namespaces: Informer<Namespace>;
  readonly #accounts: Informer<ServiceAccount>;

  constructor(options: ServiceAccountControllerOptions) {
    this.#client = options.client;
    this.#log = options.log ?? (() => {});
    this.#namespaces = options.informers.informer<Namespace>(namespaceKind);
    this.#accounts = options.informers.informer<ServiceAccount>(serviceAccountKind);
    const byName = (ns: Namespace) => this.queue.add(ns.metadata.name!);
    this.#namespaces.addHandlers({ onAdd: byName, onUpdate: (_old, ns) => byName(ns) });
    // A deleted default comes back, as in Kubernetes.
    this.#accounts.addHandlers({ onDelete: (sa) => sa.metadata.namespace && this.queue.add(sa.metadata.namespace) });
  }

  async start(signal: AbortSignal): Promise<void> {
    await runController(
      { name: 'serviceaccount', queue: this.queue, informers: [this.#namespaces, this.#accounts], reconcile: (key) => this.reconcile(key), log: this.#log },
      signal,
    );
  }

  async reconcile(namespace: string): Promise<void> {
    const existing = new Set(this.#accounts.byIndex(NAMESPACE_INDEX, namespace).map((sa) => sa.metadata.name!));
    for (const name of planServiceAccounts(this.#namespaces.get(namespace), existing)) {
      try {
        await this.#client.create(serviceAccountKind, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace } }, { namespace });
      } catch (err) {
        if (err instanceof AlreadyExistsError || err instanceof NotFoundError) continue;
        // A namespace being deleted refuses creates (403): nothing to do there.
        if (err instanceof ApiError && err.code === 403) continue;
        throw err;
      }
    }
  }
}
