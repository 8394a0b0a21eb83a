// Leader election on coordination.k8s.io/v1 Leases, as client-go's leaderelection does it: one holder per Lease, renewed through the API with resourceVersion preconditions, and fencing the moment a renewal cannot be had in time.
import { abortableSleep } from '../../core/abortable-sleep.js';
import { type Lease, leaseKind, microTime } from '../../core/api/lease.js';
import type { KubeObject } from '../../core/api/meta.js';
import type { Client } from '../../core/client/client.js';
import { ApiError } from '../../core/errors.js';

/** Where the control plane's Leases live, as in Kubernetes. */
export const LEADER_ELECTION_NAMESPACE = 'kube-system';

/** Kubernetes' defaults (kube-controller-manager's --leader-elect-lease-duration, -renew-deadline, -retry-period). */
export const DEFAULT_ELECTION_TIMING: ElectionTiming = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 };

export interface ElectionTiming {
  /** How long a Lease holds after its last renewal: candidates wait this long before taking a Lease held by another. */
  leaseDurationMs: number;
  /** How long the leader keeps trying to renew before it gives up leading; shorter than the lease, so that it stops before anyone may take over. */
  renewDeadlineMs: number;
  /** How often candidates try to acquire and the leader renews. */
  retryPeriodMs: number;
}

/** What this candidate knows of the Lease: the stored object and when (by this process's clock) it last saw it change. */
export interface Observation {
  lease: Lease | undefined;
  /** Local time (ms) when the Lease's current resourceVersion was first seen; a holder that renews keeps moving it. */
  observedAt: number;
}

export type ElectionDecision =
  /** No Lease: create it, held by us. */
  | { action: 'create'; spec: NonNullable<Lease['spec']> }
  /** Write this spec over the observed resourceVersion: a renewal (ours already) or an acquisition (free or expired). */
  | { action: 'update'; spec: NonNullable<Lease['spec']>; acquired: boolean }
  /** Another holder's Lease that has not expired: try again later. */
  | { action: 'wait'; holder: string; expiresAt: number };

/**
 * The decision of one try, pure: acquire an absent, released or expired Lease, renew our own
 * (also after a restart of the same identity), leave another's unexpired Lease alone. A Lease is
 * expired when its renewTime plus its duration has passed, or when this process has watched it go
 * unchanged for that long (client-go's rule, which needs no agreement between clocks). A fresh
 * master therefore takes a stale Lease at once instead of waiting a whole duration.
 */
export function decideElection(input: { identity: string; now: number; observation: Observation; timing: ElectionTiming }): ElectionDecision {
  const { identity, now, timing } = input;
  const lease = input.observation.lease;
  const durationSeconds = Math.max(1, Math.round(timing.leaseDurationMs / 1000));
  const stamp = microTime(new Date(now));
  if (!lease) {
    return {
      action: 'create',
      spec: { holderIdentity: identity, leaseDurationSeconds: durationSeconds, acquireTime: stamp, renewTime: stamp, leaseTransitions: 0 },
    };
  }
  const spec = lease.spec ?? {};
  const holder = spec.holderIdentity ?? '';
  if (holder === identity) {
    return {
      action: 'update',
      acquired: false,
      spec: { ...spec, holderIdentity: identity, leaseDurationSeconds: durationSeconds, acquireTime: spec.acquireTime ?? stamp, renewTime: stamp },
    };
  }
  if (holder !== '') {
    const expiresAt = leaseExpiresAt(input.observation, timing);
    if (now < expiresAt) return { action: 'wait', holder, expiresAt };
  }
  return {
    action: 'update',
    acquired: true,
    spec: {
      ...spec,
      holderIdentity: identity,
      leaseDurationSeconds: durationSeconds,
      acquireTime: stamp,
      renewTime: stamp,
      leaseTransitions: (spec.leaseTransitions ?? 0) + 1,
    },
  };
}

/** When the observed Lease stops binding others: the earlier of its renewTime and our last sight of a change, plus its duration. */
export function leaseExpiresAt(observation: Observation, timing: ElectionTiming): number {
  const spec = observation.lease?.spec ?? {};
  const durationMs = spec.leaseDurationSeconds ? spec.leaseDurationSeconds * 1000 : timing.leaseDurationMs;
  const renewed = spec.renewTime ? Date.parse(spec.renewTime) : Number.NaN;
  const byRenewTime = Number.isFinite(renewed) ? renewed + durationMs : Number.POSITIVE_INFINITY;
  return Math.min(byRenewTime, observation.observedAt + durationMs);
}

/**
 * Fencing, pure: when the leader must stop acting. A renewal is counted from the moment its write
 * was sent (the store may have applied it at any point after), so a leader whose last good renewal
 * started at `renewStartedAt` stops at `renewStartedAt + renewDeadline`: strictly before the Lease
 * can expire for anyone else.
 */
