// Requests held while a function has no pod to take them: bounded per function, released when a pod serves, failed at a deadline.
import { getOrCreate } from '../../core/get-or-create.js';

export type HoldOutcome =
  /** A pod serves now: pick again. */
  | { type: 'woken' }
  | { type: 'deadline' }
  | { type: 'aborted' }
  /** The function cannot start (its handler does not import): no point waiting. */
  | { type: 'failed'; message: string }
  /** The activator is stopping. */
  | { type: 'closing' };

interface Waiter {
  resolve(outcome: HoldOutcome): void;
}

export interface HeldRequestsOptions {
  /** Most requests held per function (default 100); more are refused with 503 and Retry-After, so a dead function cannot pile up memory. */
  capacity?: number;
}

export class HeldRequests {
  readonly #capacity: number;
  readonly #waiters = new Map<string, Set<Waiter>>();

  constructor(options: HeldRequestsOptions = {}) {
    this.#capacity = options.capacity ?? 100;
  }

  get capacity(): number {
    return this.#capacity;
  }

  count(functionKey: string): number {
    return this.#waiters.get(functionKey)?.size ?? 0;
  }

  /**
   * Holds one request until `wake` or `fail` for its function, the deadline, or `signal`.
   * Returns undefined at once when the function's queue is full.
   */
  hold(functionKey: string, deadlineMs: number, signal?: AbortSignal): Promise<HoldOutcome> | undefined {
    if ((this.#waiters.get(functionKey)?.size ?? 0) >= this.#capacity) return undefined;
    const waiters = getOrCreate(this.#waiters, functionKey, () => new Set());
    return new Promise<HoldOutcome>((resolve) => {
      const done = (outcome: HoldOutcome) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        if (!waiters.delete(waiter)) return;
        if (waiters.size === 0 && this.#waiters.get(functionKey) === waiters) this.#waiters.delete(functionKey);
        resolve(outcome);
      };
      const waiter: Waiter = { resolve: done };
      const onAbort = () => done({ type: 'aborted' });
      const timer = setTimeout(() => done({ type: 'deadline' }), Math.max(0, deadlineMs));
      waiters.add(waiter);
      if (signal?.aborted) onAbort();
      else signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Lets every request held for the function go and pick a pod. */
  wake(functionKey: string): void {
    for (const w of [...(this.#waiters.get(functionKey) ?? [])]) w.resolve({ type: 'woken' });
  }

  fail(functionKey: string, message: string): void {
    for (const w of [...(this.#waiters.get(functionKey) ?? [])]) w.resolve({ type: 'failed', message });
  }

  /** Releases every held request: the activator is stopping. */
  close(): void {
    for (const waiters of [...this.#waiters.values()]) for (const w of [...waiters]) w.resolve({ type: 'closing' });
  }

  /** Function keys with requests held now. */
  keys(): string[] {
    return [...this.#waiters.keys()];
  }
}
