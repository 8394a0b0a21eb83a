// A ListWatcher over the API server's HTTP API, so informers run the same way in a worker as in the master.
import type { KindDefinition } from '../api/kind.js';
import type { KubeObject } from '../api/meta.js';
import type { InformerEventType, ListWatcher } from '../controller/informer.js';
import type { ApiClient } from './api-client.js';

export interface RemoteListWatcherOptions {
  client: ApiClient;
  kind: KindDefinition;
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
}

/** Lists then watches from the list's revision; the informer relists when a watch answers 410 Gone. */
export function remoteListWatcher<T extends KubeObject = KubeObject>(options: RemoteListWatcherOptions): ListWatcher<T> {
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
