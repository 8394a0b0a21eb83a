// Controller expectations: the creates and deletes a controller has issued but its informer has not yet seen.
/**
 * Without these a controller that reconciles again before its informer has caught up would
 * count too few pods (creating more) or too many (deleting more). As Kubernetes'
 * ControllerExpectations: a key with outstanding writes is not acted on until they are all
 * observed or the record is older than the timeout (a watch event lost for good must not
 * stall the controller forever). Deletions are tracked by pod key so that the same pod seen
 * twice (marked for deletion, then gone) is counted once.
 */

/** Kubernetes' ExpectationsTimeout. */
export const DEFAULT_EXPECTATIONS_TIMEOUT_MS = 5 * 60 * 1000;

interface Record {
  adds: number;
  deletes: Set<string>;
  setAt: number;
}

export interface ExpectationsOptions {
  timeoutMs?: number;
  now?: () => number;
}

export class ControllerExpectations {
  readonly #records = new Map<string, Record>();
  readonly #timeoutMs: number;
  readonly #now: () => number;

  constructor(options: ExpectationsOptions = {}) {
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_EXPECTATIONS_TIMEOUT_MS;
    this.#now = options.now ?? Date.now;
  }

  /** Records what a sync is about to issue: `adds` creates and deletes of these pod keys (replaces any earlier record). */
  expect(key: string, adds: number, deleteKeys: readonly string[] = []): void {
    this.#records.set(key, { adds, deletes: new Set(deleteKeys), setAt: this.#now() });
  }

  /** A pod this controller owns appeared (or a create failed and will never appear). */
  creationObserved(key: string, count = 1): void {
    const r = this.#records.get(key);
    if (r) r.adds = Math.max(0, r.adds - count);
  }

  /** A pod this controller was deleting is marked for deletion or gone (or its delete failed). */
  deletionObserved(key: string, podKey: string): void {
    this.#records.get(key)?.deletes.delete(podKey);
  }

  /** True when the controller may act for `key`: nothing outstanding, or the record timed out. */
  satisfied(key: string): boolean {
    const r = this.#records.get(key);
    if (!r) return true;
    if (r.adds <= 0 && r.deletes.size === 0) return true;
    return this.#now() - r.setAt >= this.#timeoutMs;
  }

  /** How long until an unsatisfied record times out (for a requeue), or undefined when satisfied. */
  remainingMs(key: string): number | undefined {
    if (this.satisfied(key)) return undefined;
    return Math.max(0, this.#records.get(key)!.setAt + this.#timeoutMs - this.#now());
  }

  /** The controller's object is gone: forget it. */
  forget(key: string): void {
    this.#records.delete(key);
  }
}
