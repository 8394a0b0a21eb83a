// Records Events about pods, folding repeats into one Event with a count, as Kubernetes' recorder does.
import { randomBytes } from 'node:crypto';
import type { Pod } from '../../core/api/pod.js';

export interface PodEvent {
  pod: Pod;
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
  /** e.g. `spec.containers{web}` */
  fieldPath?: string;
}

/** Where events go: the API server, or a list in unit tests. */
export interface EventSink {
  create(event: Record<string, unknown>): Promise<void>;
  /** Bumps count and lastTimestamp of an Event made earlier. */
  update(namespace: string, name: string, patch: Record<string, unknown>): Promise<void>;
}

interface Seen {
  name: string;
  count: number;
  firstTimestamp: string;
  lastSent: number;
}

export interface EventRecorderOptions {
  sink: EventSink;
  component: string;
  host: string;
  now?: () => number;
  /** Repeats within this window are counted but not written (the API need not hear every probe failure). */
  flushAfterMs?: number;
  log?: (message: string) => void;
}

/** Fire-and-forget: a failed event write is logged, never allowed to hold up a pod sync. */
export class EventRecorder {
  readonly #options: EventRecorderOptions;
  readonly #seen = new Map<string, Seen>();
  readonly #now: () => number;

  constructor(options: EventRecorderOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  record(e: PodEvent): void {
    void this.#record(e).catch((err: unknown) =>
      this.#options.log?.(`event ${e.reason} for pod ${e.pod.metadata.name}: ${err instanceof Error ? err.message : String(err)}`),
    );
  }

  async #record(e: PodEvent): Promise<void> {
    const { pod } = e;
    const key = [pod.metadata.uid, e.type, e.reason, e.message, e.fieldPath ?? ''].join('\u0000');
    const now = this.#now();
    const at = new Date(now).toISOString();
    const seen = this.#seen.get(key);
    if (seen) {
      seen.count++;
      if (now - seen.lastSent < (this.#options.flushAfterMs ?? 10_000)) return;
      seen.lastSent = now;
      await this.#options.sink.update(pod.metadata.namespace!, seen.name, { count: seen.count, lastTimestamp: at });
      return;
    }
    const name = `${pod.metadata.name}.${randomBytes(8).toString('hex')}`;
    this.#seen.set(key, { name, count: 1, firstTimestamp: at, lastSent: now });
    if (this.#seen.size > 4096) this.#seen.delete(this.#seen.keys().next().value as string);
    await this.#options.sink.create({
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name, namespace: pod.metadata.namespace },
      involvedObject: {
        kind: 'Pod',
        apiVersion: 'v1',
        namespace: pod.metadata.namespace,
        name: pod.metadata.name,
        uid: pod.metadata.uid,
        ...(e.fieldPath ? { fieldPath: e.fieldPath } : {}),
      },
      reason: e.reason,
      message: e.message,
      type: e.type,
      source: { component: this.#options.component, host: this.#options.host },
      firstTimestamp: at,
      lastTimestamp: at,
      count: 1,
      reportingComponent: this.#options.component,
      reportingInstance: this.#options.host,
    });
  }

  forgetPod(uid: string): void {
    for (const k of [...this.#seen.keys()]) if (k.startsWith(`${uid}\u0000`)) this.#seen.delete(k);
  }
}
