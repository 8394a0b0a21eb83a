// A Client for unit tests whose lists and watches come from sources the test scripts, one per resource, so that components get their informers from a real InformerFactory.
import type { KindDefinition } from '../../src/core/api/kind.js';
import type { Client, ListOptions, ObjectList, WatchEvent, WatchOptions } from '../../src/core/client/client.js';
import type { ListWatcher } from '../../src/core/controller/informer.js';

/**
 * Lists and watches of a resource named in `sources` (`services`, `nodes`, ...) are answered by
 * its source, whatever the scope; any other resource fails, as does every other call unless
 * `calls` supplies it (the overlay's patch of its own Node, say).
 */
export function scriptedClient(sources: Readonly<Record<string, ListWatcher>>, calls: Partial<Client> = {}): Client {
  const sourceOf = (def: KindDefinition): ListWatcher => {
    const source = sources[def.resource];
    if (!source) throw new Error(`the scripted client has no source of ${def.resource}`);
    return source;
  };
  const unscripted = (name: string) => async (): Promise<never> => {
    throw new Error(`the scripted client does not answer ${name}`);
  };
  return {
    get: unscripted('get'),
    create: unscripted('create'),
    replace: unscripted('replace'),
    patch: unscripted('patch'),
    delete: unscripted('delete'),
    ...calls,
    async list(def: KindDefinition, _options?: ListOptions): Promise<ObjectList> {
      const { items, resourceVersion } = await sourceOf(def).list();
      return { metadata: { resourceVersion }, items };
    },
    async *watch(def: KindDefinition, options: WatchOptions = {}): AsyncGenerator<WatchEvent> {
      yield* sourceOf(def).watch(options.resourceVersion ?? '', options.signal ?? new AbortController().signal);
    },
  };
}
