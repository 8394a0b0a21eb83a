// A list-then-watch cache of one kind: relists on 410 Gone, resumes after other failures, calls handlers.
import type { KubeObject } from '../api/meta.js';
import { GoneError } from '../errors.js';

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

export class Informer<T extends KubeObject = KubeObject> {
  readonly #source: ListWatcher<T>;
  readonly #handlers: InformerHandlers<T>[] = [];
  readonly #cache = new Map<string, T>();
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

  addHandlers(handlers: InformerHandlers<T>): void {
    this.#handlers.push(handlers);
  }

  /** Cached objects are shared: never mutate them. */
  get(key: string): T | undefined {
    return this.#cache.get(key);
  }

  list(): T[] {
    return [...this.#cache.values()];
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

  async start(signal: AbortSignal): Promise<void> {
    let needList = true;
    while (!signal.aborted) {
      try {
        if (needList) {
          await this.#relist();
          needList = false;
        }
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
      this.#cache.set(key, obj);
      if (!old) this.#emit((h) => h.onAdd?.(obj));
      else if (old.metadata.resourceVersion !== obj.metadata.resourceVersion) this.#emit((h) => h.onUpdate?.(old, obj));
    }
    for (const [key, old] of this.#cache) {
      if (seen.has(key)) continue;
      this.#cache.delete(key);
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
      this.#cache.delete(key);
      this.#emit((h) => h.onDelete?.(old ?? obj));
      return;
    }
    this.#cache.set(key, obj);
    if (old) this.#emit((h) => h.onUpdate?.(old, obj));
    else this.#emit((h) => h.onAdd?.(obj));
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
