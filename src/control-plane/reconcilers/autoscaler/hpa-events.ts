// The autoscaler's Events: one per distinct HPA, reason and message, repeats folded into its count as Kubernetes' recorder does, written at most once a minute.
import { randomBytes } from 'node:crypto';
import type { HorizontalPodAutoscaler } from '../../../core/api/horizontalpodautoscaler.js';
import { timestamp } from '../../../core/api/timestamp.js';
import type { AutoscalerEvent } from './plan-autoscaler.js';

/** Kubernetes' name for the HPA controller as an event source. */
export const HPA_COMPONENT = 'horizontal-pod-autoscaler';

/** Where Events go: the object service in the master, a list in unit tests. */
export interface AutoscalerEventSink {
  create(namespace: string, event: Record<string, unknown>): Promise<void>;
  /** Merge patch of an Event made earlier; rejects with an error whose `code` is 404 when it is gone. */
  patch(namespace: string, name: string, patch: Record<string, unknown>): Promise<void>;
}

export interface AutoscalerEventsOptions {
  sink: AutoscalerEventSink;
  now?: () => Date;
  /** A repeat is written at most this often; the count still goes up in between (default 60 s). */
  repeatIntervalMs?: number;
  log?: (message: string) => void;
}

interface Seen {
  uid: string;
  name: string;
  count: number;
  last: string;
  writtenAt: number;
}

/** How many distinct events are remembered before the oldest is forgotten (and its next repeat makes a new Event). */
const MAX_SEEN = 4096;

export class AutoscalerEvents {
  readonly #o: AutoscalerEventsOptions;
  readonly #now: () => Date;
  readonly #seen = new Map<string, Seen>();

  constructor(options: AutoscalerEventsOptions) {
    this.#o = options;
    this.#now = options.now ?? (() => new Date());
  }

  /** Never throws: an Event is worth a log line, not a failed sync. */
  async record(hpa: HorizontalPodAutoscaler, event: AutoscalerEvent): Promise<void> {
    const uid = hpa.metadata.uid ?? `${hpa.metadata.namespace}/${hpa.metadata.name}`;
    const namespace = hpa.metadata.namespace!;
    const key = [uid, event.type, event.reason, event.message].join('\u0000');
    const now = this.#now();
    const at = timestamp(now);
    try {
      const seen = this.#seen.get(key);
      if (seen) {
        seen.count++;
        seen.last = at;
        if (now.getTime() - seen.writtenAt < (this.#o.repeatIntervalMs ?? 60_000)) return;
        seen.writtenAt = now.getTime();
        try {
          await this.#o.sink.patch(namespace, seen.name, { count: seen.count, lastTimestamp: at });
          return;
        } catch (err) {
          if ((err as { code?: number }).code !== 404) throw err;
          // Gone (deleted, or the namespace's events were cleaned): start a new one.
          this.#seen.delete(key);
        }
      }
      const name = `${hpa.metadata.name}.${now.getTime().toString(16)}${randomBytes(3).toString('hex')}`;
      this.#seen.set(key, { uid, name, count: 1, last: at, writtenAt: now.getTime() });
      if (this.#seen.size > MAX_SEEN) this.#seen.delete(this.#seen.keys().next().value as string);
      await this.#o.sink.create(namespace, {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name, namespace },
        involvedObject: {
          apiVersion: hpa.apiVersion,
          kind: hpa.kind,
          namespace,
          name: hpa.metadata.name,
          ...(hpa.metadata.uid ? { uid: hpa.metadata.uid } : {}),
        },
        reason: event.reason,
        message: event.message,
        type: event.type,
        source: { component: HPA_COMPONENT },
        firstTimestamp: at,
        lastTimestamp: at,
        count: 1,
        reportingComponent: HPA_COMPONENT,
      });
    } catch (err) {
      this.#o.log?.(`${HPA_COMPONENT}: event ${event.reason} for ${namespace}/${hpa.metadata.name}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /** The HPA is gone: its events need no more counting. */
  forget(uid: string | undefined): void {
    if (!uid) return;
    for (const [key, seen] of this.#seen) if (seen.uid === uid) this.#seen.delete(key);
  }
}
