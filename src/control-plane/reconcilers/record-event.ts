// Writes one Event about an object from a master-side component (node controller, taint eviction), as Kubernetes' recorders do.
import { randomBytes } from 'node:crypto';
import { eventKind } from '../../core/api/event.js';
import type { KubeObject } from '../../core/api/meta.js';
import { timestamp } from '../../core/api/timestamp.js';
import type { Client } from '../../core/client/client.js';

export interface RecordEventOptions {
  client: Client;
  /** The object the event is about. */
  object: Pick<KubeObject, 'apiVersion' | 'kind' | 'metadata'>;
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
  /** e.g. `node-controller`. */
  component: string;
  now?: Date;
}

/**
 * Creates the Event in the object's namespace; Events about cluster-scoped objects (Nodes) go
 * to `default`, where Kubernetes puts them. Never throws: an event is worth a log line, not a retry.
 */
export async function recordEvent(options: RecordEventOptions, log: (message: string) => void = () => {}): Promise<void> {
  const { object } = options;
  const namespace = object.metadata.namespace ?? 'default';
  const at = timestamp(options.now ?? new Date());
  try {
    await options.client.create(
      eventKind,
      {
        metadata: { name: `${object.metadata.name}.${randomBytes(8).toString('hex')}`, namespace },
        involvedObject: {
          apiVersion: object.apiVersion,
          kind: object.kind,
          name: object.metadata.name,
          ...(object.metadata.namespace ? { namespace: object.metadata.namespace } : {}),
          ...(object.metadata.uid ? { uid: object.metadata.uid } : {}),
        },
        reason: options.reason,
        message: options.message,
        type: options.type,
        source: { component: options.component },
        firstTimestamp: at,
        lastTimestamp: at,
        count: 1,
        reportingComponent: options.component,
      },
      { namespace },
    );
  } catch (err) {
    log(
      `${options.component}: event ${options.reason} for ${object.kind.toLowerCase()} ${object.metadata.name}: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}
