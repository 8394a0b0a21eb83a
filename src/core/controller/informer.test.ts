import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KindDefinition } from '../api/kind.js';
import type { KubeObject } from '../api/meta.js';
import { namespaceKind } from '../api/namespace.js';
import { podKind } from '../api/pod.js';
import { parseSelector } from '../api/selector.js';
import type { Client, ListOptions, ObjectList, WatchEvent, WatchOptions } from '../client/client.js';
import { InformerFactory } from './informer-factory.js';
import {
  indexByLabel,
  indexByNamespace,
  indexByNodeName,
  indexByOwnerUid,
  Informer,
  LABEL_INDEX,
  NAMESPACE_INDEX,
  NODE_NAME_INDEX,
  OWNER_UID_INDEX,
  type InformerEventType,
  type ListWatcher,
} from './informer.js';

function pod(namespace: string, name: string, options: { labels?: Record<string, string>; node?: string; owner?: string; rv?: string } = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      namespace,
      name,
      uid: `${namespace}-${name}`,
      resourceVersion: options.rv ?? '1',
      labels: options.labels,
      ownerReferences: options.owner ? [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: options.owner, controller: true }] : undefined,
    },
    spec: { nodeName: options.node, containers: [] },
  } as KubeObject;
}

/** A source whose list answers `items` and whose watch replays what the test pushes, until the signal aborts. */
class ScriptedSource implements ListWatcher<KubeObject> {
  lists = 0;
  readonly #pending: { type: InformerEventType; object: KubeObject }[] = [];
  #wake: (() => void) | undefined;
  constructor(public items: KubeObject[]) {}
  async list() {
    this.lists++;
    return { items: this.items, resourceVersion: '1' };
  }
  push(type: InformerEventType, object: KubeObject): void {
    this.#pending.push({ type, object });
    this.#wake?.();
  }
  async *watch(_rv: string, signal: AbortSignal) {
    while (!signal.aborted) {
      const next = this.#pending.shift();
      if (next) {
        yield next;
        continue;
      }
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
        signal.addEventListener('abort', () => resolve(), { once: true });
      });
    }
  }
}

async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setImmediate(r));
  }
}

