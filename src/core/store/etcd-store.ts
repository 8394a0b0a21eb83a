// The etcd Store: one transaction per write (CAS on mod revision), lists at one revision, watches from a revision.
import { circuitBreaker, ConsecutiveBreaker, handleWhen, retry } from 'cockatiel';
import { Etcd3, isRecoverableError, type IKeyValue, type IWatchResponse, type Watcher } from 'etcd3';
import { AlreadyExistsError, ApiError, ConflictError, GoneError, NotFoundError, RequestEntityTooLargeError, ServiceUnavailableError } from '../errors.js';
import { IDENTITY_TRANSFORMER, type ValueTransformer } from './value-transformer.js';
import {
  withFailedKey,
  type ListPageOptions,
  type ListResult,
  type RawListResult,
  type Store,
  type StoreEntry,
  type StoreOp,
  type StoreWatchEvent,
  type WatchOptions,
} from './store.js';

export interface EtcdStoreOptions {
  /** `127.0.0.1:2379` or `http://127.0.0.1:2379`. */
  endpoints: readonly string[];
  dialTimeoutMs?: number;
  /** A unary call that has no answer after this long fails (503) instead of holding its request forever (default 15 s). */
  callTimeoutMs?: number;
  /** PEM: the CA the servers' certificates are checked against, and the client certificate and key to show them (etcd's --client-cert-auth). */
  tls?: { ca?: Buffer; cert?: Buffer; key?: Buffer; serverName?: string };
  /**
   * Applied to values on their way to etcd and back (Secrets encrypted at rest), so that the
   * watch cache and everything above see plain values. Default: stored as given.
   */
  transformer?: ValueTransformer;
}

/** etcd's default --max-request-bytes: a write whose request is larger is refused by etcd. */
export const MAX_REQUEST_BYTES = 1.5 * 1024 * 1024;
/** Room left in a request for its keys, compares and framing beside the values. */
const REQUEST_OVERHEAD_BYTES = 16 * 1024;
/** How long a client told the store is unavailable should wait before trying again. */
const RETRY_AFTER_SECONDS = 1;

/** etcd's compare targets and results, as the gRPC enums number them. */
const TARGET_MOD = 2;
const TARGET_VERSION = 0;
const RESULT_EQUAL = 0;

/**
 * Keys fetched per range call when listing. Pages are read at one fixed revision, so a long
 * list is one consistent snapshot without one huge gRPC message.
 */
const PAGE_SIZE = 5000;

/** A key nobody writes: reading it is the cheapest way to learn the store's revision. */
const PROBE_KEY = '/minik8s/revision-probe';

/** The key just past every key with this prefix (etcd's range_end for a prefix). */
function prefixEnd(prefix: Buffer): Buffer {
  const end = Buffer.from(prefix);
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i]! < 0xff) {
      end[i]! += 1;
      return end.subarray(0, i + 1);
    }
  }
  return Buffer.from([0]);
}

/** etcd's range for a key prefix; the empty prefix means every key. */
function prefixRange(prefix: string): { key: Buffer; end: Buffer } {
  if (prefix === '') return { key: Buffer.from([0]), end: Buffer.from([0]) };
  const key = Buffer.from(prefix);
  return { key, end: prefixEnd(key) };
}

/** A stored value's JSON text, through the store's transformer. */
type ReadValue = (kv: IKeyValue) => string;

function decode<T>(kv: IKeyValue, read: ReadValue): StoreEntry<T> {
  return { key: kv.key.toString('utf8'), value: JSON.parse(read(kv)) as T, revision: Number(kv.mod_revision) };
}

/** A put whose key was created by this very write is an ADDED; a delete carries the value it removed. */
function toWatchEvent<T>(type: 'Put' | 'Delete', kv: IKeyValue, prev: IKeyValue | undefined, read: ReadValue): StoreWatchEvent<T> {
  const key = kv.key.toString('utf8');
  const revision = Number(kv.mod_revision);
  if (type === 'Delete') {
    // Without prev_kv (compacted before the watch read it) there is no last value to give.
    const value = prev ? (JSON.parse(read(prev)) as T) : (undefined as T);
    return { type: 'DELETED', key, value, revision };
  }
  return {
    type: kv.create_revision === kv.mod_revision ? 'ADDED' : 'MODIFIED',
    key,
    value: JSON.parse(read(kv)) as T,
    revision,
  };
}

/** etcd reports a compacted start revision as a cancelled watch with this reason. */
function isCompaction(err: unknown): boolean {
  return err instanceof Error && /compacted/i.test(err.message);
}

