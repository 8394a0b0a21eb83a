// The workflow interpreter: runs a definition over an input, state by state, with tasks, sleeps and the clock injected, and records the history.
import type { State, WorkflowDefinition } from '../../core/api/workflow-definition.js';
import { taskFunctionName } from '../../core/api/workflow-definition.js';
import { parsePath, writeSteps } from '../../core/api/workflow-path.js';
import { chooseNext, readPath, type PathRoots } from './choice-rules.js';
import { WorkflowError } from './workflow-error.js';
import type { ExecutionStatus, HistoryEvent } from '../../core/api/workflow-execution.js';

export interface TaskRequest {
  function: string;
  input: unknown;
  state: string;
  attempt: number;
  /** The Task's TimeoutSeconds, or what is left of the execution's, whichever is shorter; past it the task fails with States.Timeout. */
  timeoutMs?: number;
  signal: AbortSignal;
}

/** What a function call came to: its output, or an ASL error name and cause. */
export type TaskResult = { ok: true; output: unknown } | { ok: false; error: string; cause: string };

export interface ExecuteOptions {
  definition: WorkflowDefinition;
  input: unknown;
  /** Calls a function; never throws for the function's own failures (they are results). */
  runTask(request: TaskRequest): Promise<TaskResult>;
  /** Waits `ms` (Wait states, retry intervals); may settle early when `signal` aborts. */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
  now(): Date;
  /** Aborting it ends the execution ABORTED. */
  signal?: AbortSignal;
  /** For the context object ($$.Execution.Name, $$.StateMachine.Name). */
  executionName?: string;
  workflowName?: string;
  /** A bound on state transitions, so that a loop without end cannot spin forever (AWS bounds history at 25,000 events). */
  maxTransitions?: number;
  /** Called with each history event as it happens (the runner persists progress from it). */
  onEvent?(event: HistoryEvent): void;
}

export interface ExecutionResult {
  status: ExecutionStatus;
  output?: unknown;
  error?: string;
  cause?: string;
  history: HistoryEvent[];
}

export const DEFAULT_MAX_TRANSITIONS = 25_000;

/** Retry defaults from ASL. */
const DEFAULT_INTERVAL_SECONDS = 1;
const DEFAULT_MAX_ATTEMPTS = 3;
const DEFAULT_BACKOFF_RATE = 2;

class ExecutionTimedOut extends Error {}
class ExecutionAborted extends Error {}

/**
 * Whether a Retry or Catch entry's ErrorEquals covers an error. States.ALL covers all but
 * States.Runtime; States.TaskFailed covers all but States.Timeout and States.Runtime (ASL: it is
 * a wildcard for any error a Task state raises, and only Task states have Retry and Catch).
 */
export function errorMatches(errorEquals: readonly string[], error: string): boolean {
  if (errorEquals.includes(error)) return true;
  if (error === 'States.Runtime') return false;
  if (errorEquals.includes('States.ALL')) return true;
  return errorEquals.includes('States.TaskFailed') && error !== 'States.Timeout';
}

/** The seconds before retry number `retry` (1-based) of a retrier: IntervalSeconds × BackoffRate^(retry-1), capped by MaxDelaySeconds. */
export function retryDelaySeconds(retrier: { IntervalSeconds?: number; BackoffRate?: number; MaxDelaySeconds?: number }, retry: number): number {
  const delay = (retrier.IntervalSeconds ?? DEFAULT_INTERVAL_SECONDS) * (retrier.BackoffRate ?? DEFAULT_BACKOFF_RATE) ** (retry - 1);
  return retrier.MaxDelaySeconds !== undefined ? Math.min(delay, retrier.MaxDelaySeconds) : delay;
}

/** Parameters and ResultSelector: fields ending in `.$` take the value their path names; the rest is copied. */
export function applyTemplate(template: unknown, roots: PathRoots): unknown {
  if (Array.isArray(template)) return template.map((t) => applyTemplate(t, roots));
  if (template === null || typeof template !== 'object') return template;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(template as Record<string, unknown>)) {
    if (!key.endsWith('.$')) {
      out[key] = applyTemplate(value, roots);
      continue;
    }
    const read = readPath(String(value), roots);
    if (!read.found)
      throw new WorkflowError(
        'States.ParameterPathFailure',
        `The JSONPath '${String(value)}' specified for the field '${key}' could not be found in the input`,
      );
    out[key.slice(0, -2)] = read.value;
  }
  return out;
}