describe('Informer indexes', () => {
  const items = [
    pod('a', 'web-1', { labels: { app: 'web', tier: 'front' }, node: 'n1', owner: 'rs-web' }),
    pod('a', 'web-2', { labels: { app: 'web', tier: 'front' }, node: 'n2', owner: 'rs-web' }),
    pod('a', 'db-1', { labels: { app: 'db' }, node: 'n1' }),
    pod('b', 'web-1', { labels: { app: 'web' } }),
  ];

  async function started(): Promise<{ informer: Informer<KubeObject>; source: ScriptedSource; stop: AbortController }> {
    const source = new ScriptedSource(items);
    const informer = new Informer<KubeObject>({ source });
    informer.addIndexer(NAMESPACE_INDEX, indexByNamespace);
    informer.addIndexer(NODE_NAME_INDEX, indexByNodeName);
    informer.addIndexer(OWNER_UID_INDEX, indexByOwnerUid);
    informer.addIndexer(LABEL_INDEX, indexByLabel);
    const stop = new AbortController();
    void informer.start(stop.signal);
    await informer.whenSynced();
    return { informer, source, stop };
  }
  const names = (objs: KubeObject[]) => objs.map((o) => `${o.metadata.namespace}/${o.metadata.name}`).sort();

  it('stops calling handlers once they are removed', async () => {
    const { informer, source, stop } = await started();
    const seen: string[] = [];
    const handlers = { onAdd: (o: KubeObject) => seen.push(o.metadata.name!) };
    informer.addHandlers(handlers);
    seen.length = 0;
    source.push('ADDED', pod('a', 'one'));
    await until(() => seen.includes('one'), 'the first add');
    informer.removeHandlers(handlers);
    source.push('ADDED', pod('a', 'two'));
    await until(() => informer.get('a/two') !== undefined, 'the second add cached');
    assert.deepEqual(seen, ['one']);
    stop.abort();
  });

  it('files objects by namespace, node, owner uid and label', async () => {
    const { informer, stop } = await started();
    assert.deepEqual(names(informer.byIndex(NAMESPACE_INDEX, 'a')), ['a/db-1', 'a/web-1', 'a/web-2']);
    assert.deepEqual(names(informer.byIndex(NODE_NAME_INDEX, 'n1')), ['a/db-1', 'a/web-1']);
    assert.deepEqual(names(informer.byIndex(NODE_NAME_INDEX, '')), ['b/web-1']);
    assert.deepEqual(names(informer.byIndex(OWNER_UID_INDEX, 'rs-web')), ['a/web-1', 'a/web-2']);
    assert.deepEqual(names(informer.byIndex(LABEL_INDEX, 'app=web')), ['a/web-1', 'a/web-2', 'b/web-1']);
    assert.throws(() => informer.byIndex('nope', 'x'), /no index named nope/);
    stop.abort();
  });

  it('selects by label selector, within a namespace or across all, equality and set-based alike', async () => {
    const { informer, stop } = await started();
    assert.deepEqual(names(informer.select(parseSelector('app=web'), 'a')), ['a/web-1', 'a/web-2']);
    assert.deepEqual(names(informer.select(parseSelector('app=web'))), ['a/web-1', 'a/web-2', 'b/web-1']);
    assert.deepEqual(names(informer.select(parseSelector('app=web,tier=front'))), ['a/web-1', 'a/web-2']);
    assert.deepEqual(names(informer.select(parseSelector('app in (web,db),tier!=front'), 'a')), ['a/db-1']);
    assert.deepEqual(names(informer.select(parseSelector('app=none'))), []);
    assert.deepEqual(names(informer.select(parseSelector(''), 'b')), ['b/web-1']);
    stop.abort();
  });

  it('moves an object between index entries when it changes, and drops it when deleted', async () => {
    const { informer, source, stop } = await started();
    source.push('MODIFIED', pod('a', 'web-1', { labels: { app: 'api' }, node: 'n3', rv: '2' }));
    await until(() => informer.get('a/web-1')?.metadata.resourceVersion === '2', 'the update');
    assert.deepEqual(names(informer.byIndex(LABEL_INDEX, 'app=web')), ['a/web-2', 'b/web-1']);
    assert.deepEqual(names(informer.byIndex(LABEL_INDEX, 'app=api')), ['a/web-1']);
    assert.deepEqual(names(informer.byIndex(NODE_NAME_INDEX, 'n3')), ['a/web-1']);
    assert.deepEqual(names(informer.byIndex(OWNER_UID_INDEX, 'rs-web')), ['a/web-2']);
    source.push('DELETED', pod('a', 'web-2', { rv: '3' }));
    await until(() => informer.get('a/web-2') === undefined, 'the delete');
    assert.deepEqual(informer.byIndex(OWNER_UID_INDEX, 'rs-web'), []);
    assert.deepEqual(names(informer.byIndex(NAMESPACE_INDEX, 'a')), ['a/db-1', 'a/web-1']);
    stop.abort();
  });

  it('files what is already cached when an index is added late', async () => {
    const { informer, stop } = await started();
    informer.addIndexer('first-letter', (o) => [o.metadata.name!.slice(0, 1)]);
    assert.deepEqual(names(informer.byIndex('first-letter', 'd')), ['a/db-1']);
    stop.abort();
  });

  it('replays the cache as adds to handlers added after the first list', async () => {
    const { informer, stop } = await started();
    const seen: string[] = [];
    informer.addHandlers({ onAdd: (o) => seen.push(`${o.metadata.namespace}/${o.metadata.name}`) });
    assert.deepEqual(seen.sort(), ['a/db-1', 'a/web-1', 'a/web-2', 'b/web-1']);
    stop.abort();
  });

  it('runs one list and watch however often it is started', async () => {
    const source = new ScriptedSource(items);
    const informer = new Informer<KubeObject>({ source });
    const stop = new AbortController();
    const a = informer.start(stop.signal);
    const b = informer.start(stop.signal);
    await informer.whenSynced();
    stop.abort();
    await Promise.all([a, b]);
    assert.equal(source.lists, 1);
  });
});

function scopeOf(def: KindDefinition, options: ListOptions): string {
  return `${def.resource}${options.namespace ? `/${options.namespace}` : ''}${options.fieldSelector ? `?${options.fieldSelector}` : ''}`;
}

/** A Client that answers list and watch from memory and counts them; nothing else is called by informers. */
class CountingClient implements Partial<Client> {
  readonly lists: string[] = [];
  readonly watches: string[] = [];
  async list(def: KindDefinition, options: ListOptions = {}): Promise<ObjectList> {
    this.lists.push(scopeOf(def, options));
    return { metadata: { resourceVersion: '5' }, items: def === podKind ? [pod('a', 'p', { node: 'n1' })] : [] };
  }
  async *watch(def: KindDefinition, options: WatchOptions = {}): AsyncGenerator<WatchEvent> {
    this.watches.push(scopeOf(def, options));
    if (options.signal?.aborted) return;
    await new Promise<void>((resolve) => options.signal?.addEventListener('abort', () => resolve(), { once: true }));
  }
}

