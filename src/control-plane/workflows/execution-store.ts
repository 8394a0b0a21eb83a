// Workflow execution records: one etcd key per execution, the last N kept per workflow, each bounded in size; served to the API and the CLI.
import { AlreadyExistsError, ConflictError, NotFoundError } from '../../core/errors.js';
import type { Store } from '../../core/store/store.js';
import type { HistoryEvent, WorkflowExecution, WorkflowExecutionSummary } from '../../core/api/workflow-execution.js';

/**
 * Outside `/registry/`: these are not API objects, and the master's watch cache holds only
 * what is under that prefix (as the activator's invocation records do).
 */
export const EXECUTIONS_PREFIX = '/minik8s/workflowexecutions/';

export function executionsPrefix(namespace: string, workflow: string): string {
  return `${EXECUTIONS_PREFIX}${namespace}/${workflow}/`;
}

export function executionKey(namespace: string, workflow: string, name: string): string {
  return `${executionsPrefix(namespace, workflow)}${name}`;
}

/** `NS/WF/EXEC` from a key under EXECUTIONS_PREFIX. */
export function parseExecutionKey(key: string): { namespace: string; workflow: string; name: string } | undefined {
  const parts = key.slice(EXECUTIONS_PREFIX.length).split('/');
  return parts.length === 3 && parts.every((p) => p.length > 0) ? { namespace: parts[0]!, workflow: parts[1]!, name: parts[2]! } : undefined;
}

/** Values (inputs, outputs, events' payloads) whose JSON is longer are stored as a preview. */
export const MAX_VALUE_BYTES = 16 * 1024;
/** A whole record (etcd refuses requests over 1.5 MiB). */
export const MAX_RECORD_BYTES = 512 * 1024;
const PREVIEW_CHARS = 1024;

/** A value as stored: itself, or `{truncated, bytes, preview}` when its JSON is over `max` bytes. */
export function boundedValue(value: unknown, max = MAX_VALUE_BYTES): unknown {
  if (value === undefined) return undefined;
  const text = JSON.stringify(value) ?? 'null';
  const bytes = Buffer.byteLength(text);
  return bytes <= max ? value : { truncated: true, bytes, preview: text.slice(0, PREVIEW_CHARS) };
}

function size(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value));
}

/**
 * A record that fits `maxBytes`: large values become previews, then the oldest events lose their
 * payloads, then the oldest events go (counted in historyDropped). The newest events, the
 * execution's own input, output and error always stay.
 */
export function boundedRecord(record: WorkflowExecution, maxBytes = MAX_RECORD_BYTES): WorkflowExecution {
  const strip = (e: HistoryEvent): HistoryEvent => {
    const { input: _input, output: _output, ...rest } = e;
    return rest;
  };
  const history = record.history.map((e) => {
    const out: HistoryEvent = { ...e };
    if ('input' in e) out.input = boundedValue(e.input);
    if ('output' in e) out.output = boundedValue(e.output);
    return out;
  });
  const out: WorkflowExecution = { ...record, input: boundedValue(record.input), output: boundedValue(record.output), history };
  if (out.input === undefined) delete out.input;
  if (out.output === undefined) delete out.output;
  let total = size(out);
  for (let i = 0; total > maxBytes && i < history.length; i++) {
    const before = size(history[i]);
    history[i] = strip(history[i]!);
    total -= before - size(history[i]);
  }
  let dropped = record.historyDropped ?? 0;
  while (total > maxBytes && history.length > 1) {
    total -= size(history.shift()) + 1;
    dropped++;
  }
  if (dropped) out.historyDropped = dropped;
  return out;
}

/** A record without its history, for lists. */
export function summary(record: WorkflowExecution): WorkflowExecutionSummary {
  const { history, ...rest } = record;
  return { ...rest, events: history.length + (record.historyDropped ?? 0) };
}

/** Which executions to delete so that at most `limit` are kept: the oldest first, never one still running here. */
export function executionsToPrune(names: readonly string[], limit: number, running: ReadonlySet<string>): string[] {
  const excess = names.length - limit;
  if (excess <= 0) return [];
  return [...names]
    .sort()
    .filter((n) => !running.has(n))
    .slice(0, excess);
}

export interface ExecutionStoreOptions {
  store: Store;
  /** Executions kept per workflow (default 100). */
  limit?: number;
  log?: (message: string) => void;
}

/**
 * Executions are few per workflow and written a handful of times each, so each has its own key:
 * a run writes only its own record, and reading one does not read the others.
 */
export class ExecutionStore {
  readonly #store: Store;
  readonly #limit: number;
  readonly #log: (message: string) => void;
  /** Per `ns/workflow`: the stored execution names, loaded on first use (names sort by start time). */
  readonly #names = new Map<string, Set<string>>();
  /** Keys of executions running in this process, and the revision of their last write. */
  readonly #running = new Map<string, number | undefined>();
  /** Running executions whose records were removed with their workflow: their later saves write nothing. */
  readonly #removed = new Set<string>();

  constructor(options: ExecutionStoreOptions) {
    this.#store = options.store;
    this.#limit = options.limit ?? 100;
    this.#log = options.log ?? (() => {});
  }

  get limit(): number {
    return this.#limit;
  }