/** InputPath and OutputPath: the part of a value a path names; null gives `{}`; a path that names nothing fails the execution. */
export function selectPath(value: unknown, path: string | null | undefined, field: string): unknown {
  if (path === undefined || path === '$') return value;
  if (path === null) return {};
  const read = readPath(path, { input: value, context: undefined });
  if (!read.found)
    throw new WorkflowError(
      'States.Runtime',
      `Invalid path '${path}' in ${field}: it names no value in ${field === 'InputPath' ? 'the state input' : 'the state output'}`,
    );
  return read.value;
}

/** ResultPath: `input` with `result` placed at the path (`$`: the result alone; null: the input unchanged). */
export function placeResult(input: unknown, path: string | null | undefined, result: unknown): unknown {
  if (path === undefined || path === '$') return result;
  if (path === null) return input;
  const written = writeSteps(input, parsePath(path).steps, result);
  if (!written.ok)
    throw new WorkflowError('States.ResultPathMatchFailure', `Unable to apply ResultPath '${path}' to the state input: it is not an object at that path`);
  return written.value;
}

type StepOutcome = { kind: 'next'; output: unknown; next: string } | { kind: 'end'; output: unknown } | { kind: 'fail'; error?: string; cause?: string };

/** One execution of a definition. */
class Execution {
  readonly history: HistoryEvent[] = [];
  readonly #o: ExecuteOptions;
  readonly #signal: AbortSignal;
  readonly #start: Date;
  readonly #deadline: number | undefined;
  #context: { Execution: Record<string, unknown>; StateMachine: Record<string, unknown>; State: Record<string, unknown> };

  constructor(options: ExecuteOptions) {
    this.#o = options;
    this.#signal = options.signal ?? new AbortController().signal;
    this.#start = options.now();
    const timeout = options.definition.TimeoutSeconds;
    this.#deadline = timeout !== undefined ? this.#start.getTime() + timeout * 1000 : undefined;
    this.#context = {
      Execution: { Id: options.executionName ?? '', Name: options.executionName ?? '', Input: options.input, StartTime: this.#start.toISOString() },
      StateMachine: { Id: options.workflowName ?? '', Name: options.workflowName ?? '' },
      State: {},
    };
  }

  #emit(event: Omit<HistoryEvent, 'id' | 'timestamp'>): void {
    const full: HistoryEvent = { id: this.history.length + 1, timestamp: this.#o.now().toISOString(), ...event };
    this.history.push(full);
    this.#o.onEvent?.(full);
  }

  #checkpoint(): void {
    if (this.#signal.aborted) throw new ExecutionAborted();
    if (this.#deadline !== undefined && this.#o.now().getTime() >= this.#deadline) throw new ExecutionTimedOut();
  }

  /** Waits, but never past the execution's deadline (reaching it ends the execution TIMED_OUT). */
  async #pause(ms: number): Promise<void> {
    const remaining = this.#deadline !== undefined ? this.#deadline - this.#o.now().getTime() : Infinity;
    if (ms > 0) await this.#o.sleep(Math.min(ms, Math.max(0, remaining)), this.#signal);
    if (ms >= remaining) throw new ExecutionTimedOut();
    this.#checkpoint();
  }

  #roots(input: unknown): PathRoots {
    return { input, context: this.#context };
  }

