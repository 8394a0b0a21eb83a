// The queue of pods waiting for a node: active (try now), backing off (tried recently), and unschedulable (parked until the cluster changes or 30 s pass).
export interface SchedulingQueueOptions {
  now?: () => number;
  /** Backoff after the first failed attempt; doubles per attempt. Kubernetes: 1 s. */
  initialBackoffMs?: number;
  /** Kubernetes: 10 s. */
  maxBackoffMs?: number;
  /** A parked pod is tried again after this long even if nothing changed. */
  unschedulableTimeoutMs?: number;
}

/**
 * Shaped after kube-scheduler's: a failed pod is not retried in a loop. It waits, parked, for a
 * change that may help (a node added or changed, a pod gone), and then still respects its own
 * backoff, so that a busy cluster does not turn every event into a storm of retries.
 * One consumer: pop() a key, then report it with done(), unschedulable() or retry().
 */
export class SchedulingQueue {
  readonly #now: () => number;
  readonly #initialBackoffMs: number;
  readonly #maxBackoffMs: number;
  readonly #unschedulableTimeoutMs: number;
  #active: string[] = [];
  #head = 0;
  readonly #activeSet = new Set<string>();
  /** Key -> when its backoff ends. */
  readonly #backoff = new Map<string, number>();
  /** Key -> when it was parked. */
  readonly #unschedulable = new Map<string, number>();
  readonly #attempts = new Map<string, { count: number; last: number }>();
  /** Keys popped and not yet reported, with the move cycle they were popped in. */
  readonly #inFlight = new Map<string, number>();
  readonly #changedInFlight = new Set<string>();
  #moveCycle = 0;
  #waiters: (() => void)[] = [];
  #shutdown = false;

  constructor(options: SchedulingQueueOptions = {}) {
    this.#now = options.now ?? Date.now;
    this.#initialBackoffMs = options.initialBackoffMs ?? 1000;
    this.#maxBackoffMs = options.maxBackoffMs ?? 10_000;
    this.#unschedulableTimeoutMs = options.unschedulableTimeoutMs ?? 30_000;
  }

  /** A pending pod appeared or changed: try it now, or when its backoff ends. */
  add(key: string): void {
    if (this.#shutdown) return;
    if (this.#inFlight.has(key)) {
      this.#changedInFlight.add(key);
      return;
    }
    if (this.#activeSet.has(key) || this.#backoff.has(key)) return;
    this.#unschedulable.delete(key);
    this.#moveOut(key);
  }

  /** The pod was bound or deleted: forget it entirely. */
  delete(key: string): void {
    this.#activeSet.delete(key);
    this.#backoff.delete(key);
    this.#unschedulable.delete(key);
    this.#attempts.delete(key);
    this.#inFlight.delete(key);
    this.#changedInFlight.delete(key);
  }

  /** The next key to try, waiting for one; undefined after shutdown. */
  async pop(): Promise<string | undefined> {
    for (;;) {
      const key = this.tryPop();
      if (key !== undefined || this.#shutdown) return key;
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
  }

  tryPop(): string | undefined {
    while (this.#head < this.#active.length) {
      const key = this.#active[this.#head++]!;
      if (this.#head > 1024 && this.#head * 2 > this.#active.length) {
        this.#active = this.#active.slice(this.#head);
        this.#head = 0;
      }
      // Deleted keys stay in the array; the set says which are live.
      if (!this.#activeSet.delete(key)) continue;
      this.#inFlight.set(key, this.#moveCycle);
      return key;
    }
    return undefined;
  }

  /** The attempt succeeded (or the pod needs nothing more): nothing left to track. */
  done(key: string): void {
    this.#inFlight.delete(key);
    this.#changedInFlight.delete(key);
    this.#attempts.delete(key);
  }

  /** No node fits: park until the cluster changes, unless it already did while the pod was being tried. */
  unschedulable(key: string): void {
    if (this.#shutdown) return;
    const cycle = this.#inFlight.get(key);
    const changed = this.#changedInFlight.has(key) || (cycle !== undefined && cycle < this.#moveCycle);
    this.#inFlight.delete(key);
    this.#changedInFlight.delete(key);
    this.#countAttempt(key);
    if (changed) this.#moveOut(key);
    else this.#unschedulable.set(key, this.#now());
  }

  /** Something failed (a write, a lost race): try again after the backoff. */
  retry(key: string): void {
    if (this.#shutdown) return;
    this.#inFlight.delete(key);
    this.#changedInFlight.delete(key);
    this.#countAttempt(key);
    this.#moveOut(key);
  }

  /** The cluster changed in a way that may let parked pods fit: each goes back, after its backoff. */
  moveAllToActiveOrBackoff(): void {
    this.#moveCycle++;
    for (const key of [...this.#unschedulable.keys()]) {
      this.#unschedulable.delete(key);
      this.#moveOut(key);
    }
  }

  /** Call periodically: backoffs that ended go active, and pods parked too long are tried again. */
  tick(): void {
    const now = this.#now();
    for (const [key, readyAt] of this.#backoff) {
      if (readyAt <= now) {
        this.#backoff.delete(key);
        this.#activate(key);
      }
    }
    for (const [key, since] of this.#unschedulable) {
      if (now - since >= this.#unschedulableTimeoutMs) {
        this.#unschedulable.delete(key);
        this.#moveOut(key);
      }
    }
  }

  /** When the pod's backoff ends (0 for a pod never tried). */
  backoffEnds(key: string): number {
    const a = this.#attempts.get(key);
    if (!a) return 0;
    return a.last + Math.min(this.#maxBackoffMs, this.#initialBackoffMs * 2 ** (a.count - 1));
  }

  attempts(key: string): number {
    return this.#attempts.get(key)?.count ?? 0;
  }

  get stats(): { active: number; backoff: number; unschedulable: number; inFlight: number } {
    return { active: this.#activeSet.size, backoff: this.#backoff.size, unschedulable: this.#unschedulable.size, inFlight: this.#inFlight.size };
  }

  has(key: string): boolean {
    return this.#activeSet.has(key) || this.#backoff.has(key) || this.#unschedulable.has(key) || this.#inFlight.has(key);
  }

  shutdown(): void {
    this.#shutdown = true;
    for (const resolve of this.#waiters.splice(0)) resolve();
  }

  #countAttempt(key: string): void {
    const a = this.#attempts.get(key);
    this.#attempts.set(key, { count: (a?.count ?? 0) + 1, last: this.#now() });
  }

  #moveOut(key: string): void {
    const readyAt = this.backoffEnds(key);
    if (readyAt > this.#now()) this.#backoff.set(key, readyAt);
    else this.#activate(key);
  }

  #activate(key: string): void {
    if (this.#activeSet.has(key)) return;
    this.#activeSet.add(key);
    this.#active.push(key);
    this.#waiters.shift()?.();
  }
}
