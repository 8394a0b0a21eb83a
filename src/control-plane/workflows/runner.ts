// WorkflowRunner: runs one execution of a stored Workflow, calling its Tasks' functions through the activator, and keeps the execution's record.
import { abortableSleep } from '../../core/abortable-sleep.js';
import { randomBytes } from 'node:crypto';
import { workflowKind, type Workflow } from '../../core/api/workflow.js';
import type { Client } from '../../core/client/client.js';
import type { FunctionInvoker } from '../activator/invoker.js';
import type { HistoryEvent } from '../../core/api/workflow-execution.js';
import { execute, type TaskRequest, type TaskResult } from './interpreter.js';
import type { WorkflowExecution } from '../../core/api/workflow-execution.js';
import type { ExecutionStore } from './execution-store.js';
import { taskResultFromResponse } from './task-result.js';

export interface WorkflowRunnerOptions {
  /** Reads the Workflow each run starts from. */
  client: Client;
  invoker: FunctionInvoker;
  executions: ExecutionStore;
  now?: () => Date;
  /** Waits of Wait states and retries (default: real timers). */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Most often a running execution's record is written (default 1 s); its start and end are always written. */
  progressIntervalMs?: number;
  log?: (message: string) => void;
}

export interface RunRequest {
  namespace: string;
  name: string;
  input: unknown;
  /** Aborting it (the caller went away) ends the execution ABORTED. */
  signal?: AbortSignal;
}

export interface RunResult {
  executionName: string;
  /** As the contract has it: an aborted execution reads FAILED with error States.Aborted (its record says ABORTED). */
  status: 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT';
  output?: unknown;
  error?: string;
  cause?: string;
}

/** `20240131-120000-a1b2c3`: sorts by start time, readable, unique enough with 24 random bits per second. */
export function executionName(now: Date): string {
  const iso = now.toISOString();
  return `${iso.slice(0, 10).replace(/-/g, '')}-${iso.slice(11, 19).replace(/:/g, '')}-${randomBytes(3).toString('hex')}`;
}

export class WorkflowRunner {
  readonly #o: WorkflowRunnerOptions;
  readonly #now: () => Date;
  readonly #sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  readonly #log: (message: string) => void;

  constructor(options: WorkflowRunnerOptions) {
    this.#o = options;
    this.#now = options.now ?? (() => new Date());
    this.#sleep = options.sleep ?? abortableSleep;
    this.#log = options.log ?? (() => {});
  }

  /** Runs the workflow to its end; rejects only when there is no such workflow (NotFoundError) or its record cannot be written. */
  async run(request: RunRequest): Promise<RunResult> {
    const { namespace, name, input } = request;
    const wf = (await this.#o.client.get(workflowKind, { namespace, name })) as Workflow;
    const start = this.#now();
    const record: WorkflowExecution = {
      apiVersion: 'minik8s.io/v1',
      kind: 'WorkflowExecution',
      metadata: { name: executionName(start), namespace, creationTimestamp: start.toISOString() },
      workflow: name,
      ...(wf.metadata.uid ? { workflowUid: wf.metadata.uid } : {}),
      status: 'RUNNING',
      startTime: start.toISOString(),
      input,
      history: [],
    };
    await this.#o.executions.begin(record);

    const progressMs = this.#o.progressIntervalMs ?? 1000;
    let lastWrite = Date.now();
    let writing: Promise<void> = Promise.resolve();
    const onEvent = (event: HistoryEvent) => {
      record.history.push(event);
      // Progress of a long execution (a Wait, a slow task) shows while it runs, without a write per event.
      if (event.type === 'StateExited' && Date.now() - lastWrite >= progressMs) {
        lastWrite = Date.now();
        const snapshot = { ...record, history: [...record.history] };
        writing = writing
          .then(() => this.#o.executions.save(snapshot))
          .catch((err) => this.#log(`workflow ${namespace}/${name}: cannot store progress: ${err instanceof Error ? err.message : String(err)}`));
      }
    };

    const result = await execute({
      definition: wf.spec.definition,
      input,
      runTask: (task) => this.#runTask(namespace, task),
      sleep: this.#sleep,
      now: this.#now,
      signal: request.signal,
      executionName: record.metadata.name,
      workflowName: name,
      onEvent,
    });
    await writing;
    Object.assign(record, {
      status: result.status,
      stopTime: this.#now().toISOString(),
      ...(result.output !== undefined ? { output: result.output } : {}),
      ...(result.error !== undefined ? { error: result.error } : {}),
      ...(result.cause !== undefined ? { cause: result.cause } : {}),
    });
    await this.#o.executions.save(record, { final: true });
    if (result.status !== 'SUCCEEDED')
      this.#log(`workflow ${namespace}/${name}: execution ${record.metadata.name} ${result.status}: ${result.error ?? ''} ${result.cause ?? ''}`.trim());
    return {
      executionName: record.metadata.name,
      status: result.status === 'ABORTED' ? 'FAILED' : result.status,
      ...(result.output !== undefined ? { output: result.output } : {}),
      ...(result.error !== undefined ? { error: result.error } : {}),
      ...(result.cause !== undefined ? { cause: result.cause } : {}),
    };
  }

  /** One Task's call: the input sent as JSON through the activator, its answer mapped to ASL errors, the timeout enforced here. */
  async #runTask(namespace: string, task: TaskRequest): Promise<TaskResult> {
    const timeout = new AbortController();
    const timer = task.timeoutMs !== undefined ? setTimeout(() => timeout.abort(), task.timeoutMs) : undefined;
    const timedOut = (): TaskResult => ({
      ok: false,
      error: 'States.Timeout',
      cause: `the function ${task.function} did not answer within ${Math.round((task.timeoutMs ?? 0) / 100) / 10} s`,
    });
    try {
      const res = await this.#o.invoker.invoke({
        namespace,
        name: task.function,
        // Always JSON: a string input must reach the handler as a JSON string, not as raw text.
        body: Buffer.from(JSON.stringify(task.input ?? null)),
        headers: { 'content-type': 'application/json' },
        method: 'POST',
        trigger: 'workflow',
        signal: AbortSignal.any([task.signal, timeout.signal]),
      });
      if (timeout.signal.aborted) return timedOut();
      return taskResultFromResponse(res.status, res.body);
    } catch (err) {
      if (timeout.signal.aborted) return timedOut();
      return { ok: false, error: 'States.TaskFailed', cause: `calling function ${task.function}: ${err instanceof Error ? err.message : String(err)}` };
    } finally {
      clearTimeout(timer);
    }
  }
}