/** etcd refused a request for its size: "request is too large" (InvalidArgument) or gRPC's RESOURCE_EXHAUSTED for a message past its limit. */
function isTooLarge(err: unknown): boolean {
  return err instanceof Error && /request is too large|larger than max|message too large/i.test(err.message);
}

/**
 * The failures that say etcd itself is in trouble (connection lost, overloaded, slow): only
 * these count towards the client's circuit breaker and retries. A request refused for its own
 * size is the request's fault; counted, one oversized write would open the breaker and fail
 * every other request for seconds.
 */
export function isStoreFault(err: Error): boolean {
  return isRecoverableError(err) && !isTooLarge(err);
}

/** Unavailable-store failures: the connection, the circuit breaker, a closed client, a timeout. */
function isUnavailable(err: Error): boolean {
  if (isRecoverableError(err)) return true;
  if ((err as { isBrokenCircuitError?: boolean }).isBrokenCircuitError) return true;
  return /unavailable|ECONNREFUSED|ECONNRESET|No connection established|deadline|already closed|timed? ?out|circuit|leader changed|no leader/i.test(
    `${err.name} ${err.message}`,
  );
}

/**
 * What a store failure means to an API client: a request too large for etcd is a 413 (the
 * client can fix it); an unreachable or failing etcd is a 503 with Retry-After (the client
 * can try again), never a 500 with a gRPC message.
 */
export function storeError(err: unknown): unknown {
  if (!(err instanceof Error) || err instanceof ApiError) return err;
  if (isTooLarge(err)) {
    return new RequestEntityTooLargeError(`Request entity too large: the object is larger than the store's limit of ${MAX_REQUEST_BYTES} bytes`, {
      cause: err,
    });
  }
  if (isUnavailable(err)) {
    return new ServiceUnavailableError(`etcd is unavailable: ${err.message}`, { cause: err, retryAfterSeconds: RETRY_AFTER_SECONDS });
  }
  return err;
}

function unavailable(err: unknown): never {
  throw storeError(err);
}

/**
 * A value's encoding, refused before it reaches etcd when etcd would refuse the request:
 * sent, a value past gRPC's limit comes back as RESOURCE_EXHAUSTED, which the client would
 * take for a failing server and answer by dropping its connections.
 */
function withinBudget(buf: Buffer, budget = MAX_REQUEST_BYTES - REQUEST_OVERHEAD_BYTES): Buffer {
  if (buf.byteLength > budget) {
    throw new RequestEntityTooLargeError(`Request entity too large: the object is ${buf.byteLength} bytes encoded, over the store's limit of ${budget} bytes`);
  }
  return buf;
}

export class EtcdStore implements Store {
  readonly #client: Etcd3;
  /**
   * Open watches, ended by close(). The watcher is kept too: a consumer that stops reading
   * without calling return() leaves its generator suspended, and a watcher left registered
   * makes etcd3 reconnect it forever once the client is closed.
   */
  readonly #watches = new Map<AbortController, { cancel(): Promise<void> }>();
  #closed = false;
  readonly #transformer: ValueTransformer;
  readonly #read: ReadValue;

  constructor(options: EtcdStoreOptions) {
    const callTimeoutMs = options.callTimeoutMs ?? 15_000;
    this.#transformer = options.transformer ?? IDENTITY_TRANSFORMER;
    this.#read = (kv) => this.#transformer.fromStorage(kv.key.toString('utf8'), kv.value).toString('utf8');
    const tls = options.tls;
    this.#client = new Etcd3({
      hosts: options.endpoints.map((e) => (/^https?:\/\//.test(e) ? e : `${tls ? 'https' : 'http'}://${e}`)),
      ...(tls
        ? {
            credentials: {
              rootCertificate: tls.ca ?? (undefined as unknown as Buffer),
              ...(tls.cert && tls.key ? { certChain: tls.cert, privateKey: tls.key } : {}),
            },
          }
        : {}),
      dialTimeout: options.dialTimeoutMs ?? 5000,
      // Without a deadline a call to an etcd that accepts connections but never answers waits forever.
      defaultCallOptions: (context) => (context.isStream ? {} : { deadline: Date.now() + callTimeoutMs }),
      // etcd3's default policies, less the failures that are the request's own fault (see isStoreFault).
      faultHandling: {
        host: () => circuitBreaker(handleWhen(isStoreFault), { halfOpenAfter: 5000, breaker: new ConsecutiveBreaker(3) }),
        global: retry(handleWhen(isStoreFault), { maxAttempts: 3 }),
      },
      grpcOptions: {
        // Lists of 10,000 objects exceed gRPC's default 4 MiB message limit.
        'grpc.max_receive_message_length': -1,
        // The name checked in the server's certificate, for endpoints given by IP: TLS may not send
        // an IP as its server name (Node warns on every connection), so the certificate's DNS name is used.
        ...(tls?.serverName ? { 'grpc.ssl_target_name_override': tls.serverName, 'grpc.default_authority': tls.serverName } : {}),
      },
    });
  }

