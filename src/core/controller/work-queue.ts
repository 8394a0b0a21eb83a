// A keyed work queue: deduplicates keys, never hands one key to two workers, retries with backoff.

export interface WorkQueueOptions {
  /** First retry delay after a failure; doubles per consecutive failure of the same key. */
  baseDelayMs?: number;
  maxDelayMs?: number;
}

/**
 * Semantics follow client-go's workqueue: a key added while queued is queued once; a key
 * added while being processed is processed again afterwards (never concurrently).
 */
export class WorkQueue {
  readonly #queue: string[] = [];
  /** Keys waiting in #queue. */
  readonly #dirty = new Set<string>();
  /** Keys a worker holds right now. */
  readonly #processing = new Set<string>();
  readonly #failures = new Map<string, number>();
  readonly #timers = new Map<string, NodeJS.Timeout>();
  readonly #waiters: (() => void)[] = [];
  readonly #idleWaiters: (() => void)[] = [];
  readonly #baseDelayMs: number;
  readonly #maxDelayMs: number;
  #shutdown = false;

  constructor(options: WorkQueueOptions = {}) {
    this.#baseDelayMs = options.baseDelayMs ?? 50;
    this.#maxDelayMs = options.maxDelayMs ?? 60_000;
  }

  get length(): number {
    return this.#queue.length;
  }

  add(key: string): void {
    if (this.#shutdown || this.#dirty.has(key)) return;
    this.#dirty.add(key);
    if (this.#processing.has(key)) return; // re-queued when the worker calls done()
    this.#queue.push(key);
    this.#waiters.shift()?.();
  }

  /** Adds the key after a delay (a later add of the same key with a shorter delay wins). */
  addAfter(key: string, delayMs: number): void {
    if (this.#shutdown) return;
    if (delayMs <= 0) {
      this.add(key);
      return;
    }
    const existing = this.#timers.get(key);
    if (existing) clearTimeout(existing);
    const timer = setTimeout(() => {
      this.#timers.delete(key);
      this.add(key);
    }, delayMs);
    timer.unref();
    this.#timers.set(key, timer);
  }

  /** Re-adds a key that failed, with exponential backoff per key. */
  addRateLimited(key: string): void {
    const n = this.#failures.get(key) ?? 0;
    this.#failures.set(key, n + 1);
    this.addAfter(key, Math.min(this.#maxDelayMs, this.#baseDelayMs * 2 ** n));
  }

  /** Clears the failure count of a key after a success. */
  forget(key: string): void {
    this.#failures.delete(key);
  }

  failures(key: string): number {
    return this.#failures.get(key) ?? 0;
  }

  /** Waits for the next key; undefined once shut down. The caller must call done(key). */
  async get(): Promise<string | undefined> {
    while (this.#queue.length === 0) {
      if (this.#shutdown) return undefined;
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
    const key = this.#queue.shift()!;
    this.#dirty.delete(key);
    this.#processing.add(key);
    return key;
  }

  done(key: string): void {
    this.#processing.delete(key);
    if (this.#dirty.has(key)) {
      this.#queue.push(key);
      this.#waiters.shift()?.();
    }
    if (this.#queue.length === 0 && this.#processing.size === 0) {
      for (const resolve of this.#idleWaiters.splice(0)) resolve();
    }
  }

  /** True when nothing is queued or being processed (delayed keys don't count). */
  get idle(): boolean {
    return this.#queue.length === 0 && this.#processing.size === 0;
  }

  /** Resolves when the queue is idle: how tests await a reconcile without sleeping. */
  async whenIdle(): Promise<void> {
    if (this.idle) return;
    await new Promise<void>((resolve) => this.#idleWaiters.push(resolve));
  }

  shutdown(): void {
    this.#shutdown = true;
    for (const t of this.#timers.values()) clearTimeout(t);
    this.#timers.clear();
    for (const resolve of this.#waiters.splice(0)) resolve();
    for (const resolve of this.#idleWaiters.splice(0)) resolve();
  }
}
