// Background writes off the decision path: a cap on how many run at once, how many start per second, and how many wait; overflow is dropped and counted.
export interface WritePumpOptions {
  /** Writes in flight at once. */
  concurrency: number;
  /** Writes waiting beyond these are dropped (Kubernetes' event broadcaster drops too, rather than stall the scheduler). */
  maxQueued: number;
  /**
   * At most this many writes start per second (a token bucket holding one second's worth), as
   * kube-scheduler's client is rate limited: a flood of pods that fit nowhere must not crowd the
   * API out. Unset: no limit.
   */
  perSecond?: number;
  now?: () => number;
  log?: (message: string) => void;
}

interface Job {
  write: () => Promise<unknown>;
  /** Asked just before the write would start: a write no longer needed is skipped and costs no token. */
  stale?: () => boolean;
}

export class WritePump {
  readonly #options: WritePumpOptions;
  readonly #now: () => number;
  #queue: (Job | undefined)[] = [];
  #head = 0;
  #running = 0;
  #dropped = 0;
  #idleWaiters: (() => void)[] = [];
  #tokens: number;
  #refilledAt: number;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: WritePumpOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#tokens = options.perSecond ?? Infinity;
    this.#refilledAt = this.#now();
  }

  /** Queues a write; false when it was dropped because too many wait. Failures are logged, never thrown. */
  push(write: () => Promise<unknown>, stale?: () => boolean): boolean {
    if (this.queued >= this.#options.maxQueued) {
      this.#dropped++;
      return false;
    }
    this.#queue.push({ write, stale });
    this.#pump();
    return true;
  }

  get queued(): number {
    return this.#queue.length - this.#head;
  }

  get running(): number {
    return this.#running;
  }

  get dropped(): number {
    return this.#dropped;
  }

  /** Drops what waits and stops the rate timer (at shutdown); writes already running finish. */
  close(): void {
    this.#dropped += this.queued;
    this.#queue = [];
    this.#head = 0;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#running === 0) for (const resolve of this.#idleWaiters.splice(0)) resolve();
  }

  /** Resolves when nothing waits or runs (tests, and shutdown, which lets writes finish). */
  whenIdle(): Promise<void> {
    if (this.#running === 0 && this.queued === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** Takes a token if one is there; otherwise arranges to pump again when the next one is due. */
  #take(): boolean {
    const rate = this.#options.perSecond;
    if (rate === undefined) return true;
    const now = this.#now();
    this.#tokens = Math.min(rate, this.#tokens + ((now - this.#refilledAt) / 1000) * rate);
    this.#refilledAt = now;
    if (this.#tokens >= 1) {
      this.#tokens--;
      return true;
    }
    if (!this.#timer) {
      this.#timer = setTimeout(
        () => {
          this.#timer = undefined;
          this.#pump();
        },
        Math.ceil(((1 - this.#tokens) / rate) * 1000),
      );
    }
    return false;
  }

  #shift(): Job {
    const job = this.#queue[this.#head]!;
    this.#queue[this.#head++] = undefined;
    if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
    return job;
  }

  #pump(): void {
    while (this.#running < this.#options.concurrency && this.queued > 0) {
      if (this.#queue[this.#head]!.stale?.()) {
        this.#shift();
        continue;
      }
      if (!this.#take()) break;
      const { write } = this.#shift();
      this.#running++;
      void (async () => {
        try {
          await write();
        } catch (err) {
          this.#options.log?.(err instanceof Error ? err.message : String(err));
        } finally {
          this.#running--;
          this.#pump();
        }
      })();
    }
    if (this.#running === 0 && this.queued === 0) for (const resolve of this.#idleWaiters.splice(0)) resolve();
  }
}
