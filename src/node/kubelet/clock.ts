// Time as the kubelet sees it: the system clock in production, a manual one that tests move by hand.

/**
 * Everything in the kubelet that waits (restart backoff, probe periods, the resync) asks this
 * for the time and for timers, so that a test can step through minutes of crash looping
 * without waiting for them.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Calls `fn` once `ms` have passed; the returned function cancels it. */
  setTimer(ms: number, fn: () => void): () => void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(ms, fn) {
    const timer = setTimeout(fn, ms);
    return () => clearTimeout(timer);
  },
};

/** Resolves true once `ms` have passed on the clock, or false as soon as the signal aborts. */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(false);
    const onAbort = () => {
      cancel();
      resolve(false);
    };
    const cancel = clock.setTimer(ms, () => {
      signal?.removeEventListener('abort', onAbort);
      resolve(true);
    });
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

interface ManualTimer {
  due: number;
  seq: number;
  fn: () => void;
}

/**
 * A clock that moves only when told to. Timers that are already due (a delay of 0) run on the
 * next turn of the event loop, as setTimeout's do; later ones run when `advance` passes them.
 */
export class ManualClock implements Clock {
  #now: number;
  #seq = 0;
  readonly #timers = new Set<ManualTimer>();

  constructor(start: number | string | Date = '2030-01-01T00:00:00.000Z') {
    this.#now = typeof start === 'number' ? start : new Date(start).getTime();
  }

  now(): number {
    return this.#now;
  }

  /** The same instant as a Date, for providers that take a `() => Date`. */
  date(): Date {
    return new Date(this.#now);
  }

  setTimer(ms: number, fn: () => void): () => void {
    const timer: ManualTimer = { due: this.#now + Math.max(0, ms), seq: this.#seq++, fn };
    if (ms <= 0) {
      // Not held for advance(): code that yields with a zero delay must not stall.
      let cancelled = false;
      setImmediate(() => {
        if (!cancelled) fn();
      });
      return () => {
        cancelled = true;
      };
    }
    this.#timers.add(timer);
    return () => {
      this.#timers.delete(timer);
    };
  }

  /** How many timers wait for the clock to move. */
  get pendingTimers(): number {
    return this.#timers.size;
  }

  /**
   * Moves the clock forward, running each timer at its due time in order. After each one the
   * event loop gets a turn, so that in-memory work it starts (a probe run, say) can set its
   * next timer before the clock moves past it.
   */
  async advance(ms: number): Promise<void> {
    const target = this.#now + ms;
    for (;;) {
      let next: ManualTimer | undefined;
      for (const t of this.#timers) {
        if (t.due <= target && (!next || t.due < next.due || (t.due === next.due && t.seq < next.seq))) next = t;
      }
      if (!next) break;
      this.#timers.delete(next);
      this.#now = Math.max(this.#now, next.due);
      next.fn();
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    this.#now = target;
  }
}
