// The etcd Store: one transaction per write (CAS on mod revision), lists at one revision, watches from a revision.
import { Etcd3, type IKeyValue, type IWatchResponse, type Watcher } from 'etcd3';
import { AlreadyExistsError, ConflictError, GoneError, NotFoundError, ServiceUnavailableError } from '../errors.js';
import type { ListResult, Store, StoreEntry, StoreWatchEvent, WatchOptions } from './store.js';

export interface EtcdStoreOptions {
  /** `127.0.0.1:2379` or `http://127.0.0.1:2379`. */
  endpoints: readonly string[];
  dialTimeoutMs?: number;
}

/** etcd's compare targets and results, as the gRPC enums number them. */
const TARGET_MOD = 2;
const TARGET_VERSION = 0;
const RESULT_EQUAL = 0;

/** Keys fetched per range call when listing; pages are read at one fixed revision. */
const PAGE_SIZE = 2000;

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

function decode<T>(kv: IKeyValue): StoreEntry<T> {
  return { key: kv.key.toString('utf8'), value: JSON.parse(kv.value.toString('utf8')) as T, revision: Number(kv.mod_revision) };
}

/** etcd reports a compacted start revision as a cancelled watch with this reason. */
function isCompaction(err: unknown): boolean {
  return err instanceof Error && /compacted/i.test(err.message);
}

/** Connection failures become 503s, so callers see "etcd unavailable" rather than a gRPC dump. */
function unavailable(err: unknown): never {
  if (err instanceof Error && /unavailable|ECONNREFUSED|No connection established|deadline/i.test(err.message)) {
    throw new ServiceUnavailableError(`etcd is unavailable: ${err.message}`, { cause: err });
  }
  throw err;
}

export class EtcdStore implements Store {
  readonly #client: Etcd3;

  constructor(options: EtcdStoreOptions) {
    this.#client = new Etcd3({
      hosts: options.endpoints.map((e) => (/^https?:\/\//.test(e) ? e : `http://${e}`)),
      dialTimeout: options.dialTimeoutMs ?? 5000,
      // Lists of 10,000 objects exceed gRPC's default 4 MiB message limit.
      grpcOptions: { 'grpc.max_receive_message_length': -1 },
    });
  }

  async get<T>(key: string): Promise<StoreEntry<T>> {
    const res = await this.#client.kv.range({ key: Buffer.from(key) }).catch(unavailable);
    const kv = res.kvs[0];
    if (!kv) throw new NotFoundError(`key "${key}" not found`);
    return decode<T>(kv);
  }

