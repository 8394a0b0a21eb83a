// The runner every reconciler shares: waits for caches, then drains a work queue with per-key exclusivity.
import type { Informer } from './informer.js';
import { WorkQueue } from './work-queue.js';

export interface ReconcileResult {
  /** Look at this key again after this long even if nothing changes (polling a deadline). */
  requeueAfterMs?: number;
}

export interface ControllerOptions {
  name: string;
  queue: WorkQueue;
  /** Informers whose caches must be synced before the first reconcile. */
  informers: readonly Pick<Informer, 'whenSynced'>[];
  /** Level-triggered and idempotent: looks at the state for `key` and moves it one step. Throwing retries with backoff. */
  reconcile(key: string): Promise<ReconcileResult | void>;
  workers?: number;
  log?: (message: string) => void;
}

export async function runController(options: ControllerOptions, signal: AbortSignal): Promise<void> {
  const { queue } = options;
  const log = options.log ?? (() => {});
  signal.addEventListener('abort', () => queue.shutdown(), { once: true });
  await Promise.race([
    Promise.all(options.informers.map((i) => i.whenSynced())),
    new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true })),
  ]);
  const worker = async () => {
    for (;;) {
      const key = await queue.get();
      if (key === undefined) return;
      try {
        const result = await options.reconcile(key);
        queue.forget(key);
        if (result?.requeueAfterMs !== undefined) queue.addAfter(key, result.requeueAfterMs);
      } catch (err) {
        if (!signal.aborted) {
          log(`${options.name}: reconcile ${key} failed (attempt ${queue.failures(key) + 1}): ${err instanceof Error ? err.message : String(err)}`);
          queue.addRateLimited(key);
        }
      } finally {
        queue.done(key);
      }
    }
  };
  await Promise.all(Array.from({ length: options.workers ?? 1 }, worker));
}

export { WorkQueue };
