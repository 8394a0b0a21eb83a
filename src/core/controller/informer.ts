// A list-then-watch cache of one kind with secondary indexes: relists on 410 Gone, resumes after other failures, calls handlers.
import type { KubeObject } from '../api/meta.js';
import { matches, type Selector } from '../api/selector.js';
import { GoneError } from '../errors.js';
import { getOrCreate } from '../get-or-create.js';

export type InformerEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK';

/** Where an informer gets objects: the in-process object service or the API over HTTP. */
export interface ListWatcher<T extends KubeObject = KubeObject> {
  list(): Promise<{ items: T[]; resourceVersion: string }>;
  watch(resourceVersion: string, signal: AbortSignal): AsyncIterable<{ type: InformerEventType; object: T }>;
}

export interface InformerHandlers<T> {
  onAdd?(obj: T): void;
  onUpdate?(oldObj: T, newObj: T): void;
  onDelete?(obj: T): void;
}

export interface InformerOptions<T extends KubeObject> {
  source: ListWatcher<T>;
  /** For log messages. */
  name?: string;
  /** Delay before retrying after a failure other than Gone. */
  retryDelayMs?: number;
  log?: (message: string) => void;
}

/** `namespace/name`, or `name` for cluster-scoped objects: the key handlers enqueue. */
export function objectKey(obj: KubeObject): string {
  return obj.metadata.namespace ? `${obj.metadata.namespace}/${obj.metadata.name}` : obj.metadata.name!;
}

export function splitKey(key: string): { namespace?: string; name: string } {
  const i = key.indexOf('/');
  return i < 0 ? { name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) };
}

/** The values an object is filed under in one index (client-go's IndexFunc); none leaves it out. */
export type IndexFunc<T> = (obj: T) => readonly string[];

/** The indexes the shared informers keep (client-go's cache.NamespaceIndex and friends). */
export const NAMESPACE_INDEX = 'namespace';
/** Pods by `spec.nodeName` (unbound pods under ''). */
export const NODE_NAME_INDEX = 'nodeName';
/** Objects by the uid of each of their owners. */
export const OWNER_UID_INDEX = 'ownerUid';
/** Objects by each of their labels, as `key=value`: what answers an equality selector without a scan. */
export const LABEL_INDEX = 'label';

export const indexByNamespace: IndexFunc<KubeObject> = (obj) => (obj.metadata.namespace ? [obj.metadata.namespace] : []);
export const indexByOwnerUid: IndexFunc<KubeObject> = (obj) => (obj.metadata.ownerReferences ?? []).map((o) => o.uid);
export const indexByLabel: IndexFunc<KubeObject> = (obj) => Object.entries(obj.metadata.labels ?? {}).map(([k, v]) => `${k}=${v}`);
export const indexByNodeName: IndexFunc<KubeObject> = (obj) => [(obj as { spec?: { nodeName?: string } }).spec?.nodeName ?? ''];

interface Index<T> {
  fn: IndexFunc<T>;
  /** value -> keys of the objects filed under it */
  entries: Map<string, Set<string>>;
}

export class Informer<T extends KubeObject = KubeObject> {
  readonly #source: ListWatcher<T>;
  readonly #handlers: InformerHandlers<T>[] = [];
  readonly #cache = new Map<string, T>();
  readonly #indexes = new Map<string, Index<T>>();
  #running: Promise<void> | undefined;
  readonly #name: string;
  readonly #retryDelayMs: number;
  readonly #log: (message: string) => void;
  #synced = false;
  #syncWaiters: (() => void)[] = [];
  #resourceVersion = '';

  constructor(options: InformerOptions<T>) {
    this.#source = options.source;
    this.#name = options.name ?? 'informer';
    this.#retryDelayMs = options.retryDelayMs ?? 1000;
    this.#log = options.log ?? (() => {});
  }