export function fenceAt(renewStartedAt: number, timing: ElectionTiming): number {
  return renewStartedAt + timing.renewDeadlineMs;
}

/** The Lease released on a clean shutdown (client-go's ReleaseOnCancel): no holder, so the next candidate takes it at its next try. */
export function releasedSpec(lease: Lease, now: number): NonNullable<Lease['spec']> {
  const stamp = microTime(new Date(now));
  return { ...(lease.spec ?? {}), holderIdentity: null, leaseDurationSeconds: 1, acquireTime: stamp, renewTime: stamp };
}

export interface LeaderElectorOptions {
  /** Writes go through the API (optimistic concurrency on resourceVersion makes two holders impossible at the store). */
  client: Client;
  /** The Lease's name: the component, e.g. kube-controller-manager. */
  name: string;
  namespace?: string;
  /** This candidate: unique per master, stable across its restarts (so that it can take its own Lease back at once). */
  identity: string;
  timing?: Partial<ElectionTiming>;
  /**
   * Runs the component while this candidate leads: `leaderSignal` aborts when leadership is lost
   * (fencing) or the elector stops; the returned promise settles once the component has stopped.
   * The elector does not try again until it has.
   */
  onStartedLeading(leaderSignal: AbortSignal): Promise<void>;
  onStoppedLeading?(): void;
  /** Called when another holder is first seen (or changes). */
  onNewLeader?(identity: string): void;
  log?: (message: string) => void;
  now?: () => number;
}

/** One candidate for one Lease. `start(signal)` runs until `signal` aborts, then releases the Lease if it holds it. */
export class LeaderElector {
  readonly #o: LeaderElectorOptions;
  readonly #timing: ElectionTiming;
  readonly #namespace: string;
  readonly #now: () => number;
  readonly #log: (message: string) => void;
  #observation: Observation = { lease: undefined, observedAt: 0 };
  #observedVersion: string | undefined;
  #lastHolder: string | undefined;
  #leading: { controller: AbortController; running: Promise<void>; fence: NodeJS.Timeout } | undefined;
  #lastError = '';

