// Namespace reconciler: empties a namespace marked for deletion, then releases its `kubernetes` finalizer.
import type { KindDefinition } from '../../core/api/kind.js';
import type { KubeObject } from '../../core/api/meta.js';
import { namespaceKind, type Namespace } from '../../core/api/namespace.js';
import { kinds } from '../../core/api/registry.js';
import type { Client } from '../../core/client/client.js';
import { runController } from '../../core/controller/controller.js';
import type { Informer } from '../../core/controller/informer.js';
import type { InformerFactory } from '../../core/controller/informer-factory.js';
import { WorkQueue } from '../../core/controller/work-queue.js';
import { NotFoundError } from '../../core/errors.js';

export const NAMESPACE_FINALIZER = 'kubernetes';

export interface NamespaceContents {
  def: KindDefinition;
  items: readonly KubeObject[];
}

export type NamespaceAction = { type: 'delete'; def: KindDefinition; name: string } | { type: 'finalize'; finalizers: string[] } | { type: 'wait' };

/**
 * Pure decision: what to do next for one namespace. Deletes everything not yet being
 * deleted; once nothing is left, drops our finalizer so the API server removes the namespace.
 */
export function planNamespace(ns: Namespace | undefined, contents: readonly NamespaceContents[]): NamespaceAction[] {
  if (!ns?.metadata.deletionTimestamp) return [];
  const finalizers = ns.spec?.finalizers ?? [];
  if (!finalizers.includes(NAMESPACE_FINALIZER)) return [];
  const actions: NamespaceAction[] = [];
  let remaining = 0;
  for (const { def, items } of contents) {
    for (const item of items) {
      remaining++;
      if (!item.metadata.deletionTimestamp) actions.push({ type: 'delete', def, name: item.metadata.name! });
    }
  }
  if (remaining === 0) return [{ type: 'finalize', finalizers: finalizers.filter((f) => f !== NAMESPACE_FINALIZER) }];
  if (actions.length === 0) actions.push({ type: 'wait' });
  return actions;
}

export interface NamespaceReconcilerOptions {
  client: Client;
  /** The process's shared informers (Namespaces); a namespace's contents are listed from the API, not cached. */
  informers: InformerFactory;
  log?: (message: string) => void;
}

export class NamespaceReconciler {
  readonly informer: Informer<Namespace>;
  readonly queue = new WorkQueue();
  readonly #client: Client;
  readonly #log: (message: string) => void;

  constructor(options: NamespaceReconcilerOptions) {
    this.#client = options.client;
    this.#log = options.log ?? (() => {});
    this.informer = options.informers.informer<Namespace>(namespaceKind);
    const enqueue = (ns: Namespace) => {
      if (ns.metadata.deletionTimestamp) this.queue.add(ns.metadata.name!);
    };
    this.informer.addHandlers({ onAdd: enqueue, onUpdate: (_old, ns) => enqueue(ns) });
  }

  /** Runs the worker once the informer (started by the process's factory) has synced. */
  async start(signal: AbortSignal): Promise<void> {
    await runController({ name: 'namespace', queue: this.queue, informers: [this.informer], reconcile: (key) => this.reconcile(key), log: this.#log }, signal);
  }

  async reconcile(name: string): Promise<{ requeueAfterMs?: number } | void> {
    const ns = this.informer.get(name);
    if (!ns?.metadata.deletionTimestamp) return;
    const contents: NamespaceContents[] = [];
    for (const def of kinds) {
      if (!def.namespaced) continue;
      contents.push({ def, items: (await this.#client.list(def, { namespace: name })).items });
    }
    const actions = planNamespace(ns, contents);
    let deleted = 0;
    for (const action of actions) {
      try {
        if (action.type === 'delete') {
          await this.#client.delete(action.def, { namespace: name, name: action.name });
          deleted++;
        } else if (action.type === 'finalize') {
          await this.#client.patch(namespaceKind, { name }, { spec: { finalizers: action.finalizers } });
          this.#log(`namespace ${name}: emptied and removed`);
        }
      } catch (err) {
        if (!(err instanceof NotFoundError)) throw err;
      }
    }
    // Look again: immediately after deletions, or soon while finalizers of others hold objects.
    if (deleted > 0) return { requeueAfterMs: 0 };
    if (actions.some((a) => a.type === 'wait')) return { requeueAfterMs: 1000 };
  }
}
