// An in-memory Store with etcd's semantics (revisions, CAS, history for watches), for tests and simulations.
import { AlreadyExistsError, ConflictError, GoneError, NotFoundError } from '../errors.js';
import type { ListResult, Store, StoreEntry, StoreWatchEvent, WatchOptions } from './store.js';

interface Record_ { value: string; revision: number; createRevision: number }

export class MemoryStore implements Store {
  readonly #data = new Map<string, Record_>();
  readonly #history: StoreWatchEvent<string>[] = [];
  readonly #listeners = new Set<() => void>();
  #revision = 0;
  #compacted = 0;

  async get<T>(key: string): Promise<StoreEntry<T>> {
    const r = this.#data.get(key);
    if (!r) throw new NotFoundError(`key "${key}" not found`);
    return { key, value: JSON.parse(r.value) as T, revision: r.revision };
  }

  async list<T>(prefix: string): Promise<ListResult<T>> {
    const items: StoreEntry<T>[] = [];
    for (const [key, r] of this.#data) if (key.startsWith(prefix)) items.push({ key, value: JSON.parse(r.value) as T, revision: r.revision });
    items.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    return { items, revision: this.#revision };
  }

  async create(key: string, value: unknown): Promise<number> {
    if (this.#data.has(key)) throw new AlreadyExistsError(`key "${key}" already exists`);
    return this.#put(key, JSON.stringify(value), 'ADDED');
  }

  async update(key: string, value: unknown, expectedRevision: number): Promise<number> {
    const r = this.#data.get(key);
    if (!r) throw new NotFoundError(`key "${key}" not found`);
    if (r.revision !== expectedRevision) throw new ConflictError(`key "${key}" is at revision ${r.revision}, not ${expectedRevision}`);
    return this.#put(key, JSON.stringify(value), 'MODIFIED');
  }

  async delete<T>(key: string, expectedRevision?: number): Promise<{ revision: number; value: T }> {
    const r = this.#data.get(key);
    if (!r) throw new NotFoundError(`key "${key}" not found`);
    if (expectedRevision !== undefined && r.revision !== expectedRevision) {
      throw new ConflictError(`key "${key}" is at revision ${r.revision}, not ${expectedRevision}`);
    }
    this.#data.delete(key);
    const revision = ++this.#revision;
    this.#record({ type: 'DELETED', key, value: r.value, revision });
    return { revision, value: JSON.parse(r.value) as T };
  }

  async *watch<T>(prefix: string, options: WatchOptions): AsyncIterable<StoreWatchEvent<T>> {
    let after = options.afterRevision;
    if (after + 1 < this.#compacted) throw new GoneError(`revision ${after + 1} has been compacted (oldest is ${this.#compacted})`);
    const signal = options.signal;
    for (;;) {
      if (signal?.aborted) return;
      const start = this.#history.findIndex((e) => e.revision > after);
      if (start >= 0) {
        if (this.#history[start]!.revision > after + 1 && after + 1 < this.#compacted) {
          throw new GoneError(`revision ${after + 1} has been compacted`);
        }
        for (let i = start; i < this.#history.length; i++) {
          const e = this.#history[i]!;
          after = e.revision;
          if (e.key.startsWith(prefix)) yield { ...e, value: JSON.parse(e.value) as T };
          if (signal?.aborted) return;
        }
        continue;
      }
      await new Promise<void>((resolve) => {
        const wake = () => {
          this.#listeners.delete(wake);
          signal?.removeEventListener('abort', wake);
          resolve();
        };
        this.#listeners.add(wake);
        signal?.addEventListener('abort', wake, { once: true });
      });
    }
  }

  async currentRevision(): Promise<number> {
    return this.#revision;
  }

  async compact(revision: number): Promise<void> {
    this.#compacted = Math.max(this.#compacted, revision);
    while (this.#history.length && this.#history[0]!.revision < revision) this.#history.shift();
  }

  async close(): Promise<void> {
    for (const wake of [...this.#listeners]) wake();
  }

  #put(key: string, value: string, type: 'ADDED' | 'MODIFIED'): number {
    const revision = ++this.#revision;
    const old = this.#data.get(key);
    this.#data.set(key, { value, revision, createRevision: old?.createRevision ?? revision });
    this.#record({ type, key, value, revision });
    return revision;
  }

  #record(event: StoreWatchEvent<string>): void {
    this.#history.push(event);
    for (const wake of [...this.#listeners]) wake();
  }
}