  async list<T>(prefix: string): Promise<ListResult<T>> {
    const start = Buffer.from(prefix);
    const end = prefixEnd(start);
    const items: StoreEntry<T>[] = [];
    let revision = 0;
    let from = start;
    for (;;) {
      const res = await this.#client.kv.range({
        key: from, range_end: end, limit: String(PAGE_SIZE), ...(revision ? { revision: String(revision) } : {}),
      }).catch(unavailable);
      if (!revision) revision = Number(res.header.revision);
      for (const kv of res.kvs) items.push(decode<T>(kv));
      if (!res.more || res.kvs.length === 0) break;
      // Next page: the key just after the last one returned.
      from = Buffer.concat([res.kvs[res.kvs.length - 1]!.key, Buffer.from([0])]);
    }
    return { items, revision };
  }

  async create(key: string, value: unknown): Promise<number> {
    const k = Buffer.from(key);
    const res = await this.#client.kv.txn({
      compare: [{ key: k, target: TARGET_VERSION, result: RESULT_EQUAL, version: '0' }],
      success: [{ request_put: { key: k, value: Buffer.from(JSON.stringify(value)) } }],
      failure: [],
    }).catch(unavailable);
    if (!res.succeeded) throw new AlreadyExistsError(`key "${key}" already exists`);
    return Number(res.header.revision);
  }

  async update(key: string, value: unknown, expectedRevision: number): Promise<number> {
    const k = Buffer.from(key);
    const res = await this.#client.kv.txn({
      compare: [{ key: k, target: TARGET_MOD, result: RESULT_EQUAL, mod_revision: String(expectedRevision) }],
      success: [{ request_put: { key: k, value: Buffer.from(JSON.stringify(value)) } }],
      // On failure, read the key to tell "gone" from "changed" in the same round trip.
      failure: [{ request_range: { key: k } }],
    }).catch(unavailable);
    if (res.succeeded) return Number(res.header.revision);
    const current = res.responses[0]?.response_range?.kvs[0];
    if (!current) throw new NotFoundError(`key "${key}" not found`);
    throw new ConflictError(`key "${key}" is at revision ${current.mod_revision}, not ${expectedRevision}`);
  }

  async delete<T>(key: string, expectedRevision?: number): Promise<{ revision: number; value: T }> {
    const k = Buffer.from(key);
    const res = await this.#client.kv.txn({
      compare: expectedRevision === undefined
        ? [{ key: k, target: TARGET_VERSION, result: 1 /* Greater */, version: '0' }]
        : [{ key: k, target: TARGET_MOD, result: RESULT_EQUAL, mod_revision: String(expectedRevision) }],
      success: [{ request_delete_range: { key: k, prev_kv: true } }],
      failure: [{ request_range: { key: k } }],
    }).catch(unavailable);
    if (res.succeeded) {
      const prev = res.responses[0]?.response_delete_range?.prev_kvs[0];
      if (!prev) throw new NotFoundError(`key "${key}" not found`);
      return { revision: Number(res.header.revision), value: JSON.parse(prev.value.toString('utf8')) as T };
    }
    const current = res.responses[0]?.response_range?.kvs[0];
    if (!current) throw new NotFoundError(`key "${key}" not found`);
    throw new ConflictError(`key "${key}" is at revision ${current.mod_revision}, not ${expectedRevision}`);
  }

  async *watch<T>(prefix: string, options: WatchOptions): AsyncIterable<StoreWatchEvent<T>> {
    const { signal } = options;
    if (signal?.aborted) return;
    const queue: StoreWatchEvent<T>[] = [];
    let failure: unknown;
    let wake: (() => void) | undefined;
    const notify = () => {
      const w = wake;
      wake = undefined;
      w?.();
    };
    // Handlers go on before the watcher connects: etcd may cancel it in the same batch as "created".
    const watcher: Watcher = this.#client.watch().prefix(prefix).startRevision(String(options.afterRevision + 1)).withPreviousKV().watcher();
    let lastRevision = options.afterRevision;
    watcher.on('data', (res: IWatchResponse) => {
      for (const ev of res.events) {
        const kv = ev.kv;
        if (ev.type === 'Delete') {
          const prev = ev.prev_kv;
          // Without the previous value there is nothing meaningful to hand out (compacted prev): skip the value, keep the key.
          const value = prev ? (JSON.parse(prev.value.toString('utf8')) as T) : (undefined as T);
          queue.push({ type: 'DELETED', key: kv.key.toString('utf8'), value, revision: Number(kv.mod_revision) });
        } else {
          queue.push({
            type: kv.create_revision === kv.mod_revision ? 'ADDED' : 'MODIFIED',
            key: kv.key.toString('utf8'),
            value: JSON.parse(kv.value.toString('utf8')) as T,
            revision: Number(kv.mod_revision),
          });
        }
      }
      notify();
    });
    watcher.on('error', (err: unknown) => {
      // etcd 3.4 cancels a watch on a compacted revision without saying why: ask whether
      // the next revision we need still exists to tell "Gone" from other failures.
      void this.#compacted(prefix, lastRevision + 1).then((gone) => {
        failure = gone || isCompaction(err) ? new GoneError(`too old resource version: ${lastRevision + 1}`, { cause: err }) : err;
        notify();
      });
    });
    const onAbort = () => notify();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      for (;;) {
        while (queue.length) {
          const event = queue.shift()!;
          lastRevision = event.revision;
          yield event;
          if (signal?.aborted) return;
        }
        if (failure) throw failure;
        if (signal?.aborted) return;
        await new Promise<void>((resolve) => { wake = resolve; });
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
      await watcher.cancel().catch(() => {});
    }
  }

  /** True if `revision` has been compacted away (a read at it is refused). */
  async #compacted(prefix: string, revision: number): Promise<boolean> {
    try {
      await this.#client.kv.range({ key: Buffer.from(prefix), revision: String(revision), count_only: true });
      return false;
    } catch (err) {
      return isCompaction(err);
    }
  }

  async currentRevision(): Promise<number> {
    // Any read answers with the store's revision in its header; a missing key is the cheapest read.
    const res = await this.#client.kv.range({ key: Buffer.from('/minik8s/revision-probe'), count_only: true }).catch(unavailable);
    return Number(res.header.revision);
  }

  async compact(revision: number): Promise<void> {
    await this.#client.kv.compact({ revision: String(revision), physical: true }).catch(unavailable);
  }

  async close(): Promise<void> {
    this.#client.close();
  }
}
