// In-flight requests of one function, time-weighted in 1 s buckets: the concurrency the function autoscaler averages over its windows.

export interface ConcurrencyOptions {
  now?: () => number;
  /** Bucket width (Knative's activator reports each second). */
  bucketMs?: number;
  /** How much history is kept: the longest window asked for (the 60 s stable window). */
  keepMs?: number;
}

interface Bucket {
  start: number;
  /** Sum of in-flight x milliseconds over the bucket. */
  integral: number;
}

/**
 * Counts requests in flight (held ones included: they are demand too) and integrates that
 * count over time, so an average over a window is the mean number of requests in flight at
 * once, however short or long each request was: what Knative's KPA scales on.
 */
export class FunctionConcurrency {
  readonly #now: () => number;
  readonly #bucketMs: number;
  readonly #keep: number;
  #inFlight = 0;
  #lastChange: number;
  #bucketStart: number;
  #integral = 0;
  #buckets: Bucket[] = [];
  /** Averages never reach back before this: a function that just woke from zero is judged on its present load alone. */
  #windowStart: number;
  #lastActive = -Infinity;

  constructor(options: ConcurrencyOptions = {}) {
    this.#now = options.now ?? Date.now;
    this.#bucketMs = options.bucketMs ?? 1000;
    this.#keep = Math.ceil((options.keepMs ?? 60_000) / this.#bucketMs) + 1;
    const now = this.#now();
    this.#lastChange = now;
    this.#bucketStart = now - (now % this.#bucketMs);
    this.#windowStart = now;
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  /** When a request last arrived or finished (-Infinity: never since this process started). */
  get lastActiveAt(): number {
    return this.#inFlight > 0 ? this.#now() : this.#lastActive;
  }

  begin(): void {
    this.#advance(this.#now());
    this.#inFlight++;
    this.#lastActive = this.#now();
  }

  end(): void {
    this.#advance(this.#now());
    this.#inFlight = Math.max(0, this.#inFlight - 1);
    this.#lastActive = this.#now();
  }

  /** Forgets the history before now for averaging (a scale from zero starts afresh). */
  restartWindow(): void {
    this.#windowStart = this.#now();
  }

  /** Time-weighted mean of in-flight requests over the last `windowMs` (or since the window was restarted, if later). */
  average(windowMs: number): number {
    const now = this.#now();
    this.#advance(now);
    const from = Math.max(now - windowMs, this.#windowStart);
    if (now - from <= 0) return this.#inFlight;
    let sum = 0;
    for (const b of this.#buckets) {
      const end = b.start + this.#bucketMs;
      if (end <= from) continue;
      // A bucket cut by the window's start counts in proportion (load within a second taken as even).
      sum += b.start >= from ? b.integral : (b.integral * (end - from)) / this.#bucketMs;
    }
    const elapsed = now - this.#bucketStart;
    if (elapsed > 0) sum += from <= this.#bucketStart ? this.#integral : (this.#integral * (now - from)) / elapsed;
    return sum / (now - from);
  }

  #advance(now: number): void {
    if (now < this.#lastChange) return;
    // A long quiet spell: the buckets it spans all hold the constant in-flight count.
    if (now - this.#bucketStart > this.#keep * this.#bucketMs) {
      const start = now - (now % this.#bucketMs);
      this.#buckets = [];
      for (let s = start - this.#keep * this.#bucketMs; s < start; s += this.#bucketMs)
        this.#buckets.push({ start: s, integral: this.#inFlight * this.#bucketMs });
      this.#bucketStart = start;
      this.#integral = 0;
      this.#lastChange = start;
    }
    while (now >= this.#bucketStart + this.#bucketMs) {
      const end = this.#bucketStart + this.#bucketMs;
      this.#integral += this.#inFlight * (end - this.#lastChange);
      this.#buckets.push({ start: this.#bucketStart, integral: this.#integral });
      if (this.#buckets.length > this.#keep) this.#buckets.shift();
      this.#bucketStart = end;
      this.#lastChange = end;
      this.#integral = 0;
    }
    this.#integral += this.#inFlight * (now - this.#lastChange);
    this.#lastChange = now;
  }
}
