// A watch cache in front of another Store (as Kubernetes' sits in front of etcd): consistent lists and fanned-out watches from memory.
import { GoneError } from '../errors.js';
import type {
  ListPageOptions,
  ListResult,
  RawListResult,
  SharedWatchEvent,
  Store,
  StoreEntry,
  StoreOp,
  StoreWatchEvent,
  WatchEventType,
  WatchOptions,
} from './store.js';
import { lowerBound, prefixEndIndex } from './sorted-keys.js';

export interface CachedStoreOptions {
  /** Keys under this prefix are cached; lists and watches elsewhere go to the inner store. Default `/registry/`. */
  prefix?: string;
  /** Recent events kept for watches; a watcher further behind than this gets Gone. Default 10,000. */
  historySize?: number;
  /** How long a list waits for the cache to catch up with the inner store before asking it instead. Default 1,000 ms. */
  syncTimeoutMs?: number;
  /** Pause before re-watching the inner store after a failure. Default 200 ms. */
  retryDelayMs?: number;
}

/**
 * A cached value as JSON text: cheap to keep, and parsing it gives each reader its own copy. It
 * is shared by every list and watch that reads it (an item written since the cache loaded is the
 * very event that wrote it), so a watch's initial ADDED events are encoded once for all watchers.
 */
interface CachedValue extends SharedWatchEvent {
  json: string;
  revision: number;
}

/** An event of the ring; it is also what every watcher of it shares (its encodings are kept on it). */
interface CachedEvent extends SharedWatchEvent {
  type: WatchEventType;
  key: string;
  json: string;
  revision: number;
  /**
   * The cache's own count of applied events. A transaction's events share a revision and may
   * be applied one by one with watchers reading in between: a watcher's place is an event, not a revision.
   */
  seq: number;
}

/**
 * How many of the newest events keep what watchers made of them: without a limit, a full ring of
 * 10,000 events would hold each event's JSON text, its encodings and a parsed copy.
 */
export const SHARED_EVENT_MEMO = 1024;

/** A fixed-capacity buffer of events ordered by revision; the oldest falls out when it is full. */
class EventRing {
  readonly #slots: (CachedEvent | undefined)[];
  #start = 0;
  #size = 0;
  /** The seq of the latest event evicted or dropped: a watcher that had not reached it missed it. */
  #lostSeq = 0;

  constructor(capacity: number) {
    this.#slots = new Array(capacity);
  }

  /** Adds an event; returns the one pushed out, if any. */
  push(event: CachedEvent): CachedEvent | undefined {
    const capacity = this.#slots.length;
    // What watchers made of an event (its encodings, a parsed copy) is kept while they are likely to
    // want it: once it is SHARED_EVENT_MEMO events old, only watchers far behind still send it.
    if (this.#size >= SHARED_EVENT_MEMO) {
      const old = this.#at(this.#size - SHARED_EVENT_MEMO);
      old.encoded = undefined;
      old.parsed = undefined;
    }
    if (this.#size < capacity) {
      this.#slots[(this.#start + this.#size++) % capacity] = event;
      return undefined;
    }
    const evicted = this.#slots[this.#start];
    if (evicted) this.#lostSeq = evicted.seq;
    this.#slots[this.#start] = event;
    this.#start = (this.#start + 1) % capacity;
    return evicted;
  }

  /** Drops events with revision < `revision`; returns the revision of the last one dropped. */
  dropBefore(revision: number): number | undefined {
    let dropped: number | undefined;
    while (this.#size > 0 && this.#at(0).revision < revision) {
      dropped = this.#at(0).revision;
      this.#lostSeq = this.#at(0).seq;
      this.#slots[this.#start] = undefined;
      this.#start = (this.#start + 1) % this.#slots.length;
      this.#size--;
    }
    return dropped;
  }

  clear(): void {
    this.#slots.fill(undefined);
    this.#start = 0;
    this.#size = 0;
  }

