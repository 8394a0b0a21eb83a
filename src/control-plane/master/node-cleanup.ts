// Releases a deleted Node's pod CIDR and credential, whichever client deleted it, and at start for deletions the master missed while down.
import { nodeKind, type Node } from '../../core/api/node.js';
import { runController } from '../../core/controller/controller.js';
import type { Informer } from '../../core/controller/informer.js';
import type { InformerFactory } from '../../core/controller/informer-factory.js';
import { WorkQueue } from '../../core/controller/work-queue.js';
import type { NodeRegistrar } from './node-join.js';

export interface NodeCleanupOptions {
  /** The process's shared informers (Nodes). It writes no object: what it frees is the registrar's. */
  informers: InformerFactory;
  registrar: NodeRegistrar;
  log?: (message: string) => void;
}

export class NodeCleanup {
  readonly informer: Informer<Node>;
  readonly queue = new WorkQueue();
  readonly #registrar: NodeRegistrar;
  readonly #log: (message: string) => void;

  constructor(options: NodeCleanupOptions) {
    this.#registrar = options.registrar;
    this.#log = options.log ?? (() => {});
    this.informer = options.informers.informer<Node>(nodeKind);
    this.informer.addHandlers({ onDelete: (node) => this.queue.add(node.metadata.name!) });
  }

  /** Runs the worker and the sweep at start once the informer (started by the process's factory) has synced. */
  async start(signal: AbortSignal): Promise<void> {
    await Promise.all([
      runController({ name: 'node-cleanup', queue: this.queue, informers: [this.informer], reconcile: (name) => this.reconcile(name), log: this.#log }, signal),
      this.#sweep(signal),
    ]);
  }

  /** Level-triggered: whatever happened, if the Node is gone its resources go too. */
  async reconcile(nodeName: string): Promise<void> {
    await this.#registrar.releaseIfGone(nodeName);
  }

  /** Nodes deleted while the master was down: everything holding state is checked once the cache is in. */
  async #sweep(signal: AbortSignal): Promise<void> {
    await Promise.race([this.informer.whenSynced(), new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }))]);
    if (signal.aborted) return;
    try {
      for (const name of await this.#registrar.namesWithState()) {
        if (!this.informer.get(name)) this.queue.add(name);
      }
    } catch (err) {
      this.#log(`node-cleanup: cannot read node credentials and pod CIDRs at start: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}