describe('InformerFactory', () => {
  it('hands every controller the same informer per resource and scope, with the standard indexes', async () => {
    const client = new CountingClient();
    const factory = new InformerFactory({ client: client as unknown as Client });
    const pods = factory.informer(podKind);
    assert.equal(factory.informer(podKind), pods);
    const kubeSystemPods = factory.informer(podKind, { namespace: 'kube-system' });
    assert.notEqual(kubeSystemPods, pods);
    assert.equal(factory.informer(namespaceKind, { namespace: 'ignored' }), factory.informer(namespaceKind), 'cluster-scoped kinds have one scope');
    assert.equal(factory.size, 3);
    const stop = new AbortController();
    const running = factory.start(stop.signal);
    await factory.whenSynced();
    assert.deepEqual(client.lists.sort(), ['namespaces', 'pods', 'pods/kube-system']);
    assert.deepEqual(
      pods.byIndex(NODE_NAME_INDEX, 'n1').map((p) => p.metadata.name),
      ['p'],
    );
    assert.ok(pods.hasIndex(NAMESPACE_INDEX) && pods.hasIndex(OWNER_UID_INDEX) && pods.hasIndex(LABEL_INDEX));
    assert.ok(!factory.informer(namespaceKind).hasIndex(NAMESPACE_INDEX));
    // Asked for after the start: started at once.
    const late = factory.informer({ ...podKind, resource: 'pods', namespaced: true }, { namespace: 'late' });
    await late.whenSynced();
    assert.ok(client.lists.includes('pods/late'));
    stop.abort();
    await running;
    await assert.rejects(factory.start(stop.signal), /already started/);
  });

  it('a scoped view shares the informers and removes the handlers added through it when its signal aborts', async () => {
    const client = new CountingClient();
    const factory = new InformerFactory({ client: client as unknown as Client });
    const stop = new AbortController();
    const running = factory.start(stop.signal);
    const term = new AbortController();
    const view = factory.scoped(term.signal);
    const seen: string[] = [];
    const pods = view.informer(podKind);
    pods.addHandlers({ onAdd: (p) => seen.push(`term1:${p.metadata.name}`) });
    await view.whenSynced();
    assert.equal(factory.size, 1, 'the view asks the shared factory');
    assert.equal(pods.get('a/p')?.metadata.name, 'p', 'reads go to the shared cache');
    assert.deepEqual(seen, ['term1:p']);
    term.abort();
    // A second term re-adds its handlers and is replayed the cache, as the first was.
    const term2 = new AbortController();
    factory
      .scoped(term2.signal)
      .informer(podKind)
      .addHandlers({ onAdd: (p) => seen.push(`term2:${p.metadata.name}`) });
    assert.deepEqual(seen, ['term1:p', 'term2:p']);
    factory
      .scoped(term.signal)
      .informer(podKind)
      .addHandlers({ onAdd: () => seen.push('late') });
    assert.deepEqual(seen, ['term1:p', 'term2:p'], 'a view whose term is over adds nothing');
    term2.abort();
    stop.abort();
    await running;
  });

  it('keeps one informer per field selector, listing and watching with it', async () => {
    const client = new CountingClient();
    const factory = new InformerFactory({ client: client as unknown as Client });
    const mine = factory.informer(podKind, { fieldSelector: 'spec.nodeName=n1' });
    assert.equal(factory.informer(podKind, { fieldSelector: 'spec.nodeName=n1' }), mine);
    assert.notEqual(factory.informer(podKind, { fieldSelector: 'spec.nodeName=n2' }), mine);
    assert.notEqual(factory.informer(podKind), mine);
    assert.equal(factory.informer(podKind, { fieldSelector: '' }), factory.informer(podKind), 'an empty selector selects everything');
    assert.equal(factory.size, 3);
    const stop = new AbortController();
    const running = factory.start(stop.signal);
    await factory.whenSynced();
    await until(() => client.watches.length === 3, 'the three watches');
    assert.deepEqual(client.lists.sort(), ['pods', 'pods?spec.nodeName=n1', 'pods?spec.nodeName=n2']);
    assert.deepEqual(client.watches.sort(), client.lists);
    assert.ok(mine.hasIndex(NODE_NAME_INDEX));
    stop.abort();
    await running;
  });
});