  /**
   * Handlers added to an informer that has already listed are first called with an add for every
   * cached object (as client-go does): a controller built after a shared informer started still
   * sees what was there before it.
   */
  addHandlers(handlers: InformerHandlers<T>): void {
    this.#handlers.push(handlers);
    for (const obj of this.#cache.values()) {
      try {
        handlers.onAdd?.(obj);
      } catch (err) {
        this.#log(`${this.#name}: handler failed: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  }

  /** Stops calling `handlers` (the same object addHandlers was given): a component that stops (a leader that lost its lease) leaves nothing behind. */
  removeHandlers(handlers: InformerHandlers<T>): void {
    const i = this.#handlers.indexOf(handlers);
    if (i >= 0) this.#handlers.splice(i, 1);
  }

  /** Cached objects are shared: never mutate them. */
  get(key: string): T | undefined {
    return this.#cache.get(key);
  }

  /** Every cached object: a scan. Prefer byIndex or select where an index answers. */
  list(): T[] {
    return [...this.#cache.values()];
  }

  get size(): number {
    return this.#cache.size;
  }

  /** Keeps an index from now on (objects already cached are filed at once); adding the same name twice keeps the first. */
  addIndexer(name: string, fn: IndexFunc<T>): void {
    if (this.#indexes.has(name)) return;
    const index: Index<T> = { fn, entries: new Map() };
    this.#indexes.set(name, index);
    for (const [key, obj] of this.#cache) this.#file(index, key, obj);
  }

  hasIndex(name: string): boolean {
    return this.#indexes.has(name);
  }

  /** The cached objects filed under `value` in index `name`. */
  byIndex(name: string, value: string): T[] {
    const index = this.#indexes.get(name);
    if (!index) throw new Error(`${this.#name}: no index named ${name}`);
    const out: T[] = [];
    for (const key of index.entries.get(value) ?? []) out.push(this.#cache.get(key)!);
    return out;
  }

  /**
   * The cached objects (of `namespace`, when given) that `selector` matches. An equality
   * requirement is answered from the label index (its shortest list), else the namespace index
   * narrows the scan; only without either is every object looked at.
   */
  select(selector: Selector, namespace?: string): T[] {
    let candidates: Iterable<string> | undefined;
    const labels = this.#indexes.get(LABEL_INDEX);
    if (labels) {
      for (const r of selector.requirements) {
        if (r.operator !== 'In' || r.values.length !== 1) continue;
        const keys = labels.entries.get(`${r.key}=${r.values[0]}`);
        if (!keys) return [];
        if (candidates === undefined || keys.size < (candidates as Set<string>).size) candidates = keys;
      }
    }
    const namespaces = this.#indexes.get(NAMESPACE_INDEX);
    if (candidates === undefined && namespace !== undefined && namespaces) candidates = namespaces.entries.get(namespace) ?? [];
    const out: T[] = [];
    for (const key of candidates ?? this.#cache.keys()) {
      const obj = this.#cache.get(key)!;
      if (namespace !== undefined && obj.metadata.namespace !== namespace) continue;
      if (matches(selector, obj.metadata.labels)) out.push(obj);
    }
    return out;
  }

  get hasSynced(): boolean {
    return this.#synced;
  }

  get resourceVersion(): string {
    return this.#resourceVersion;
  }

  whenSynced(): Promise<void> {
    if (this.#synced) return Promise.resolve();
    return new Promise((resolve) => this.#syncWaiters.push(resolve));
  }

  /** Lists, then watches until `signal` aborts; a second call while running joins the first (a shared informer is started once). */
  start(signal: AbortSignal): Promise<void> {
    this.#running ??= this.#run(signal).finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  async #run(signal: AbortSignal): Promise<void> {
    let needList = true;
    while (!signal.aborted) {
      try {
        if (needList) {
          await this.#relist();
          needList = false;
        }
        if (signal.aborted) break;
        for await (const event of this.#source.watch(this.#resourceVersion, signal)) {
          this.#apply(event.type, event.object);
        }
        // A watch that ends cleanly (server timeout) resumes from the last revision.
      } catch (err) {
        if (signal.aborted) break;
        if (err instanceof GoneError) {
          this.#log(`${this.#name}: watch expired, relisting`);
          needList = true;
          continue;
        }
        this.#log(`${this.#name}: ${err instanceof Error ? err.message : String(err)}; retrying`);
        await abortableDelay(this.#retryDelayMs, signal);
      }
    }
  }

  async #relist(): Promise<void> {
    const { items, resourceVersion } = await this.#source.list();
    const seen = new Set<string>();
    for (const obj of items) {
      const key = objectKey(obj);
      seen.add(key);
      const old = this.#cache.get(key);
      this.#put(key, obj, old);
      if (!old) this.#emit((h) => h.onAdd?.(obj));
      else if (old.metadata.resourceVersion !== obj.metadata.resourceVersion) this.#emit((h) => h.onUpdate?.(old, obj));
    }
    for (const [key, old] of this.#cache) {
      if (seen.has(key)) continue;
      this.#remove(key, old);
      this.#emit((h) => h.onDelete?.(old));
    }
    this.#resourceVersion = resourceVersion;
    if (!this.#synced) {
      this.#synced = true;
      for (const resolve of this.#syncWaiters.splice(0)) resolve();
    }
  }

  #apply(type: InformerEventType, obj: T): void {
    if (obj.metadata?.resourceVersion) this.#resourceVersion = obj.metadata.resourceVersion;
    if (type === 'BOOKMARK') return;
    const key = objectKey(obj);
    const old = this.#cache.get(key);
    if (type === 'DELETED') {
      if (old) this.#remove(key, old);
      this.#emit((h) => h.onDelete?.(old ?? obj));
      return;
    }
    this.#put(key, obj, old);
    if (old) this.#emit((h) => h.onUpdate?.(old, obj));
    else this.#emit((h) => h.onAdd?.(obj));
  }

  #put(key: string, obj: T, old: T | undefined): void {
    for (const index of this.#indexes.values()) {
      if (old) this.#unfile(index, key, old);
      this.#file(index, key, obj);
    }
    this.#cache.set(key, obj);
  }

  #remove(key: string, old: T): void {
    for (const index of this.#indexes.values()) this.#unfile(index, key, old);
    this.#cache.delete(key);
  }

  #file(index: Index<T>, key: string, obj: T): void {
    for (const value of index.fn(obj)) {
      getOrCreate(index.entries, value, () => new Set()).add(key);
    }
  }

  #unfile(index: Index<T>, key: string, obj: T): void {
    for (const value of index.fn(obj)) {
      const keys = index.entries.get(value);
      if (!keys) continue;
      keys.delete(key);
      if (keys.size === 0) index.entries.delete(value);
    }
  }

  #emit(call: (h: InformerHandlers<T>) => void): void {
    for (const h of this.#handlers) {
      try {
        call(h);
      } catch (err) {
        // Handlers only enqueue keys; one that throws must not stop the informer.
        this.#log(`${this.#name}: handler failed: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  }
}

export function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
