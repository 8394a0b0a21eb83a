// One informer per resource and scope for a whole process, with the standard indexes, handed to every controller (client-go's SharedInformerFactory).
import type { KindDefinition } from '../api/kind.js';
import type { KubeObject } from '../api/meta.js';
import type { Client } from '../client/client.js';
import {
  indexByLabel,
  indexByNamespace,
  indexByNodeName,
  indexByOwnerUid,
  Informer,
  type InformerHandlers,
  LABEL_INDEX,
  NAMESPACE_INDEX,
  NODE_NAME_INDEX,
  OWNER_UID_INDEX,
} from './informer.js';
import { listWatcher } from './list-watcher.js';

export interface InformerFactoryOptions {
  /** Where the informers list and watch (in the master, a client view counted as `shared-informers`). */
  client: Client;
  log?: (message: string) => void;
}

export interface InformerScope {
  /** Only this namespace's objects (a namespaced kind); absent: every namespace. */
  namespace?: string;
  /** Only the objects this field selector picks, server-side (`spec.nodeName=NODE`: a kubelet's pods); another selector is another informer. */
  fieldSelector?: string;
}

/**
 * Controllers ask for informers while they are built, then the process calls start(signal)
 * once; an informer asked for after that starts at once. Handlers only enqueue keys, and cached
 * objects are shared by every controller: never mutate them.
 */
export class InformerFactory {
  readonly #client: Client;
  readonly #log: (message: string) => void;
  readonly #informers = new Map<string, Informer<KubeObject>>();
  #signal: AbortSignal | undefined;
  readonly #running: Promise<void>[] = [];

  constructor(options: InformerFactoryOptions) {
    this.#client = options.client;
    this.#log = options.log ?? (() => {});
  }

  /** The one informer of `def` in `scope` (namespace and field selector), with the namespace, owner and label indexes (and nodeName for pods). */
  informer<T extends KubeObject = KubeObject>(def: KindDefinition, scope: InformerScope = {}): Informer<T> {
    const namespace = def.namespaced ? scope.namespace : undefined;
    const fieldSelector = scope.fieldSelector || undefined;
    const key = `${def.resource}.${def.group}${namespace ? `/${namespace}` : ''}${fieldSelector ? `?${fieldSelector}` : ''}`;
    let informer = this.#informers.get(key);
    if (!informer) {
      informer = new Informer<KubeObject>({
        source: listWatcher({ client: this.#client, kind: def, namespace, fieldSelector }),
        name: `informer ${key}`,
        log: this.#log,
      });
      if (def.namespaced) informer.addIndexer(NAMESPACE_INDEX, indexByNamespace);
      informer.addIndexer(OWNER_UID_INDEX, indexByOwnerUid);
      informer.addIndexer(LABEL_INDEX, indexByLabel);
      if (def.resource === 'pods' && def.group === '') informer.addIndexer(NODE_NAME_INDEX, indexByNodeName);
      this.#informers.set(key, informer);
      if (this.#signal) this.#running.push(informer.start(this.#signal));
    }
    return informer as unknown as Informer<T>;
  }

  /**
   * The same shared informers for a component that runs only while `signal` is live (a leader):
   * the handlers it adds are removed when `signal` aborts, so that a component built again after
   * each election adds no handlers to the ones its earlier runs left.
   */
  scoped(signal: AbortSignal): InformerFactory {
    const informer = <T extends KubeObject = KubeObject>(def: KindDefinition, scope: InformerScope = {}): Informer<T> =>
      privateSafeProxy(this.informer<T>(def, scope), {
        addHandlers: (target: Informer<T>) => (handlers: InformerHandlers<T>) => {
          if (signal.aborted) return;
          target.addHandlers(handlers);
          signal.addEventListener('abort', () => target.removeHandlers(handlers), { once: true });
        },
      });
    return privateSafeProxy<InformerFactory>(this, { informer: () => informer });
  }

  /** How many informers this process holds (one list and one watch each). */
  get size(): number {
    return this.#informers.size;
  }

  /** Starts every informer asked for so far (and any asked for later); resolves once they have all stopped. */
  async start(signal: AbortSignal): Promise<void> {
    if (this.#signal) throw new Error('the informer factory is already started');
    this.#signal = signal;
    for (const informer of this.#informers.values()) this.#running.push(informer.start(signal));
    // Informers asked for later push onto #running while we wait.
    for (let i = 0; i < this.#running.length; i++) await this.#running[i];
  }

  /** Resolves when every informer asked for so far has listed once. */
  async whenSynced(): Promise<void> {
    await Promise.all([...this.#informers.values()].map((i) => i.whenSynced()));
  }
}

/**
 * A proxy of `target` with some members replaced; every other member is read from the target
 * itself (methods bound to it), since classes keep their state in private fields that a proxy
 * as `this` cannot reach.
 */
function privateSafeProxy<T extends object>(target: T, overrides: Record<string, (target: T) => unknown>): T {
  return new Proxy(target, {
    get(t, prop) {
      if (typeof prop === 'string' && Object.hasOwn(overrides, prop)) return overrides[prop]!(t);
      const value = Reflect.get(t, prop, t);
      return typeof value === 'function' ? value.bind(t) : value;
    },
  });
}
