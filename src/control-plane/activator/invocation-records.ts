// Invocation records: the last calls of each function, kept in memory and written to etcd in batches so a master restart keeps them.
import { AlreadyExistsError, ConflictError, NotFoundError } from '../../core/errors.js';
import { getOrCreate } from '../../core/get-or-create.js';
import type { Store } from '../../core/store/store.js';
import type { InvocationRecord } from '../../core/api/invocation-record.js';

/**
 * Outside `/registry/`: these are not API objects, and under that prefix every batch (up to
 * the byte budget below) would also be copied into the master's watch cache and its ring.
 */
export const INVOCATIONS_PREFIX = '/minik8s/functioninvocations/';

export function invocationsKey(namespace: string, name: string): string {
  return `${INVOCATIONS_PREFIX}${namespace}/${name}`;
}

/** Fields longer than this are cut in what is stored (memory keeps the runtime's own 4 KiB bound). */
const STORED_FIELD_LIMIT = 2048;

function cut(text: string | undefined): string | undefined {
  return text === undefined || text.length <= STORED_FIELD_LIMIT ? text : `${text.slice(0, STORED_FIELD_LIMIT)}... (cut)`;
}

/**
 * What is written for one function: newest records first, long fields cut, and old records
 * dropped until the whole fits `budgetBytes` (etcd refuses requests over 1.5 MiB).
 */
export function persistedRecords(records: readonly InvocationRecord[], budgetBytes: number): InvocationRecord[] {
  const out: InvocationRecord[] = [];
  let size = 2;
  for (let i = records.length - 1; i >= 0; i--) {
    const r = records[i]!;
    let result = r.result;
    if (result !== undefined) {
      const text = JSON.stringify(result);
      if (text.length > STORED_FIELD_LIMIT) result = `${text.slice(0, STORED_FIELD_LIMIT)}... (cut)`;
    }
    const stored: InvocationRecord = { ...r, result, traceback: cut(r.traceback), stdout: cut(r.stdout), stderr: cut(r.stderr), error: cut(r.error) };
    for (const k of Object.keys(stored) as (keyof InvocationRecord)[]) if (stored[k] === undefined) delete stored[k];
    const bytes = Buffer.byteLength(JSON.stringify(stored)) + 1;
    if (size + bytes > budgetBytes) break;
    size += bytes;
    out.push(stored);
  }
  return out.reverse();
}

export interface InvocationLogOptions {
  store: Store;
  /** Records kept per function (default 200). */
  limit?: number;
  /** Most often one function's records are written (default 2 s). */
  flushMs?: number;
  /** Bytes stored per function at most (default 256 KiB). */
  budgetBytes?: number;
  log?: (message: string) => void;
}

interface Entry {
  records: InvocationRecord[];
  dirty: boolean;
  /** The stored key's revision as of our last read or write; undefined: not stored (as far as we know). */
  revision?: number;
}

export class InvocationLog {
  readonly #store: Store;
  readonly #limit: number;
  readonly #flushMs: number;
  readonly #budget: number;
  readonly #log: (message: string) => void;
  readonly #entries = new Map<string, Entry>();
  #flushing: Promise<void> = Promise.resolve();

  constructor(options: InvocationLogOptions) {
    this.#store = options.store;
    this.#limit = options.limit ?? 200;
    this.#flushMs = options.flushMs ?? 2000;
    this.#budget = options.budgetBytes ?? 256 * 1024;
    this.#log = options.log ?? (() => {});
  }

  add(record: InvocationRecord): void {
    const key = `${record.namespace}/${record.function}`;
    const entry = getOrCreate(this.#entries, key, () => ({ records: [], dirty: false }));
    entry.records.push(record);
    if (entry.records.length > this.#limit) entry.records.splice(0, entry.records.length - this.#limit);
    entry.dirty = true;
  }

  /** Newest first. */
  list(namespace: string, name: string, limit?: number): InvocationRecord[] {
    const records = this.#entries.get(`${namespace}/${name}`)?.records ?? [];
    const out = records.slice().reverse();
    return limit !== undefined && limit >= 0 ? out.slice(0, limit) : out;
  }

  get(namespace: string, name: string, id: string): InvocationRecord | undefined {
    return this.#entries.get(`${namespace}/${name}`)?.records.find((r) => r.id === id);
  }

  /** Functions with records, as `namespace/name`. */
  keys(): string[] {
    return [...this.#entries.keys()];
  }

  /** A deleted function's records go, from memory and the store. */
  async forget(namespace: string, name: string): Promise<void> {
    this.#entries.delete(`${namespace}/${name}`);
    try {
      await this.#store.delete(invocationsKey(namespace, name));
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err;
    }
  }

  /** Reads what earlier runs stored (before serving: records made meanwhile are kept too). */
  async load(): Promise<void> {
    const { items } = await this.#store.list<{ records?: InvocationRecord[] }>(INVOCATIONS_PREFIX);
    for (const item of items) {
      const rest = item.key.slice(INVOCATIONS_PREFIX.length);
      const slash = rest.indexOf('/');
      if (slash < 0) continue;
      const key = `${rest.slice(0, slash)}/${rest.slice(slash + 1)}`;
      const stored = Array.isArray(item.value?.records) ? item.value.records : [];
      const current = this.#entries.get(key);
      const records = [...stored, ...(current?.records ?? [])].slice(-this.#limit);
      this.#entries.set(key, { records, dirty: current?.dirty ?? false, revision: item.revision });
    }
  }

  /** Writes every function whose records changed since the last write. */
  flush(): Promise<void> {
    this.#flushing = this.#flushing.then(() => this.#flushDirty());
    return this.#flushing;
  }

  /** Writes dirty records every flushMs until `signal`, then once more. */
  async start(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, this.#flushMs);
        function done() {
          clearTimeout(timer);
          signal.removeEventListener('abort', done);
          resolve();
        }
        signal.addEventListener('abort', done, { once: true });
      });
      await this.flush();
    }
  }

  async #flushDirty(): Promise<void> {
    for (const [key, entry] of this.#entries) {
      if (!entry.dirty) continue;
      entry.dirty = false;
      const slash = key.indexOf('/');
      const storeKey = invocationsKey(key.slice(0, slash), key.slice(slash + 1));
      const value = { records: persistedRecords(entry.records, this.#budget) };
      try {
        entry.revision = await this.#write(storeKey, value, entry.revision);
      } catch (err) {
        entry.dirty = true;
        this.#log(`activator: cannot store the invocation records of ${key}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  }

  /** Create or overwrite: we are the only writer of these keys, so a conflict only means our revision is stale. */
  async #write(key: string, value: unknown, revision: number | undefined): Promise<number> {
    for (let attempt = 0; ; attempt++) {
      try {
        return revision === undefined ? await this.#store.create(key, value) : await this.#store.update(key, value, revision);
      } catch (err) {
        if (attempt >= 3 || !(err instanceof ConflictError || err instanceof NotFoundError || err instanceof AlreadyExistsError)) throw err;
        revision = await this.#store.get(key).then(
          (e) => e.revision,
          () => undefined,
        );
      }
    }
  }
}
