// The function autoscaler's loop: every 2 s (and at once when a request waits for a pod) it asks decideScale and writes the current version's replicas.
import type { ReplicaSet } from '../../core/api/replicaset.js';
import type { FunctionConcurrency } from './concurrency.js';
import { decideScale, DEFAULT_TUNING, type KpaState, type KpaTuning, type ScaleSettings } from './kpa.js';

/** What the autoscaler reads about one function (the activator's caches). */
export interface ScalingView {
  /** Every function, as `namespace/name`. */
  functionKeys(): string[];
  settings(functionKey: string): ScaleSettings | undefined;
  /** Pods taking requests now. */
  readyPods(functionKey: string): number;
  /** The ReplicaSet of the version now serving (or being rolled to). */
  currentReplicaSet(functionKey: string): ReplicaSet | undefined;
  concurrency(functionKey: string): FunctionConcurrency;
}

export interface ScaleChange {
  functionKey: string;
  replicaSet: ReplicaSet;
  from: number;
  to: number;
  reason: string;
  panicking: boolean;
}

export interface FunctionAutoscalerOptions {
  view: ScalingView;
  /** Writes spec.replicas of the ReplicaSet (through its scale subresource); resolves with the written object. */
  scale(rs: ReplicaSet, replicas: number): Promise<ReplicaSet>;
  /** Told of each change written (for Events). */
  onScaled?(change: ScaleChange): void;
  tickMs?: number;
  tuning?: Partial<KpaTuning>;
  now?: () => number;
  log?: (message: string) => void;
}

export class FunctionAutoscaler {
  readonly #o: FunctionAutoscalerOptions;
  readonly #tuning: KpaTuning;
  readonly #now: () => number;
  readonly #log: (message: string) => void;
  readonly #state = new Map<string, KpaState>();
  /** What we wrote last per ReplicaSet, until the informer's copy catches up with it. */
  readonly #written = new Map<string, { replicas: number; revision: number }>();
  /** spec.replicas as last seen per ReplicaSet, to notice writes that are not ours. */
  readonly #seen = new Map<string, number>();
  /** When someone else set a function's scale (by hand, a new version's ReplicaSet), or we first saw it. */
  readonly #touched = new Map<string, number>();
  /** The ReplicaSet last seen serving per function, to notice a new version. */
  readonly #currentName = new Map<string, string>();
  /** Functions whose new version started at zero (a hard update) and has had no call since. */
  readonly #awaitingCall = new Set<string>();
  readonly #running = new Map<string, Promise<void>>();
  readonly #again = new Set<string>();

  constructor(options: FunctionAutoscalerOptions) {
    this.#o = options;
    this.#tuning = { ...DEFAULT_TUNING, ...options.tuning };
    this.#now = options.now ?? Date.now;
    this.#log = options.log ?? (() => {});
  }

  get tuning(): KpaTuning {
    return this.#tuning;
  }

  async start(signal: AbortSignal): Promise<void> {
    const tickMs = this.#o.tickMs ?? 2000;
    while (!signal.aborted) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, tickMs);
        function done() {
          clearTimeout(timer);
          signal.removeEventListener('abort', done);
          resolve();
        }
        signal.addEventListener('abort', done, { once: true });
      });
      if (signal.aborted) break;
      await Promise.all(this.#o.view.functionKeys().map((key) => this.poke(key)));
    }
    await Promise.all(this.#running.values());
  }

  /** Decides for one function now; calls made while one runs fold into one more run after it. */
  poke(functionKey: string): Promise<void> {
    const running = this.#running.get(functionKey);
    if (running) {
      this.#again.add(functionKey);
      return running;
    }
    const run = (async () => {
      do {
        this.#again.delete(functionKey);
        try {
          await this.#evaluate(functionKey);
        } catch (err) {
          this.#log(`function-autoscaler: ${functionKey}: ${err instanceof Error ? err.message : String(err)}`);
        }
      } while (this.#again.has(functionKey));
    })().finally(() => this.#running.delete(functionKey));
    this.#running.set(functionKey, run);
    return run;
  }

  forget(functionKey: string): void {
    this.#state.delete(functionKey);
    this.#touched.delete(functionKey);
    this.#currentName.delete(functionKey);
    this.#awaitingCall.delete(functionKey);
  }

  /** spec.replicas as we last know it: the informer's copy, or what we wrote if that is newer. */
  currentReplicas(rs: ReplicaSet): number {
    const key = `${rs.metadata.namespace}/${rs.metadata.name}`;
    const written = this.#written.get(key);
    const seen = Number(rs.metadata.resourceVersion ?? 0);
    if (written && written.revision > seen) return written.replicas;
    if (written) this.#written.delete(key);
    return rs.spec.replicas ?? 0;
  }

  /**
   * Whether this autoscaler writes scales: with several masters only the holder of the
   * minik8s-activator-autoscaler Lease does (the others' activators still serve calls).
   */
  active = true;

  async #evaluate(functionKey: string): Promise<void> {
    if (!this.active) return;
    const view = this.#o.view;
    const settings = view.settings(functionKey);
    const rs = view.currentReplicaSet(functionKey);
    if (!settings || !rs) return;
    const conc = view.concurrency(functionKey);
    const now = this.#now();
    const current = this.currentReplicas(rs);
    const key = `${rs.metadata.namespace}/${rs.metadata.name}`;
    // A new version at zero (a hard update; a soft one carries the old replicas over) waits for its
    // first call: the concurrency windows still hold the old version's calls, which would otherwise
    // start a pod at once, and a hard update's next call is to cold-start the new version.
    const previous = this.#currentName.get(functionKey);
    this.#currentName.set(functionKey, rs.metadata.name!);
    if (previous !== undefined && previous !== rs.metadata.name && current === 0) this.#awaitingCall.add(functionKey);
    if (this.#awaitingCall.has(functionKey)) {
      if (conc.inFlight === 0 && current === 0) return;
      this.#awaitingCall.delete(functionKey);
    }
    // A scale we did not write (a hand-made `minik8s scale`, a new version's ReplicaSet, the first
    // look after a master restart) counts as activity: it is kept for the idle grace at least.
    if (this.#seen.get(key) !== current) this.#touched.set(functionKey, now);
    this.#seen.set(key, current);
    const lastActive = Math.max(conc.lastActiveAt, this.#touched.get(functionKey) ?? -Infinity);
    const decision = decideScale({
      now,
      stableConcurrency: conc.average(this.#tuning.stableWindowMs),
      panicConcurrency: conc.average(this.#tuning.panicWindowMs),
      readyPods: view.readyPods(functionKey),
      currentReplicas: current,
      inFlight: conc.inFlight,
      idleMs: now - lastActive,
      settings,
      state: this.#state.get(functionKey) ?? { maxPanicPods: 0 },
      tuning: this.#tuning,
    });
    this.#state.set(functionKey, decision.state);
    if (decision.desired === current) return;
    const written = await this.#o.scale(rs, decision.desired);
    this.#written.set(key, { replicas: decision.desired, revision: Number(written.metadata.resourceVersion ?? 0) });
    this.#seen.set(key, decision.desired);
    this.#log(`function-autoscaler: ${functionKey}: ${rs.metadata.name} ${current} -> ${decision.desired} (${decision.reason})`);
    this.#o.onScaled?.({ functionKey, replicaSet: rs, from: current, to: decision.desired, reason: decision.reason, panicking: decision.panicking });
  }
}
