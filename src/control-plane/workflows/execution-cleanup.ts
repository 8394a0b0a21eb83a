// Removes the execution records of deleted workflows (and of a namesake's earlier incarnation), and marks executions an earlier master left RUNNING as ABORTED.
import type { KubeObject } from '../../core/api/meta.js';
import { workflowKind } from '../../core/api/workflow.js';
import { runController } from '../../core/controller/controller.js';
import type { InformerFactory } from '../../core/controller/informer-factory.js';
import { objectKey, splitKey, type Informer } from '../../core/controller/informer.js';
import { WorkQueue } from '../../core/controller/work-queue.js';
import type { ExecutionStore } from './execution-store.js';

export type CleanupAction = { type: 'keep' } | { type: 'remove-all' } | { type: 'remove-others'; keepUid: string };

/**
 * Pure decision for one `ns/workflow` that has (or had) records: all go when the workflow is gone;
 * when it exists, those that ran under another uid go (it was deleted and made again, perhaps
 * while the master was down).
 */
export function planCleanup(workflow: KubeObject | undefined): CleanupAction {
  if (!workflow) return { type: 'remove-all' };
  const uid = workflow.metadata.uid;
  return uid === undefined ? { type: 'keep' } : { type: 'remove-others', keepUid: uid };
}

/** Resolves when `signal` aborts. */
function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));
}

export interface ExecutionCleanupOptions {
  /** Where the Workflow informer comes from (the process starts it); nothing here writes API objects. */
  informers: InformerFactory;
  executions: ExecutionStore;
  now?: () => Date;
  log?: (message: string) => void;
}

export class ExecutionCleanup {
  readonly informer: Informer<KubeObject>;
  readonly queue = new WorkQueue();
  readonly #o: ExecutionCleanupOptions;
  readonly #log: (message: string) => void;

  constructor(options: ExecutionCleanupOptions) {
    this.#o = options;
    this.#log = options.log ?? (() => {});
    this.informer = options.informers.informer(workflowKind);
    this.informer.addHandlers({ onDelete: (wf) => this.queue.add(objectKey(wf)) });
  }

  async start(signal: AbortSignal): Promise<void> {
    const sweep = (async () => {
      try {
        const stale = await this.#o.executions.abortStale((this.#o.now ?? (() => new Date()))());
        if (stale) this.#log(`workflows: ${stale} execution(s) left running by an earlier master marked ABORTED`);
        await Promise.race([this.informer.whenSynced(), aborted(signal)]);
        if (signal.aborted) return;
        for (const key of await this.#o.executions.storedWorkflows()) this.queue.add(key);
      } catch (err) {
        if (!signal.aborted) this.#log(`workflows: cannot sweep execution records: ${err instanceof Error ? err.message : String(err)}`);
      }
    })();
    await Promise.all([
      runController(
        { name: 'workflow-executions', queue: this.queue, informers: [this.informer], reconcile: (key) => this.reconcile(key), log: this.#log },
        signal,
      ),
      sweep,
    ]);
  }

  async reconcile(key: string): Promise<void> {
    const { namespace, name } = splitKey(key);
    const action = planCleanup(this.informer.get(key));
    if (action.type === 'keep') return;
    const removed = await this.#o.executions.removeWorkflow(namespace!, name, action.type === 'remove-others' ? { keepUid: action.keepUid } : {});
    if (removed) this.#log(`workflows: removed ${removed} execution record(s) of ${key}`);
  }
}
