// The scheduler's Events: Scheduled for each binding, and one FailedScheduling per pending pod whose count goes up with each retry, as Kubernetes aggregates them.
import { randomBytes } from 'node:crypto';
import type { Pod } from '../../core/api/pod.js';
import { timestamp } from '../../core/api/timestamp.js';
import type { WritePump } from './write-pump.js';

export const SCHEDULER_NAME = 'default-scheduler';

/** Where events go: the object service in the master, a list in unit tests. */
export interface SchedulerEventSink {
  create(namespace: string, event: Record<string, unknown>): Promise<void>;
  /** A JSON merge patch of an Event made earlier; rejects with a NotFoundError-like error (code 404) when it is gone. */
  patch(namespace: string, name: string, patch: Record<string, unknown>): Promise<void>;
}

export interface SchedulerEventsOptions {
  sink: SchedulerEventSink;
  /** Where Scheduled events are written. */
  pump: WritePump;
  /** Where FailedScheduling events are written (default: pump); the scheduler gives them a rate-limited one. */
  failurePump?: WritePump;
  now?: () => Date;
  /** A repeat with the same message is written at most this often (the count still goes up in between). */
  repeatIntervalMs?: number;
}

interface Failure {
  namespace: string;
  name: string;
  /** The Event's name once created. */
  eventName?: string;
  count: number;
  message: string;
  first: string;
  last: string;
  writtenAt: number;
  /** A write is queued or running; what it writes is read when it runs. */
  busy: boolean;
  /** Something changed that the queued or running write may not carry. */
  dirty: boolean;
}

function eventName(pod: Pod, at: Date): string {
  // Kubernetes names events `<object>.<hex nanoseconds>`; random bytes make ours unique as well.
  return `${pod.metadata.name}.${at.getTime().toString(16)}${randomBytes(3).toString('hex')}`;
}

function involved(pod: Pod): Record<string, unknown> {
  return { kind: 'Pod', apiVersion: 'v1', namespace: pod.metadata.namespace, name: pod.metadata.name, uid: pod.metadata.uid };
}

export class SchedulerEvents {
  readonly #options: SchedulerEventsOptions;
  readonly #now: () => Date;
  readonly #failures = new Map<string, Failure>();

  constructor(options: SchedulerEventsOptions) {
    this.#options = options;
    this.#now = options.now ?? (() => new Date());
  }

  /** `Successfully assigned NS/NAME to NODE`; dropped rather than queued without bound when writes fall behind. */
  scheduled(pod: Pod, nodeName: string): void {
    const now = this.#now();
    const at = timestamp(now);
    const namespace = pod.metadata.namespace!;
    this.#options.pump.push(() =>
      this.#options.sink.create(namespace, {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: eventName(pod, now), namespace },
        involvedObject: involved(pod),
        reason: 'Scheduled',
        message: `Successfully assigned ${namespace}/${pod.metadata.name} to ${nodeName}`,
        type: 'Normal',
        source: { component: SCHEDULER_NAME },
        firstTimestamp: at,
        lastTimestamp: at,
        count: 1,
        action: 'Binding',
        reportingComponent: SCHEDULER_NAME,
        reportingInstance: SCHEDULER_NAME,
      }),
    );
  }

  /**
   * One Event per pod: the first failure creates it, later ones bump its count and carry the
   * latest message. An unchanged message is rewritten at most every repeatIntervalMs.
   */
  failedScheduling(pod: Pod, message: string): void {
    const uid = pod.metadata.uid ?? `${pod.metadata.namespace}/${pod.metadata.name}`;
    const now = this.#now();
    const at = timestamp(now);
    let f = this.#failures.get(uid);
    if (!f) {
      f = { namespace: pod.metadata.namespace!, name: pod.metadata.name!, count: 1, message, first: at, last: at, writtenAt: 0, busy: false, dirty: true };
      this.#failures.set(uid, f);
      this.#write(uid, f, pod);
      return;
    }
    f.count++;
    f.last = at;
    const changed = f.message !== message;
    f.message = message;
    if (changed || now.getTime() - f.writtenAt >= (this.#options.repeatIntervalMs ?? 60_000)) {
      f.dirty = true;
      this.#write(uid, f, pod);
    }
  }

  /** The pod was scheduled or deleted: its FailedScheduling Event needs no more updates. */
  forget(uid: string | undefined): void {
    if (uid) this.#failures.delete(uid);
  }

  get tracked(): number {
    return this.#failures.size;
  }

  #write(uid: string, f: Failure, pod: Pod): void {
    if (f.busy) return;
    f.busy = true;
    const queued = (this.#options.failurePump ?? this.#options.pump).push(
      async () => {
        try {
          while (f.dirty && this.#failures.get(uid) === f) {
            f.dirty = false;
            f.writtenAt = this.#now().getTime();
            await this.#send(f, pod);
          }
        } finally {
          f.busy = false;
        }
      },
      () => this.#failures.get(uid) !== f,
    );
    if (!queued) f.busy = false;
  }

  async #send(f: Failure, pod: Pod): Promise<void> {
    if (f.eventName) {
      try {
        await this.#options.sink.patch(f.namespace, f.eventName, { count: f.count, message: f.message, lastTimestamp: f.last });
        return;
      } catch (err) {
        if ((err as { code?: number }).code !== 404) throw err;
        // Someone deleted it: make a new one.
      }
    }
    const name = eventName(pod, this.#now());
    await this.#options.sink.create(f.namespace, {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name, namespace: f.namespace },
      involvedObject: involved(pod),
      reason: 'FailedScheduling',
      message: f.message,
      type: 'Warning',
      source: { component: SCHEDULER_NAME },
      firstTimestamp: f.first,
      lastTimestamp: f.last,
      count: f.count,
      action: 'Scheduling',
      reportingComponent: SCHEDULER_NAME,
      reportingInstance: SCHEDULER_NAME,
    });
    f.eventName = name;
  }
}
