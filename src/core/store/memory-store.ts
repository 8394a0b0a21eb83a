// An in-memory Store with etcd's semantics (revisions, CAS, history for watches), for tests and simulations.
import { AlreadyExistsError, BadRequestError, ConflictError, GoneError, NotFoundError } from '../errors.js';
import {
  withFailedKey,
  type ListPageOptions,
  type ListResult,
  type RawListResult,
  type Store,
  type StoreEntry,
  type StoreOp,
  type StoreWatchEvent,
  type WatchEventType,
  type WatchOptions,
} from './store.js';
import { lowerBound, prefixEndIndex } from './sorted-keys.js';

/**
 * Values are kept as JSON text: serialising on the way in refuses what etcd could not store
 * either, and parsing on the way out gives every caller its own copy.
 */
interface StoredValue {
  json: string;
  revision: number;
}

interface StoredEvent {
  type: WatchEventType;
  key: string;
  json: string;
  revision: number;
  /** The key's value before this event (absent for ADDED): what a read at an older revision sees. */
  prev?: StoredValue;
}

/** The keys of one list page with their values, and what follows them. */
interface Page {
  entries: [string, StoredValue][];
  revision: number;
  more: boolean;
  remaining: number;
}

/** Index of the first event with revision > `revision` (history is ordered by revision). */
function firstAfter(history: readonly StoredEvent[], revision: number): number {
  let lo = 0;
  let hi = history.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (history[mid]!.revision <= revision) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function toEvent<T>(e: StoredEvent): StoreWatchEvent<T> {
  return { type: e.type, key: e.key, value: JSON.parse(e.json) as T, revision: e.revision };
}

export class MemoryStore implements Store {
  readonly #data = new Map<string, StoredValue>();
  /** Every key, sorted, so that prefix lists are a binary search and a scan rather than a sort. */
  readonly #keys: string[] = [];
  /** Every event since the last compaction, ordered by revision. */
  #history: StoredEvent[] = [];
  /** Watchers waiting for the next write. */
  #waiters = new Set<() => void>();
  #revision = 0;
  /** etcd's compact revision: history before it is gone. */
  #compacted = 0;
  #closed = false;

  async get<T>(key: string): Promise<StoreEntry<T>> {
    const r = this.#data.get(key);
    if (!r) throw new NotFoundError(`key "${key}" not found`);
    return { key, value: JSON.parse(r.json) as T, revision: r.revision };
  }

  async list<T>(prefix: string, page: ListPageOptions = {}): Promise<ListResult<T>> {
    const p = this.#page(prefix, page);
    const items = p.entries.map(([key, r]): StoreEntry<T> => ({ key, value: JSON.parse(r.json) as T, revision: r.revision }));
    return { items, revision: p.revision, ...(p.more ? { more: true, remaining: p.remaining } : {}) };
  }

  async listRaw(prefix: string, page: ListPageOptions = {}): Promise<RawListResult> {
    const p = this.#page(prefix, page);
    const items = p.entries.map(([key, r]) => ({ key, json: r.json, revision: r.revision }));
    return { items, revision: p.revision, ...(p.more ? { more: true, remaining: p.remaining } : {}) };
  }

  /** One page of `prefix`'s keys, now or (undoing the history after it) at `page.revision`. */
  #page(prefix: string, page: ListPageOptions): Page {
    const revision = page.revision ?? this.#revision;
    if (revision < this.#compacted) throw new GoneError(`required revision ${revision} has been compacted (the oldest kept is ${this.#compacted})`);
    if (revision > this.#revision) throw new BadRequestError(`required revision ${revision} is a future revision (the store is at ${this.#revision})`);
    let keys: readonly string[] = this.#keys;
    let valueAt = (key: string): StoredValue => this.#data.get(key)!;
    if (revision < this.#revision) {
      // Undo, newest first, every event after `revision` on a key under the prefix.
      const then = new Map<string, StoredValue | undefined>();
      for (let i = this.#history.length - 1; i >= 0 && this.#history[i]!.revision > revision; i--) {
        const e = this.#history[i]!;
        if (e.key.startsWith(prefix)) then.set(e.key, e.prev);
      }
      const atRevision = new Set(keys.slice(lowerBound(keys, prefix), prefixEndIndex(keys, prefix)));
      for (const [key, value] of then) {
        if (value) atRevision.add(key);
        else atRevision.delete(key);
      }
      keys = [...atRevision].sort();
      valueAt = (key) => (then.has(key) ? then.get(key)! : this.#data.get(key)!);
    }
    const from = page.fromKey !== undefined && page.fromKey > prefix ? page.fromKey : prefix;
    const start = lowerBound(keys, from);
    const end = prefixEndIndex(keys, prefix);
    const stop = page.limit === undefined ? end : Math.min(end, start + page.limit);
    const entries: [string, StoredValue][] = [];
    for (let i = start; i < stop; i++) entries.push([keys[i]!, valueAt(keys[i]!)]);
    return { entries, revision, more: stop < end, remaining: Math.max(0, end - stop) };
  }

  async create(key: string, value: unknown): Promise<number> {
    if (this.#data.has(key)) throw new AlreadyExistsError(`key "${key}" already exists`);
    const json = JSON.stringify(value);
    this.#keys.splice(lowerBound(this.#keys, key), 0, key);
    return this.#write('ADDED', key, json);
  }

  async update(key: string, value: unknown, expectedRevision: number): Promise<number> {
    const r = this.#data.get(key);
    if (!r) throw new NotFoundError(`key "${key}" not found`);
    if (r.revision !== expectedRevision) {
      throw new ConflictError(`key "${key}" is at revision ${r.revision}, not ${expectedRevision}`);
    }
    return this.#write('MODIFIED', key, JSON.stringify(value));
  }

  async delete<T>(key: string, expectedRevision?: number): Promise<{ revision: number; value: T }> {
    const r = this.#data.get(key);
    if (!r) throw new NotFoundError(`key "${key}" not found`);
    if (expectedRevision !== undefined && r.revision !== expectedRevision) {
      throw new ConflictError(`key "${key}" is at revision ${r.revision}, not ${expectedRevision}`);
    }
    this.#keys.splice(lowerBound(this.#keys, key), 1);
    const revision = this.#write('DELETED', key, r.json);
    return { revision, value: JSON.parse(r.json) as T };
  }

  async transaction(ops: readonly StoreOp[]): Promise<number> {
    if (new Set(ops.map((o) => o.key)).size !== ops.length) throw new Error('a transaction names a key more than once');
    if (ops.length === 0) return this.#revision;
    // Every condition is checked against the state before the transaction, as etcd's compares are.
    for (const op of ops) {
      const r = this.#data.get(op.key);
      if (op.type === 'create') {
        if (r) throw withFailedKey(new AlreadyExistsError(`key "${op.key}" already exists`), op.key);
        continue;
      }
      if (!r) throw withFailedKey(new NotFoundError(`key "${op.key}" not found`), op.key);
      const expected = op.expectedRevision;
      if (expected !== undefined && r.revision !== expected) {
        throw withFailedKey(new ConflictError(`key "${op.key}" is at revision ${r.revision}, not ${expected}`), op.key);
      }
    }
    // Serialise everything before changing anything, so that a value JSON refuses writes nothing.
    const jsons = ops.map((op) => (op.type === 'delete' ? this.#data.get(op.key)!.json : JSON.stringify(op.value)));
    const prevs = ops.map((op) => this.#data.get(op.key));
    const revision = ++this.#revision;
    ops.forEach((op, i) => {
      const json = jsons[i]!;
      if (op.type === 'create') this.#keys.splice(lowerBound(this.#keys, op.key), 0, op.key);
      if (op.type === 'delete') {
        this.#keys.splice(lowerBound(this.#keys, op.key), 1);
        this.#data.delete(op.key);
      } else {
        this.#data.set(op.key, { json, revision });
      }
      this.#history.push({ type: op.type === 'create' ? 'ADDED' : op.type === 'update' ? 'MODIFIED' : 'DELETED', key: op.key, json, revision, prev: prevs[i] });
    });
    this.#wakeAll();
    return revision;
  }

  watch<T>(prefix: string, options: WatchOptions): AsyncIterable<StoreWatchEvent<T>> {
    return this.#watch<T>(prefix, options);
  }

  async *#watch<T>(prefix: string, options: WatchOptions): AsyncGenerator<StoreWatchEvent<T>> {
    const { signal } = options;
    /** The last revision this watcher has looked at (delivered or skipped as not matching). */
    let cursor = options.afterRevision;
    for (;;) {
      if (signal?.aborted || this.#closed) return;
      if (cursor + 1 < this.#compacted) {
        throw new GoneError(`revision ${cursor + 1} has been compacted (the oldest kept is ${this.#compacted})`);
      }
      // Take a snapshot of what is there now: writes during our yields land in the next round.
      const history = this.#history;
      const end = history.length;
      let i = firstAfter(history, cursor);
      if (i < end) {
        for (; i < end; i++) {
          const e = history[i]!;
          cursor = e.revision;
          if (!e.key.startsWith(prefix)) continue;
          yield toEvent<T>(e);
          if (signal?.aborted || this.#closed) return;
          // A compaction while we were suspended replaced the array: find our place again.
          if (history !== this.#history) break;
        }
        continue;
      }
      await this.#nextWrite(signal);
    }
  }

  async currentRevision(): Promise<number> {
    return this.#revision;
  }

  async compact(revision: number): Promise<void> {
    if (revision <= this.#compacted) return;
    this.#compacted = Math.min(revision, this.#revision);
    // A new array rather than an in-place splice: running watchers hold the old one as a snapshot.
    this.#history = this.#history.slice(firstAfter(this.#history, this.#compacted - 1));
    this.#wakeAll();
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#wakeAll();
  }

  #write(type: WatchEventType, key: string, json: string): number {
    const prev = this.#data.get(key);
    const revision = ++this.#revision;
    if (type === 'DELETED') this.#data.delete(key);
    else this.#data.set(key, { json, revision });
    this.#history.push({ type, key, json, revision, prev });
    this.#wakeAll();
    return revision;
  }

  #nextWrite(signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve) => {
      const wake = () => {
        this.#waiters.delete(wake);
        signal?.removeEventListener('abort', wake);
        resolve();
      };
      this.#waiters.add(wake);
      signal?.addEventListener('abort', wake, { once: true });
    });
  }

  #wakeAll(): void {
    const waiters = this.#waiters;
    if (waiters.size === 0) return;
    this.#waiters = new Set();
    for (const wake of waiters) wake();
  }
}