  constructor(options: LeaderElectorOptions) {
    this.#o = options;
    this.#timing = { ...DEFAULT_ELECTION_TIMING, ...options.timing };
    if (this.#timing.renewDeadlineMs >= this.#timing.leaseDurationMs)
      throw new Error('leader election: the renew deadline must be shorter than the lease duration');
    if (this.#timing.retryPeriodMs >= this.#timing.renewDeadlineMs)
      throw new Error('leader election: the retry period must be shorter than the renew deadline');
    this.#namespace = options.namespace ?? LEADER_ELECTION_NAMESPACE;
    this.#now = options.now ?? Date.now;
    this.#log = options.log ?? (() => {});
  }

  /** Whether this candidate leads now (its component's signal is live). */
  get isLeader(): boolean {
    return this.#leading !== undefined && !this.#leading.controller.signal.aborted;
  }

  async start(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      // A component that lost its Lease winds down before this candidate may lead again.
      if (this.#leading?.controller.signal.aborted) await this.#stopped();
      await this.#tryOnce();
      // Candidates spread their tries (client-go's jitter) so that they do not hit the store in step; a leader renews on the period.
      const wait = this.isLeader ? this.#timing.retryPeriodMs : this.#timing.retryPeriodMs * (1 + Math.random() * 0.2);
      await abortableSleep(wait, signal);
    }
    if (this.#leading) {
      const held = !this.#leading.controller.signal.aborted;
      this.#leading.controller.abort();
      await this.#stopped();
      // Best effort and brief: a store that does not answer must not hold the shutdown up (the Lease then expires by itself).
      if (held) await Promise.race([this.#release(), new Promise<void>((resolve) => setTimeout(resolve, this.#timing.retryPeriodMs).unref())]);
    }
  }

  async #tryOnce(): Promise<void> {
    const startedAt = this.#now();
    try {
      const lease = await this.#read();
      const version = lease?.metadata.resourceVersion;
      if (version !== this.#observedVersion || this.#observation.lease === undefined) {
        this.#observedVersion = version;
        this.#observation = { lease, observedAt: startedAt };
      }
      const decision = decideElection({ identity: this.#o.identity, now: startedAt, observation: this.#observation, timing: this.#timing });
      if (decision.action === 'wait') {
        if (decision.holder !== this.#lastHolder) {
          this.#lastHolder = decision.holder;
          this.#o.onNewLeader?.(decision.holder);
        }
        // Someone else holds it: whatever we believed, we do not lead.
        if (this.isLeader) this.#fence(`the lease is held by ${decision.holder}`);
        return;
      }
      const body: Lease = {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata:
          decision.action === 'create'
            ? { name: this.#o.name, namespace: this.#namespace }
            : { ...lease!.metadata, name: this.#o.name, namespace: this.#namespace },
        spec: decision.spec,
      };
      const written = (
        decision.action === 'create'
          ? await this.#o.client.create(leaseKind, body, { namespace: this.#namespace })
          : await this.#o.client.replace(leaseKind, { name: this.#o.name, namespace: this.#namespace }, body)
      ) as Lease;
      this.#observedVersion = written.metadata.resourceVersion;
      this.#observation = { lease: written, observedAt: this.#now() };
      this.#lastError = '';
      if (this.#lastHolder !== this.#o.identity) {
        this.#lastHolder = this.#o.identity;
        this.#o.onNewLeader?.(this.#o.identity);
      }
      // A fresh cluster's or a restarted master's own Lease is routine; taking one from another master is worth a line.
      this.#renewed(startedAt, decision.action === 'update' && decision.acquired ? lease?.spec?.holderIdentity || 'a released lease' : undefined);
    } catch (err) {
      // A conflict is another candidate's write winning the race: normal, and settled at the next try.
      const conflict = err instanceof ApiError && (err.code === 409 || err.reason === 'AlreadyExists');
      const message = err instanceof Error ? err.message : String(err);
      if (!conflict && message !== this.#lastError) this.#log(`leader election ${this.#namespace}/${this.#o.name}: ${message}`);
      this.#lastError = conflict ? '' : message;
      // The store moved on: read afresh next time.
      this.#observedVersion = undefined;
      this.#observation = { lease: undefined, observedAt: 0 };
    }
  }

  async #read(): Promise<Lease | undefined> {
    try {
      return (await this.#o.client.get(leaseKind, { name: this.#o.name, namespace: this.#namespace })) as KubeObject as Lease;
    } catch (err) {
      if (err instanceof ApiError && err.code === 404) return undefined;
      throw err;
    }
  }

  /** A write that started at `startedAt` succeeded: lead from now on (if not yet) and move the fence. */
  #renewed(startedAt: number, takenFrom: string | undefined): void {
    const fenceInMs = fenceAt(startedAt, this.#timing) - this.#now();
    if (this.#leading) {
      // Fenced while this write was in flight: the component winds down first (see start), whatever the write did.
      if (this.#leading.controller.signal.aborted) return;
      clearTimeout(this.#leading.fence);
      this.#leading.fence = setTimeout(() => this.#fence('the lease could not be renewed within the renew deadline'), Math.max(0, fenceInMs));
      return;
    }
    // A write that took longer than the renew deadline gives no time to lead safely: the next try renews afresh.
    if (fenceInMs <= 0) return;
    const controller = new AbortController();
    const fence = setTimeout(() => this.#fence('the lease could not be renewed within the renew deadline'), fenceInMs);
    if (takenFrom) this.#log(`leader election: ${this.#o.identity} took ${this.#namespace}/${this.#o.name} over from ${takenFrom}`);
    let running: Promise<void>;
    try {
      running = Promise.resolve(this.#o.onStartedLeading(controller.signal));
    } catch (err) {
      running = Promise.reject(err);
    }
    this.#leading = {
      controller,
      fence,
      running: running
        .catch((err) => this.#log(`${this.#o.name}: stopped with an error: ${err instanceof Error ? err.message : String(err)}`))
        // A component that ends on its own while leading has failed: the next try (the Lease still ours) starts it afresh.
        .then(() => this.#fence('its component stopped')),
    };
  }

  /** Stops the component at once: from here on it must not act, whatever its in-flight work was. */
  #fence(why: string): void {
    const leading = this.#leading;
    if (!leading || leading.controller.signal.aborted) return;
    clearTimeout(leading.fence);
    this.#log(`leader election: ${this.#o.identity} lost ${this.#namespace}/${this.#o.name}: ${why}`);
    leading.controller.abort();
    this.#o.onStoppedLeading?.();
  }

  async #stopped(): Promise<void> {
    const leading = this.#leading;
    if (!leading) return;
    clearTimeout(leading.fence);
    if (!leading.controller.signal.aborted) {
      leading.controller.abort();
      this.#o.onStoppedLeading?.();
    }
    await leading.running;
    this.#leading = undefined;
  }

  /** A clean shutdown hands the Lease over without making the others wait out its duration. */
  async #release(): Promise<void> {
    try {
      const lease = await this.#read();
      if (!lease || lease.spec?.holderIdentity !== this.#o.identity) return;
      await this.#o.client.replace(leaseKind, { name: this.#o.name, namespace: this.#namespace }, { ...lease, spec: releasedSpec(lease, this.#now()) });
    } catch (err) {
      this.#log(`leader election: cannot release ${this.#namespace}/${this.#o.name}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}