  async #namesOf(namespace: string, workflow: string): Promise<Set<string>> {
    const key = `${namespace}/${workflow}`;
    let names = this.#names.get(key);
    if (!names) {
      const { items } = await this.#store.listRaw(executionsPrefix(namespace, workflow));
      // Another call may have loaded it meanwhile; keep the first.
      names = this.#names.get(key) ?? new Set(items.map((i) => parseExecutionKey(i.key)?.name).filter((n): n is string => n !== undefined));
      this.#names.set(key, names);
    }
    return names;
  }

  /** Stores a new (RUNNING) execution and drops the oldest beyond the limit. */
  async begin(record: WorkflowExecution): Promise<void> {
    const { namespace, name } = record.metadata;
    const key = executionKey(namespace, record.workflow, name);
    const names = await this.#namesOf(namespace, record.workflow);
    this.#running.set(key, await this.#store.create(key, boundedRecord(record)));
    names.add(name);
    const prefix = executionsPrefix(namespace, record.workflow);
    const running = new Set([...this.#running.keys()].filter((k) => k.startsWith(prefix)).map((k) => k.slice(prefix.length)));
    for (const old of executionsToPrune([...names], this.#limit, running)) {
      names.delete(old);
      await this.#delete(executionKey(namespace, record.workflow, old));
    }
  }

  /** Writes an execution's progress or end; `final` ends its tracking as a running one. */
  async save(record: WorkflowExecution, options: { final?: boolean } = {}): Promise<void> {
    const key = executionKey(record.metadata.namespace, record.workflow, record.metadata.name);
    if (this.#removed.has(key)) {
      if (options.final) this.#removed.delete(key);
      return;
    }
    const value = boundedRecord(record);
    let revision = this.#running.get(key);
    try {
      for (let attempt = 0; ; attempt++) {
        try {
          revision = revision === undefined ? await this.#store.create(key, value) : await this.#store.update(key, value, revision);
          break;
        } catch (err) {
          // We are the only writer of a running execution's key: a conflict means our revision is stale.
          if (err instanceof ConflictError && attempt < 3) {
            revision = (await this.#store.get(key)).revision;
            continue;
          }
          // Gone: its workflow was deleted meanwhile; the record goes with it.
          if (err instanceof NotFoundError) return;
          if (err instanceof AlreadyExistsError && attempt < 3) {
            revision = (await this.#store.get(key)).revision;
            continue;
          }
          throw err;
        }
      }
      this.#running.set(key, revision);
    } finally {
      if (options.final) this.#running.delete(key);
    }
  }

  /** Newest first, without history. */
  async list(namespace: string, workflow: string): Promise<WorkflowExecutionSummary[]> {
    const { items } = await this.#store.list<WorkflowExecution>(executionsPrefix(namespace, workflow));
    return items.map((i) => summary(i.value)).sort((a, b) => b.startTime.localeCompare(a.startTime) || b.metadata.name.localeCompare(a.metadata.name));
  }

  async get(namespace: string, workflow: string, name: string): Promise<WorkflowExecution> {
    try {
      return (await this.#store.get<WorkflowExecution>(executionKey(namespace, workflow, name))).value;
    } catch (err) {
      if (err instanceof NotFoundError)
        throw new NotFoundError(`workflowexecutions.minik8s.io "${name}" not found`, { kind: 'workflowexecutions', group: 'minik8s.io', name });
      throw err;
    }
  }

  /** The workflows (`ns/workflow`) that have stored executions. */
  async storedWorkflows(): Promise<Set<string>> {
    const { items } = await this.#store.listRaw(EXECUTIONS_PREFIX);
    const out = new Set<string>();
    for (const item of items) {
      const parsed = parseExecutionKey(item.key);
      if (parsed) out.add(`${parsed.namespace}/${parsed.workflow}`);
    }
    return out;
  }

  /**
   * Removes a workflow's executions; with `keepUid`, only those of other incarnations of the
   * name (a workflow deleted and made again while the master was down).
   */
  async removeWorkflow(namespace: string, workflow: string, options: { keepUid?: string } = {}): Promise<number> {
    const { items } = await this.#store.list<WorkflowExecution>(executionsPrefix(namespace, workflow));
    let removed = 0;
    for (const item of items) {
      // Records without a uid cannot be told apart: they stay with the workflow of their name.
      if (options.keepUid !== undefined && (item.value.workflowUid === undefined || item.value.workflowUid === options.keepUid)) continue;
      if (this.#running.delete(item.key)) this.#removed.add(item.key);
      await this.#delete(item.key);
      this.#names.get(`${namespace}/${workflow}`)?.delete(parseExecutionKey(item.key)?.name ?? '');
      removed++;
    }
    return removed;
  }

  /**
   * At start: executions an earlier master left RUNNING can never finish (their state lived in
   * that process), so they are marked ABORTED. Returns how many.
   */
  async abortStale(now: Date): Promise<number> {
    const { items } = await this.#store.list<WorkflowExecution>(EXECUTIONS_PREFIX);
    let aborted = 0;
    for (const item of items) {
      if (item.value.status !== 'RUNNING' || this.#running.has(item.key)) continue;
      const cause = 'the master stopped during the execution';
      const history = [
        ...(item.value.history ?? []),
        { id: (item.value.history?.length ?? 0) + 1, timestamp: now.toISOString(), type: 'ExecutionAborted' as const, cause },
      ];
      const value: WorkflowExecution = { ...item.value, status: 'ABORTED', stopTime: now.toISOString(), error: 'States.Aborted', cause, history };
      try {
        await this.#store.update(item.key, boundedRecord(value), item.revision);
        aborted++;
      } catch (err) {
        if (!(err instanceof ConflictError || err instanceof NotFoundError)) throw err;
      }
    }
    return aborted;
  }

  async #delete(key: string): Promise<void> {
    try {
      await this.#store.delete(key);
    } catch (err) {
      if (!(err instanceof NotFoundError)) this.#log(`workflows: cannot delete execution record ${key}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}
