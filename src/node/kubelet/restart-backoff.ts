// Kubernetes' container restart backoff: 10 s doubling to 5 min, forgotten after 10 min of quiet.
// Time is always passed in, so the decisions are plain functions of their inputs.

export interface BackoffOptions {
  initialMs?: number;
  maxMs?: number;
  /** A container that ran at least this long before exiting starts again from initialMs. */
  resetAfterRunningMs?: number;
}

interface Entry {
  delayMs: number;
  lastUpdate: number;
}

/**
 * As the kubelet's flowcontrol.Backoff: the first restart is immediate and sets the next
 * delay to 10 s; each further restart doubles it up to 5 min. A container is "in backoff"
 * while less than the current delay has passed since it finished. An entry not touched for
 * twice the maximum is dropped, and so is one whose container ran for 10 minutes.
 */
export class RestartBackoff {
  readonly #entries = new Map<string, Entry>();
  readonly #initialMs: number;
  readonly #maxMs: number;
  readonly #resetAfterRunningMs: number;

  constructor(options: BackoffOptions = {}) {
    this.#initialMs = options.initialMs ?? 10_000;
    this.#maxMs = options.maxMs ?? 300_000;
    this.#resetAfterRunningMs = options.resetAfterRunningMs ?? 600_000;
  }

  #fresh(key: string, now: number): Entry | undefined {
    const e = this.#entries.get(key);
    if (e && now - e.lastUpdate > 2 * this.#maxMs) {
      this.#entries.delete(key);
      return undefined;
    }
    return e;
  }

  /** When the container may start again (ms since epoch); undefined when it may start now. */
  waitUntil(key: string, finishedAt: number, now: number): number | undefined {
    const e = this.#fresh(key, now);
    if (!e) return undefined;
    const until = finishedAt + e.delayMs;
    return now < until ? until : undefined;
  }

  /** The current delay for the key (0 when none): what `back-off 20s` messages show. */
  delayMs(key: string, now: number): number {
    return this.#fresh(key, now)?.delayMs ?? 0;
  }

  /** Records a restart now: the next one waits longer. */
  next(key: string, now: number): void {
    const e = this.#fresh(key, now);
    const delayMs = e ? Math.min(e.delayMs * 2, this.#maxMs) : this.#initialMs;
    this.#entries.set(key, { delayMs, lastUpdate: now });
  }

  /** A container that ran long enough has earned a clean slate. */
  noteRun(key: string, startedAt: number, finishedAt: number): void {
    if (finishedAt - startedAt >= this.#resetAfterRunningMs) this.#entries.delete(key);
  }

  forget(keyPrefix: string): void {
    for (const k of [...this.#entries.keys()]) if (k.startsWith(keyPrefix)) this.#entries.delete(k);
  }
}