  /** Every event after the one numbered `seq`, oldest first; undefined if some of them are no longer held. */
  afterSeq(seq: number): CachedEvent[] | undefined {
    if (seq < this.#lostSeq) return undefined;
    if (this.#size === 0) return [];
    const from = Math.max(0, seq + 1 - this.#at(0).seq);
    const out: CachedEvent[] = [];
    for (let i = from; i < this.#size; i++) out.push(this.#at(i));
    return out;
  }

  /** Every event with revision > `revision`, oldest first. */
  after(revision: number): CachedEvent[] {
    let lo = 0;
    let hi = this.#size;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.#at(mid).revision <= revision) lo = mid + 1;
      else hi = mid;
    }
    const out: CachedEvent[] = [];
    for (let i = lo; i < this.#size; i++) out.push(this.#at(i));
    return out;
  }

  #at(i: number): CachedEvent {
    return this.#slots[(this.#start + i) % this.#slots.length]!;
  }
}

/**
 * A watcher's event from the ring: its value is parsed (a copy of its own) only if it is read;
 * a watcher that sends the shared encoding never parses it.
 */
function watchEvent<T>(e: CachedEvent): StoreWatchEvent<T> {
  let value: T | undefined;
  return {
    type: e.type,
    key: e.key,
    revision: e.revision,
    shared: e,
    get value(): T {
      if (value === undefined) value = JSON.parse(e.json) as T;
      return value;
    },
  };
}

const IDLE = Symbol('idle');

/** Resolves after the events already queued (promise jobs) have run: "nothing more is ready now". */
function nextTurn(): Promise<typeof IDLE> {
  return new Promise((resolve) => setImmediate(() => resolve(IDLE)));
}

/** Someone waiting for the cache to reach a revision. */
interface RevisionWaiter {
  revision: number;
  resolve(reached: boolean): void;
}

/**
 * Writes and `get` go straight to the inner store (strongly consistent). Lists under the
 * prefix are answered from memory once the cache has caught up with the inner store's
 * current revision, so they are as fresh as a list from the inner store. Watches are served
 * from one ring of recent events shared by every watcher: there is one inner watch however
 * many watchers there are, and a watcher that falls more than `historySize` events behind
 * (or whose history the cache had to drop) ends with GoneError and must relist.
 *
 * The cache owns the inner store: close() closes it too.
 */
export class CachedStore implements Store {
  readonly #inner: Store;
  readonly #prefix: string;
  readonly #syncTimeoutMs: number;
  readonly #retryDelayMs: number;
  readonly #ring: EventRing;

  readonly #items = new Map<string, CachedValue>();
  /** Cached keys, sorted, so that a prefix list is a binary search and a scan. */
  #keys: string[] = [];
  /** The last inner-store revision applied (events outside the prefix count too). */
  #revision = 0;
  /** Every cached-prefix event with revision > #floor is in the ring (or not yet applied). */
  #floor = 0;
  /** The revision of the last compaction through this cache: reads before it are Gone. */
  #compacted = 0;
  /** Bumped on every relist: watchers from an older epoch may have missed events and get Gone. */
  #epoch = 0;
  #synced = false;
  /** The seq of the last event applied (see CachedEvent.seq). */
  #seq = 0;

  /** Watchers blocked until the next applied event (or close). */
  #wakers = new Set<() => void>();
  #revisionWaiters: RevisionWaiter[] = [];
  readonly #stop = new AbortController();
  #loop: Promise<void> | undefined;

  constructor(inner: Store, options: CachedStoreOptions = {}) {
    this.#inner = inner;
    this.#prefix = options.prefix ?? '/registry/';
    this.#syncTimeoutMs = options.syncTimeoutMs ?? 1000;
    this.#retryDelayMs = options.retryDelayMs ?? 200;
    const historySize = options.historySize ?? 10_000;
    if (!(historySize >= 1)) throw new RangeError(`historySize must be at least 1, not ${historySize}`);
    this.#ring = new EventRing(historySize);
  }

  /** Creates a cache over `inner` and waits until it holds the inner store's contents. */
  static async open(inner: Store, options: CachedStoreOptions = {}): Promise<CachedStore> {
    const cache = new CachedStore(inner, options);
    await cache.start();
    return cache;
  }

  /** The last revision the cache has applied. */
  get revision(): number {
    return this.#revision;
  }

  /** Loads the cache (one list) and starts following the inner store; resolves once loaded. */
  async start(): Promise<void> {
    if (this.#loop) throw new Error('the cache has already been started');
    await this.#relist();
    this.#loop = this.#follow();
  }

  get<T>(key: string): Promise<StoreEntry<T>> {
    return this.#inner.get<T>(key);
  }

  async list<T>(prefix: string, page: ListPageOptions = {}): Promise<ListResult<T>> {
    if (!((await this.#readyFor(prefix, page.revision)) && this.#unchangedSince(prefix, page.revision))) return this.#inner.list<T>(prefix, page);
    const items: StoreEntry<T>[] = [];
    const rest = this.#scan(prefix, page, (key, v) => items.push({ key, value: JSON.parse(v.json) as T, revision: v.revision }));
    return { items, revision: page.revision ?? this.#revision, ...rest };
  }

  async listRaw(prefix: string, page: ListPageOptions = {}): Promise<RawListResult> {
    if (!((await this.#readyFor(prefix, page.revision)) && this.#unchangedSince(prefix, page.revision))) return this.#inner.listRaw(prefix, page);
    const items: RawListResult['items'] = [];
    const rest = this.#scan(prefix, page, (key, v) => items.push({ key, json: v.json, revision: v.revision, shared: v }));
    return { items, revision: page.revision ?? this.#revision, ...rest };
  }

  create(key: string, value: unknown): Promise<number> {
    return this.#inner.create(key, value);
  }

  update(key: string, value: unknown, expectedRevision: number): Promise<number> {
    return this.#inner.update(key, value, expectedRevision);
  }

  delete<T>(key: string, expectedRevision?: number): Promise<{ revision: number; value: T }> {
    return this.#inner.delete<T>(key, expectedRevision);
  }

  transaction(ops: readonly StoreOp[]): Promise<number> {
    return this.#inner.transaction(ops);
  }

  watch<T>(prefix: string, options: WatchOptions): AsyncIterable<StoreWatchEvent<T>> {
    // Decided now, not at the first next(): a watcher's place in the history is where it was
    // asked for, so one that is slow to start reading can still find it has fallen behind.
    // History the cache does not hold (older than the ring, or outside the prefix) comes from
    // the inner store, which answers Gone if it has been compacted.
    if (!this.#synced || !prefix.startsWith(this.#prefix) || options.afterRevision < this.#floor) {
      return this.#inner.watch<T>(prefix, options);
    }
    return this.#serve<T>(prefix, options, this.#epoch);
  }

  currentRevision(): Promise<number> {
    return this.#inner.currentRevision();
  }

  /** Compacts the inner store and drops the cache's own history before `revision` too. */
  async compact(revision: number): Promise<void> {
    await this.#inner.compact(revision);
    this.#compacted = Math.max(this.#compacted, revision);
    // Events up to `revision` may still be on their way in: the floor below counts what we hold.
    await this.#waitForRevision(revision);
    const dropped = this.#ring.dropBefore(revision);
    // Nothing before `revision` can be served any more, even events the ring never held.
    this.#floor = Math.max(this.#floor, dropped ?? 0, Math.min(revision, this.#revision + 1) - 1);
    this.#wakeWatchers();
  }

  async close(): Promise<void> {
    if (this.#stop.signal.aborted) return;
    this.#stop.abort();
    this.#wakeWatchers();
    for (const w of this.#revisionWaiters) w.resolve(false);
    this.#revisionWaiters = [];
    await this.#loop;
    await this.#inner.close();
  }

  // ---- reading from memory ----

  /**
   * True once the cache may answer a list of `prefix`: it covers it and has caught up with the
   * inner store, or (for a read at `revision`) nothing under the prefix has changed since then.
   */
  async #readyFor(prefix: string, revision?: number): Promise<boolean> {
    if (!this.#synced || !prefix.startsWith(this.#prefix)) return false;
    if (revision === undefined) {
      // A list must see every write that finished before it started: wait for the cache to
      // reach the inner store's revision as of now.
      const target = await this.#inner.currentRevision();
      return this.#waitForRevision(target);
    }
    // A compacted revision is the inner store's to refuse (Gone).
    return revision >= this.#compacted && this.#waitForRevision(revision);
  }

  /**
   * True when what the cache holds under `prefix` is what was there at `revision` (always, for
   * a read of the present): no event since has touched the prefix. Checked in the same turn
   * as the scan that follows it, since events are applied between turns.
   */
  #unchangedSince(prefix: string, revision: number | undefined): boolean {
    if (revision === undefined) return true;
    if (revision < this.#floor || revision < this.#compacted) return false;
    return !this.#ring.after(revision).some((e) => e.key.startsWith(prefix));
  }

  /** Calls `each` for one page of the prefix's keys; says how many follow it when `limit` cut it short. */
  #scan(prefix: string, page: ListPageOptions, each: (key: string, value: CachedValue) => void): { more?: boolean; remaining?: number } {
    const keys = this.#keys;
    const from = page.fromKey !== undefined && page.fromKey > prefix ? page.fromKey : prefix;
    const start = lowerBound(keys, from);
    const end = prefixEndIndex(keys, prefix);
    const stop = page.limit === undefined ? end : Math.min(end, start + page.limit);
    for (let i = start; i < stop; i++) each(keys[i]!, this.#items.get(keys[i]!)!);
    return stop < end ? { more: true, remaining: end - stop } : {};
  }

  #waitForRevision(revision: number): Promise<boolean> {
    if (this.#synced && this.#revision >= revision) return Promise.resolve(true);
    if (this.#stop.signal.aborted) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        this.#revisionWaiters = this.#revisionWaiters.filter((w) => w !== waiter);
        resolve(false);
      }, this.#syncTimeoutMs);
      const waiter: RevisionWaiter = {
        revision,
        resolve: (reached) => {
          clearTimeout(timer);
          resolve(reached);
        },
      };
      this.#revisionWaiters.push(waiter);
    });
  }

  /** A watch served from the ring; `epoch` is the cache generation it was asked in. */
  async *#serve<T>(prefix: string, options: WatchOptions, epoch: number): AsyncGenerator<StoreWatchEvent<T>> {
    const { signal } = options;
    /** The last revision this watcher has looked at in the ring. */
    let cursor = options.afterRevision;
    /** The last event it has looked at, once it has looked at one. */
    let seen: number | undefined;
    const stopped = () => signal?.aborted || this.#stop.signal.aborted;
    for (;;) {
      if (stopped()) return;
      if (epoch !== this.#epoch || cursor < this.#floor) {
        throw new GoneError(`too old resource version: ${cursor + 1} (the watch fell behind the cache's history)`);
      }
      const batch = seen === undefined ? this.#ring.after(cursor) : this.#ring.afterSeq(seen);
      if (batch === undefined) {
        throw new GoneError(`too old resource version: ${cursor} (the watch fell behind the cache's history)`);
      }
      if (batch.length === 0) {
        await this.#nextEvent(signal);
        continue;
      }
      cursor = batch[batch.length - 1]!.revision;
      seen = batch[batch.length - 1]!.seq;
      for (const e of batch) {
        if (!e.key.startsWith(prefix)) continue;
        yield watchEvent<T>(e);
        if (stopped()) return;
      }
    }
  }

  #nextEvent(signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve) => {
      const wake = () => {
        this.#wakers.delete(wake);
        signal?.removeEventListener('abort', wake);
        resolve();
      };
      this.#wakers.add(wake);
      signal?.addEventListener('abort', wake, { once: true });
    });
  }

  #wakeWatchers(): void {
    const wakers = this.#wakers;
    if (wakers.size === 0) return;
    this.#wakers = new Set();
    for (const wake of wakers) wake();
  }

  // ---- following the inner store ----

  /** Replaces the cache's contents with a fresh list; watchers that may have missed events get Gone. */
  async #relist(): Promise<void> {
    const list = await this.#inner.listRaw(this.#prefix);
    this.#items.clear();
    for (const item of list.items) this.#items.set(item.key, { json: item.json, revision: item.revision });
    // The inner store lists in key order already.
    this.#keys = list.items.map((i) => i.key);
    this.#ring.clear();
    this.#revision = list.revision;
    this.#floor = list.revision;
    this.#epoch++;
    this.#synced = true;
    this.#wakeWatchers();
    this.#resolveRevisionWaiters();
  }

  /**
   * Follows the whole inner key space, not only the prefix: events elsewhere carry no data
   * for us but advance the revision, which is what lets a list know the cache is current.
   */
  async #follow(): Promise<void> {
    const signal = this.#stop.signal;
    while (!signal.aborted) {
      try {
        await this.#followOnce(signal);
        // An inner watch that ends on its own (its store closing, say) is retried, not spun on.
        await this.#pause();
      } catch (err) {
        if (signal.aborted) break;
        if (err instanceof GoneError) {
          // The inner store no longer has the events since our revision: start over.
          this.#synced = false;
          try {
            await this.#relist();
          } catch {
            await this.#pause();
          }
          continue;
        }
        await this.#pause();
      }
    }
  }

  /**
   * Applies the inner watch one revision at a time. A transaction's events share a revision
   * and arrive one by one; a list or watcher must never see half of one, so events wait in
   * `pending` until one of a later revision comes, or until the inner watch has nothing more
   * ready (its events of one write are queued together). A watch broken mid-revision resumes
   * from the last whole one.
   */
  async #followOnce(signal: AbortSignal): Promise<void> {
    const iterator = this.#inner.watch('', { afterRevision: this.#revision, signal })[Symbol.asyncIterator]();
    let pending: StoreWatchEvent[] = [];
    const flush = () => {
      for (const event of pending) this.#apply(event);
      pending = [];
    };
    try {
      let next = iterator.next();
      for (;;) {
        let result = pending.length ? await Promise.race([next, nextTurn()]) : await next;
        if (result === IDLE) {
          flush();
          result = await next;
        }
        if (result.done) return;
        const event = result.value;
        if (pending.length && event.revision !== pending[0]!.revision) flush();
        pending.push(event);
        next = iterator.next();
      }
    } finally {
      await iterator.return?.();
    }
  }

  #apply(event: StoreWatchEvent): void {
    // A transaction's writes share one revision: only an older one is a repeat.
    if (event.revision < this.#revision) return;
    this.#revision = event.revision;
    if (event.key.startsWith(this.#prefix)) {
      const json = JSON.stringify(event.value);
      const cached: CachedEvent = { type: event.type, key: event.key, json, revision: event.revision, seq: ++this.#seq };
      if (event.type === 'DELETED') {
        if (this.#items.delete(event.key)) this.#keys.splice(lowerBound(this.#keys, event.key), 1);
      } else {
        if (!this.#items.has(event.key)) this.#keys.splice(lowerBound(this.#keys, event.key), 0, event.key);
        // The event is the item: what its watchers encode serves later lists and initial watches too.
        this.#items.set(event.key, cached);
      }
      const evicted = this.#ring.push(cached);
      if (evicted) this.#floor = evicted.revision;
      this.#wakeWatchers();
    }
    this.#resolveRevisionWaiters();
  }

  #resolveRevisionWaiters(): void {
    if (this.#revisionWaiters.length === 0) return;
    const still: RevisionWaiter[] = [];
    for (const w of this.#revisionWaiters) {
      if (w.revision <= this.#revision) w.resolve(true);
      else still.push(w);
    }
    this.#revisionWaiters = still;
  }

  /** Waits `retryDelayMs` before trying the inner store again (ends early on close). */
  #pause(): Promise<void> {
    const signal = this.#stop.signal;
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, this.#retryDelayMs);
      signal.addEventListener('abort', done, { once: true });
    });
  }
}
