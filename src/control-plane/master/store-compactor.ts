// Compacts the store's history every few minutes, as kube-apiserver does for etcd: without it every write ever made is kept and etcd's database grows until it hits its quota.
import type { Store } from '../../core/store/store.js';
import { abortableDelay } from '../../core/controller/informer.js';

/** kube-apiserver's default --etcd-compaction-interval. */
export const COMPACTION_INTERVAL_MS = 5 * 60_000;

export interface StoreCompactorOptions {
  store: Pick<Store, 'currentRevision' | 'compact'>;
  intervalMs?: number;
  log?: (message: string) => void;
}

/**
 * Each tick compacts up to the revision seen at the tick before, so watchers always have at
 * least one interval of history to resume from; one further behind relists (410 Gone), as
 * informers are built to.
 */
export class StoreCompactor {
  readonly #o: StoreCompactorOptions;
  #previous: number | undefined;

  constructor(options: StoreCompactorOptions) {
    this.#o = options;
  }

  /** One step: compact to the revision remembered last time (if it moved on), then remember the current one. Returns the revision compacted to. */
  async tick(): Promise<number | undefined> {
    const current = await this.#o.store.currentRevision();
    const target = this.#previous;
    this.#previous = current;
    if (target === undefined || target >= current) return undefined;
    await this.#o.store.compact(target);
    return target;
  }

  async start(signal: AbortSignal): Promise<void> {
    const interval = this.#o.intervalMs ?? COMPACTION_INTERVAL_MS;
    while (!signal.aborted) {
      try {
        const compacted = await this.tick();
        if (compacted !== undefined) this.#o.log?.(`store: history compacted up to revision ${compacted}`);
      } catch (err) {
        // A compaction another master already made, or etcd briefly away: the next tick tries again.
        if (!signal.aborted) this.#o.log?.(`store: compaction failed: ${err instanceof Error ? err.message : String(err)}`);
      }
      await abortableDelay(interval, signal);
    }
  }
}
