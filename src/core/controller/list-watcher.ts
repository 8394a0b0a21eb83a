// A ListWatcher over any Client, so informers run the same way in the master (object service) as in a worker (HTTP).
import type { KindDefinition } from '../api/kind.js';
import type { KubeObject } from '../api/meta.js';
import type { Client } from '../client/client.js';
import type { InformerEventType, ListWatcher } from './informer.js';

export interface ListWatcherOptions {
  client: Client;
  kind: KindDefinition;
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
}

/** Lists then watches from the list's revision; the informer relists when a watch answers 410 Gone. */
export function listWatcher<T extends KubeObject = KubeObject>(options: ListWatcherOptions): ListWatcher<T> {
  const { client, kind, namespace, labelSelector, fieldSelector } = options;
  return {
    async list() {
      const list = await client.list(kind, { namespace, labelSelector, fieldSelector });
      return { items: list.items as T[], resourceVersion: String(list.metadata.resourceVersion ?? '') };
    },
    async *watch(resourceVersion: string, signal: AbortSignal) {
      for await (const event of client.watch(kind, { namespace, labelSelector, fieldSelector, resourceVersion, signal })) {
        yield { type: event.type as InformerEventType, object: event.object as T };
      }
    },
  };
}