  async get<T>(key: string): Promise<StoreEntry<T>> {
    const res = await this.#client.kv.range({ key: Buffer.from(key) }).catch(unavailable);
    const kv = res.kvs[0];
    if (!kv) throw new NotFoundError(`key "${key}" not found`);
    return decode<T>(kv, this.#read);
  }

  /** A value as etcd is to store it: JSON text through the transformer. */
  #encode(key: string, value: unknown, budget?: number): Buffer {
    return withinBudget(this.#transformer.toStorage(key, Buffer.from(JSON.stringify(value))), budget);
  }

  async list<T>(prefix: string, page: ListPageOptions = {}): Promise<ListResult<T>> {
    const items: StoreEntry<T>[] = [];
    const read = await this.#range(
      prefix,
      (kv) => items.push(decode<T>(kv, this.#read)),
      () => {
        items.length = 0;
      },
      page,
    );
    return { items, ...read };
  }

  async listRaw(prefix: string, page: ListPageOptions = {}): Promise<RawListResult> {
    const items: RawListResult['items'] = [];
    const read = await this.#range(
      prefix,
      (kv) => items.push({ key: kv.key.toString('utf8'), json: this.#read(kv), revision: Number(kv.mod_revision) }),
      () => {
        items.length = 0;
      },
      page,
    );
    return { items, ...read };
  }

  /**
   * Reads the keys under a prefix (from `page.fromKey`, at most `page.limit`) in pages, all at
   * `page.revision` or the revision of the first page. `each` must only collect: a compaction
   * between pages restarts a read at no fixed revision; one at a given revision is Gone.
   */
  async #range(
    prefix: string,
    each: (kv: IKeyValue) => void,
    reset: () => void,
    page: ListPageOptions = {},
  ): Promise<{ revision: number; more?: boolean; remaining?: number }> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#rangeOnce(prefix, each, page);
      } catch (err) {
        if (isCompaction(err) && page.revision !== undefined) {
          throw new GoneError(`required revision ${page.revision} has been compacted`, { cause: err });
        }
        if (!isCompaction(err) || attempt >= 3) unavailable(err);
        reset();
      }
    }
  }

  async #rangeOnce(prefix: string, each: (kv: IKeyValue) => void, page: ListPageOptions): Promise<{ revision: number; more?: boolean; remaining?: number }> {
    const { key, end } = prefixRange(prefix);
    let revision = page.revision ?? 0;
    let from = page.fromKey !== undefined && page.fromKey > prefix ? Buffer.from(page.fromKey) : key;
    let left = page.limit ?? Number.POSITIVE_INFINITY;
    for (;;) {
      const res = await this.#client.kv.range({
        key: from,
        range_end: end,
        limit: String(Math.min(PAGE_SIZE, left)),
        ...(revision ? { revision: String(revision) } : {}),
      });
      // Every later page is read at the first page's revision: one snapshot.
      if (!revision) revision = Number(res.header.revision);
      for (const kv of res.kvs) each(kv);
      left -= res.kvs.length;
      if (!res.more || res.kvs.length === 0) break;
      // etcd counts every key of the range from this page's start: what follows is the rest.
      if (left <= 0) return { revision, more: true, remaining: Number(res.count) - res.kvs.length };
      // Next page: the key just after the last one returned.
      from = Buffer.concat([res.kvs[res.kvs.length - 1]!.key, Buffer.from([0])]);
    }
    return { revision };
  }

  /**
   * Keys under `prefix` whose stored bytes the transformer would write differently now (see
   * ValueTransformer.isStale), with their revisions: what a key rotation must rewrite.
   */
  async staleKeys(prefix: string): Promise<{ key: string; revision: number }[]> {
    const stale: { key: string; revision: number }[] = [];
    await this.#range(
      prefix,
      (kv) => {
        const key = kv.key.toString('utf8');
        if (this.#transformer.isStale(key, kv.value)) stale.push({ key, revision: Number(kv.mod_revision) });
      },
      () => {
        stale.length = 0;
      },
    );
    return stale;
  }

  async create(key: string, value: unknown): Promise<number> {
    const k = Buffer.from(key);
    const res = await this.#client.kv
      .txn({
        compare: [{ key: k, target: TARGET_VERSION, result: RESULT_EQUAL, version: '0' }],
        success: [{ request_put: { key: k, value: this.#encode(key, value) } }],
        failure: [],
      })
      .catch(unavailable);
    if (!res.succeeded) throw new AlreadyExistsError(`key "${key}" already exists`);
    return Number(res.header.revision);
  }

  async update(key: string, value: unknown, expectedRevision: number): Promise<number> {
    const k = Buffer.from(key);
    const res = await this.#client.kv
      .txn({
        compare: [{ key: k, target: TARGET_MOD, result: RESULT_EQUAL, mod_revision: String(expectedRevision) }],
        success: [{ request_put: { key: k, value: this.#encode(key, value) } }],
        // On failure, read the key to tell "gone" from "changed" in the same round trip.
        failure: [{ request_range: { key: k } }],
      })
      .catch(unavailable);
    if (res.succeeded) return Number(res.header.revision);
    const current = res.responses[0]?.response_range?.kvs[0];
    if (!current) throw new NotFoundError(`key "${key}" not found`);
    throw new ConflictError(`key "${key}" is at revision ${current.mod_revision}, not ${expectedRevision}`);
  }

  async delete<T>(key: string, expectedRevision?: number): Promise<{ revision: number; value: T }> {
    const k = Buffer.from(key);
    const res = await this.#client.kv
      .txn({
        compare:
          expectedRevision === undefined
            ? [{ key: k, target: TARGET_VERSION, result: 1 /* Greater */, version: '0' }]
            : [{ key: k, target: TARGET_MOD, result: RESULT_EQUAL, mod_revision: String(expectedRevision) }],
        success: [{ request_delete_range: { key: k, prev_kv: true } }],
        failure: [{ request_range: { key: k } }],
      })
      .catch(unavailable);
    if (res.succeeded) {
      const prev = res.responses[0]?.response_delete_range?.prev_kvs[0];
      if (!prev) throw new NotFoundError(`key "${key}" not found`);
      return { revision: Number(res.header.revision), value: JSON.parse(this.#read(prev)) as T };
    }
    const current = res.responses[0]?.response_range?.kvs[0];
    if (!current) throw new NotFoundError(`key "${key}" not found`);
    throw new ConflictError(`key "${key}" is at revision ${current.mod_revision}, not ${expectedRevision}`);
  }

  async transaction(ops: readonly StoreOp[]): Promise<number> {
    if (new Set(ops.map((o) => o.key)).size !== ops.length) throw new Error('a transaction names a key more than once');
    const keys = ops.map((op) => Buffer.from(op.key));
    // The whole transaction is one etcd request: its values share one budget.
    let budget = MAX_REQUEST_BYTES - REQUEST_OVERHEAD_BYTES;
    const values = ops.map((op) => {
      if (op.type === 'delete') return undefined;
      const value = this.#encode(op.key, op.value, budget);
      budget -= value.byteLength;
      return value;
    });
    const res = await this.#client.kv
      .txn({
        compare: ops.map((op, i) => {
          const key = keys[i]!;
          if (op.type === 'create') return { key, target: TARGET_VERSION, result: RESULT_EQUAL, version: '0' };
          if (op.expectedRevision === undefined) return { key, target: TARGET_VERSION, result: 1 /* Greater */, version: '0' };
          return { key, target: TARGET_MOD, result: RESULT_EQUAL, mod_revision: String(op.expectedRevision) };
        }),
        success: ops.map((op, i) =>
          op.type === 'delete' ? { request_delete_range: { key: keys[i]! } } : { request_put: { key: keys[i]!, value: values[i]! } },
        ),
        // On failure, read every key in the same round trip to say which condition failed.
        failure: keys.map((key) => ({ request_range: { key } })),
      })
      .catch(unavailable);
    if (res.succeeded) return Number(res.header.revision);
    for (const [i, op] of ops.entries()) {
      const current = res.responses[i]?.response_range?.kvs[0];
      if (op.type === 'create') {
        if (current) throw withFailedKey(new AlreadyExistsError(`key "${op.key}" already exists`), op.key);
        continue;
      }
      if (!current) throw withFailedKey(new NotFoundError(`key "${op.key}" not found`), op.key);
      if (op.expectedRevision !== undefined && Number(current.mod_revision) !== op.expectedRevision) {
        throw withFailedKey(new ConflictError(`key "${op.key}" is at revision ${current.mod_revision}, not ${op.expectedRevision}`), op.key);
      }
    }
    // Every condition held when read back: another write came and went in between. The caller retries.
    throw withFailedKey(new ConflictError('the transaction raced another write; try again'), ops[0]?.key ?? '');
  }

  watch<T>(prefix: string, options: WatchOptions): AsyncIterable<StoreWatchEvent<T>> {
    return this.#watch<T>(prefix, options);
  }

  async *#watch<T>(prefix: string, options: WatchOptions): AsyncGenerator<StoreWatchEvent<T>> {
    if (this.#closed) throw new ServiceUnavailableError('the etcd store is closed');
    // One controller per watch so that close() can end every open watch.
    const local = new AbortController();
    const signal = options.signal ? AbortSignal.any([options.signal, local.signal]) : local.signal;
    if (signal.aborted) return;

    const queue: StoreWatchEvent<T>[] = [];
    let failure: unknown;
    /** Set once etcd has cancelled the watcher itself: cancelling it again would wait forever. */
    let cancelledByServer = false;
    let wake: (() => void) | undefined;
    const notify = () => {
      const w = wake;
      wake = undefined;
      w?.();
    };
    /** The revision of the last event received from etcd (queued, maybe not yet yielded). */
    let received = options.afterRevision;
    // Handlers go on before the watcher connects: etcd may cancel it in the same batch as "created".
    const watcher: Watcher = this.#client
      .watch()
      .prefix(prefix)
      .startRevision(String(received + 1))
      .withPreviousKV()
      .watcher();
    watcher.on('data', (res: IWatchResponse) => {
      // Nothing after an event that could not be read: delivering later ones would leave a gap.
      if (failure) return;
      for (const ev of res.events) {
        try {
          queue.push(toWatchEvent<T>(ev.type, ev.kv, ev.prev_kv, this.#read));
        } catch (err) {
          // A value that cannot be read back (a Secret under an unknown key): end the watch with the error rather than skip an event.
          failure ??= err;
          break;
        }
        received = Number(ev.kv.mod_revision);
      }
      if (res.events.length || failure) notify();
    });
    watcher.on('disconnected', () => {
      // etcd3 resumes a dropped watch from the revision in the last response header, which
      // skips history still being replayed when the stream broke. Resume from what we have.
      watcher.request.start_revision = String(received + 1);
    });
    watcher.on('error', (err: unknown) => {
      cancelledByServer = true;
      // etcd 3.4 cancels a watch on a compacted revision without a reason: ask whether the
      // next revision we need can still be read to tell "Gone" from other failures.
      void this.#compacted(received + 1).then((gone) => {
        failure =
          gone || isCompaction(err)
            ? new GoneError(`too old resource version: ${received + 1} (it has been compacted)`, { cause: err })
            : new ServiceUnavailableError(`etcd ended the watch on "${prefix}": ${(err as Error)?.message ?? err}`, { cause: err });
        notify();
      });
    });
    signal.addEventListener('abort', notify, { once: true });
    let cancelling: Promise<void> | undefined;
    const cancel = () => {
      // Once only, and never after etcd cancelled it itself: that would wait forever.
      cancelling ??= cancelledByServer ? Promise.resolve() : watcher.cancel().catch(() => {});
      return cancelling;
    };
    this.#watches.set(local, { cancel });
    try {
      for (;;) {
        while (queue.length) {
          yield queue.shift()!;
          if (signal.aborted) return;
        }
        if (failure) throw failure;
        if (signal.aborted) return;
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
      }
    } finally {
      signal.removeEventListener('abort', notify);
      this.#watches.delete(local);
      // Not awaited: the consumer should not wait for etcd's acknowledgement to stop.
      void cancel();
    }
  }

  /** True if `revision` has been compacted away (a read at it is refused). */
  async #compacted(revision: number): Promise<boolean> {
    try {
      await this.#client.kv.range({ key: Buffer.from(PROBE_KEY), revision: String(revision), count_only: true });
      return false;
    } catch (err) {
      return isCompaction(err);
    }
  }

  async currentRevision(): Promise<number> {
    // Any read answers with the store's revision in its header; a missing key is the cheapest read.
    const res = await this.#client.kv.range({ key: Buffer.from(PROBE_KEY), count_only: true }).catch(unavailable);
    return Number(res.header.revision);
  }

  async compact(revision: number): Promise<void> {
    await this.#client.kv.compact({ revision: String(revision), physical: true }).catch(unavailable);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const cancels: Promise<void>[] = [];
    for (const [controller, watch] of this.#watches) {
      controller.abort();
      cancels.push(watch.cancel());
    }
    this.#watches.clear();
    // etcd acknowledges cancels within a round trip; do not let a dead connection hold close() up.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(cancels),
      new Promise((resolve) => {
        timer = setTimeout(resolve, 1000);
      }),
    ]);
    clearTimeout(timer);
    this.#client.close();
  }
}
