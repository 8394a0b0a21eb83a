// The Store interface every module shares (DESIGN section 4): CAS writes and gap-free watches.

/**
 * Values are JSON-serialisable objects, and every read hands out the caller's own copy
 * (callers may stamp fields on it). The store never inspects them; the API server
 * writes `metadata.resourceVersion` from the revision on the way out.
 *
 * Revisions are cluster-wide and strictly increasing (etcd's revision). Every write
 * returns the revision it produced, which becomes the key's `revision` (its mod revision).
 *
 * Errors (from src/core/errors.ts): `AlreadyExistsError` (create of a present key),
 * `NotFoundError` (get/update/delete of an absent key), `ConflictError` (update or
 * delete whose expected revision is not the key's current one), `GoneError` (watch from a
 * revision that has been compacted).
 */
export interface StoreEntry<T = unknown> {
  key: string;
  value: T;
  /** The key's mod revision: the revision of the write that produced this value. */
  revision: number;
}

export interface ListResult<T = unknown> {
  /** Entries ordered by key. */
  items: StoreEntry<T>[];
  /** The store revision the list was read at. */
  revision: number;
  /** True when `limit` stopped the list before the prefix's last key. */
  more?: boolean;
  /** With `more`: how many keys under the prefix follow the last one returned. */
  remaining?: number;
}

/** One page of a list (Kubernetes' limit/continue, etcd's range with a start key, limit and revision). */
export interface ListPageOptions {
  /** Start at this key (inclusive) instead of the prefix's first; keys outside the prefix are never read. */
  fromKey?: string;
  /** At most this many entries (a positive integer); absent: every one. */
  limit?: number;
  /**
   * Read the keys as they were at this revision, as a later page of a list read at it must.
   * GoneError when it has been compacted.
   */
  revision?: number;
}

/** A stored value as the JSON text it was written as (for answering lists without re-serialising). */
export interface RawEntry {
  key: string;
  json: string;
  revision: number;
  /**
   * Set by a watch cache: the cached value as every reader of it shares it, so that what readers
   * make of it (its bytes on the wire, what selectors read) is made once, not once per reader.
   */
  shared?: SharedWatchEvent;
}

export interface RawListResult {
  items: RawEntry[];
  revision: number;
  more?: boolean;
  remaining?: number;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoreWatchEvent<T = unknown> {
  type: WatchEventType;
  key: string;
  /** For ADDED/MODIFIED the new value; for DELETED the last value before deletion. */
  value: T;
  /** Revision of this event (for DELETED: the revision of the delete). */
  revision: number;
  /**
   * Set where one stored event goes to many watchers (the watch cache): the same object for
   * every watcher of the event, so that what is made from it (its bytes on the wire) is made once.
   */
  shared?: SharedWatchEvent;
}

/** One stored event as every watcher of it sees it; lives as long as the cache holds the event. */
export interface SharedWatchEvent {
  /** The value as JSON text. */
  readonly json: string;
  /** The value parsed once, for reading only: never to be changed or handed out. */
  parsed?: unknown;
  /**
   * What readers derive from the value to filter on (labels, selectable fields): small, so kept
   * for as long as the value is, where the parsed value would cost several times the JSON.
   */
  attrs?: unknown;
  /** Encodings of the event made so far, by the name of their form (output format and event type). */
  encoded?: Map<string, Uint8Array>;
}

/** The shared event's value, parsed on first use: for reading only. */
export function sharedValue<T>(shared: SharedWatchEvent): T {
  if (shared.parsed === undefined) shared.parsed = JSON.parse(shared.json);
  return shared.parsed as T;
}

export interface WatchOptions {
  /**
   * Deliver every event with revision > `afterRevision`, in order, without gaps.
   * Pass the `revision` of a list to continue from it. Throws GoneError (from the
   * iterator) if `afterRevision + 1` has been compacted.
   */
  afterRevision: number;
  /** Ends the watch; the iterator then returns. */
  signal?: AbortSignal;
}

/** One write of a transaction (as `create`, `update` and `delete` alone). */
export type StoreOp =
  | { type: 'create'; key: string; value: unknown }
  | { type: 'update'; key: string; value: unknown; expectedRevision: number }
  | { type: 'delete'; key: string; expectedRevision?: number };

/** The key of the transaction operation whose condition failed, on the error `transaction` rejects with. */
export function failedKey(err: unknown): string | undefined {
  const key = (err as { storeKey?: unknown } | null)?.storeKey;
  return typeof key === 'string' ? key : undefined;
}

/** Marks a store error with the key it is about (see failedKey). */
export function withFailedKey<E extends Error>(err: E, key: string): E {
  return Object.assign(err, { storeKey: key });
}

export interface Store {
  get<T = unknown>(key: string): Promise<StoreEntry<T>>;
  /** Every key starting with `prefix`, read at one revision. */
  list<T = unknown>(prefix: string, page?: ListPageOptions): Promise<ListResult<T>>;
  /** Like list, but values stay JSON text: a large list can be answered without parsing it. */
  listRaw(prefix: string, page?: ListPageOptions): Promise<RawListResult>;
  /** Fails with AlreadyExistsError if the key exists. Returns the new revision. */
  create(key: string, value: unknown): Promise<number>;
  /** Compare-and-swap on the key's current revision. Returns the new revision. */
  update(key: string, value: unknown, expectedRevision: number): Promise<number>;
  /**
   * Deletes the key (only if its revision is `expectedRevision`, when given).
   * Returns the revision of the delete and the value that was removed.
   */
  delete<T = unknown>(key: string, expectedRevision?: number): Promise<{ revision: number; value: T }>;
  /**
   * All of `ops` or none, at one new revision (an object and the records of what it holds,
   * say). Each key at most once. When a condition fails nothing is written and it rejects
   * with the error that operation alone would have (AlreadyExists, NotFound, Conflict),
   * marked with its key (failedKey). Watchers see one event per key, all at that revision.
   */
  transaction(ops: readonly StoreOp[]): Promise<number>;
  /** Ordered, gap-free events under `prefix` after `options.afterRevision`. */
  watch<T = unknown>(prefix: string, options: WatchOptions): AsyncIterable<StoreWatchEvent<T>>;
  /** The store's current revision (the revision of its latest write). */
  currentRevision(): Promise<number>;
  /** Discards history before `revision` (as etcd's compact): a watch needing an older event gets Gone. */
  compact(revision: number): Promise<void>;
  close(): Promise<void>;
}