  async run(): Promise<ExecutionResult> {
    const { definition } = this.#o;
    this.#emit({ type: 'ExecutionStarted', input: this.#o.input });
    const max = this.#o.maxTransitions ?? DEFAULT_MAX_TRANSITIONS;
    let name = definition.StartAt;
    let input = this.#o.input;
    let transitions = 0;
    try {
      for (;;) {
        this.#checkpoint();
        if (++transitions > max) throw new WorkflowError('States.Runtime', `the execution exceeded ${max} state transitions`);
        const state = definition.States[name];
        if (!state) throw new WorkflowError('States.Runtime', `no state named "${name}"`);
        this.#context.State = { Name: name, EnteredTime: this.#o.now().toISOString(), RetryCount: 0 };
        this.#emit({ type: 'StateEntered', state: name, stateType: state.Type, input });
        const outcome = await this.#step(name, state, input);
        if (outcome.kind === 'fail') {
          this.#emit({ type: 'ExecutionFailed', state: name, error: outcome.error, cause: outcome.cause });
          return {
            status: 'FAILED',
            ...(outcome.error !== undefined ? { error: outcome.error } : {}),
            ...(outcome.cause !== undefined ? { cause: outcome.cause } : {}),
            history: this.history,
          };
        }
        this.#emit({
          type: 'StateExited',
          state: name,
          stateType: state.Type,
          output: outcome.output,
          ...(outcome.kind === 'next' ? { next: outcome.next } : {}),
        });
        if (outcome.kind === 'end') {
          this.#emit({ type: 'ExecutionSucceeded', output: outcome.output });
          return { status: 'SUCCEEDED', output: outcome.output, history: this.history };
        }
        name = outcome.next;
        input = outcome.output;
      }
    } catch (err) {
      if (err instanceof ExecutionTimedOut) {
        const cause = `the execution ran longer than its TimeoutSeconds (${definition.TimeoutSeconds})`;
        this.#emit({ type: 'ExecutionTimedOut', state: name, error: 'States.Timeout', cause });
        return { status: 'TIMED_OUT', error: 'States.Timeout', cause, history: this.history };
      }
      if (err instanceof ExecutionAborted) {
        this.#emit({ type: 'ExecutionAborted', state: name });
        return { status: 'ABORTED', error: 'States.Aborted', cause: 'the execution was stopped', history: this.history };
      }
      if (err instanceof WorkflowError) {
        this.#emit({ type: 'ExecutionFailed', state: name, error: err.error, cause: err.causeText });
        return { status: 'FAILED', error: err.error, cause: err.causeText, history: this.history };
      }
      throw err;
    }
  }

  #flow(state: State, output: unknown): StepOutcome {
    return state.End === true ? { kind: 'end', output } : { kind: 'next', output, next: state.Next! };
  }

  async #step(name: string, state: State, raw: unknown): Promise<StepOutcome> {
    switch (state.Type) {
      case 'Pass': {
        const effective = selectPath(raw, state.InputPath, 'InputPath');
        const params = state.Parameters !== undefined ? applyTemplate(state.Parameters, this.#roots(effective)) : effective;
        const result = 'Result' in state ? state.Result : params;
        return this.#flow(state, selectPath(placeResult(raw, state.ResultPath, result), state.OutputPath, 'OutputPath'));
      }
      case 'Wait': {
        const effective = selectPath(raw, state.InputPath, 'InputPath');
        await this.#pause(this.#waitMs(state, effective));
        return this.#flow(state, selectPath(effective, state.OutputPath, 'OutputPath'));
      }
      case 'Choice': {
        const effective = selectPath(raw, state.InputPath, 'InputPath');
        const next = chooseNext(state, this.#roots(effective));
        return { kind: 'next', output: selectPath(effective, state.OutputPath, 'OutputPath'), next };
      }
      case 'Succeed':
        return { kind: 'end', output: selectPath(selectPath(raw, state.InputPath, 'InputPath'), state.OutputPath, 'OutputPath') };
      case 'Fail':
        return { kind: 'fail', error: state.Error, cause: state.Cause };
      case 'Task':
        return this.#task(name, state, raw);
    }
  }

  #waitMs(state: State, input: unknown): number {
    if (state.Seconds !== undefined) return state.Seconds * 1000;
    const fromPath = (path: string) => {
      const read = readPath(path, this.#roots(input));
      if (!read.found) throw new WorkflowError('States.Runtime', `Invalid path '${path}': it names no value in the state input`);
      return read.value;
    };
    if (state.SecondsPath !== undefined) {
      const seconds = fromPath(state.SecondsPath);
      if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds < 0)
        throw new WorkflowError('States.Runtime', `SecondsPath '${state.SecondsPath}' must name a non-negative number`);
      return seconds * 1000;
    }
    const stamp = state.Timestamp ?? fromPath(state.TimestampPath!);
    const at = typeof stamp === 'string' ? Date.parse(stamp) : NaN;
    if (Number.isNaN(at)) throw new WorkflowError('States.Runtime', `TimestampPath '${state.TimestampPath}' must name an RFC 3339 timestamp`);
    return Math.max(0, at - this.#o.now().getTime());
  }

  async #task(name: string, state: State, raw: unknown): Promise<StepOutcome> {
    const fn = taskFunctionName(state.Resource ?? '') ?? state.Resource ?? '';
    const effective = selectPath(raw, state.InputPath, 'InputPath');
    const retriers = state.Retry ?? [];
    const retries = retriers.map(() => 0);
    for (let attempt = 1; ; attempt++) {
      try {
        const params = state.Parameters !== undefined ? applyTemplate(state.Parameters, this.#roots(effective)) : effective;
        this.#emit({ type: 'TaskScheduled', state: name, function: fn, input: params, attempt });
        const result = await this.#invoke(name, state, fn, params, attempt);
        if (!result.ok) {
          this.#emit({
            type: result.error === 'States.Timeout' ? 'TaskTimedOut' : 'TaskFailed',
            state: name,
            function: fn,
            attempt,
            error: result.error,
            cause: result.cause,
          });
          throw new WorkflowError(result.error, result.cause);
        }
        this.#emit({ type: 'TaskSucceeded', state: name, function: fn, output: result.output, attempt });
        const selected = state.ResultSelector !== undefined ? applyTemplate(state.ResultSelector, this.#roots(result.output)) : result.output;
        return this.#flow(state, selectPath(placeResult(raw, state.ResultPath, selected), state.OutputPath, 'OutputPath'));
      } catch (err) {
        if (!(err instanceof WorkflowError) || err.error === 'States.Runtime') throw err;
        // Only the first retrier naming the error counts, even when it has no attempts left (ASL).
        const index = retriers.findIndex((r) => errorMatches(r.ErrorEquals, err.error));
        const retrier = retriers[index];
        if (retrier && retries[index]! < (retrier.MaxAttempts ?? DEFAULT_MAX_ATTEMPTS)) {
          retries[index]!++;
          const delaySeconds = retryDelaySeconds(retrier, retries[index]!);
          this.#emit({ type: 'TaskRetryScheduled', state: name, error: err.error, attempt: retries[index]!, delaySeconds });
          this.#context.State = { ...this.#context.State, RetryCount: attempt };
          await this.#pause(delaySeconds * 1000);
          continue;
        }
        const catcher = (state.Catch ?? []).find((c) => errorMatches(c.ErrorEquals, err.error));
        if (!catcher) throw err;
        const output = placeResult(raw, catcher.ResultPath, { Error: err.error, Cause: err.causeText });
        this.#emit({ type: 'ErrorCaught', state: name, error: err.error, cause: err.causeText, next: catcher.Next });
        return { kind: 'next', output, next: catcher.Next };
      }
    }
  }

  async #invoke(name: string, state: State, fn: string, input: unknown, attempt: number): Promise<TaskResult> {
    const remaining = this.#deadline !== undefined ? Math.max(0, this.#deadline - this.#o.now().getTime()) : undefined;
    const own = state.TimeoutSeconds !== undefined ? state.TimeoutSeconds * 1000 : undefined;
    const timeoutMs = own === undefined ? remaining : remaining === undefined ? own : Math.min(own, remaining);
    const result = await this.#o.runTask({
      function: fn,
      input,
      state: name,
      attempt,
      signal: this.#signal,
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    });
    // A task cut short by the execution's own deadline ends the execution, not just the task.
    this.#checkpoint();
    return result;
  }
}

/** Runs one execution to its end; resolves with its status, output or error, and history (it rejects only on a bug). */
export function execute(options: ExecuteOptions): Promise<ExecutionResult> {
  return new Execution(options).run();
}
