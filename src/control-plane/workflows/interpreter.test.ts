// Unit tests of the workflow interpreter: every state type, paths, Retry with backoff, Catch, Fail and timeouts, on a fake clock and fake functions.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { WorkflowDefinition } from '../../core/api/workflow-definition.js';
import {
  applyTemplate,
  errorMatches,
  execute,
  placeResult,
  retryDelaySeconds,
  selectPath,
  type ExecuteOptions,
  type TaskRequest,
  type TaskResult,
} from './interpreter.js';
import { WorkflowError } from './workflow-error.js';

/** A fake function: an answer, or an answer after a (virtual) duration. */
type FakeFn = (input: unknown, request: TaskRequest) => TaskResult | { durationMs: number; result: TaskResult };

const T0 = Date.parse('2024-01-01T00:00:00Z');

/** A virtual clock: sleeps and task durations move it; nothing waits for real. */
function harness(fns: Record<string, FakeFn> = {}) {
  let t = T0;
  const sleeps: number[] = [];
  const calls: TaskRequest[] = [];
  const options = {
    now: () => new Date(t),
    sleep: async (ms: number) => {
      sleeps.push(ms);
      t += ms;
    },
    runTask: async (req: TaskRequest): Promise<TaskResult> => {
      calls.push(req);
      const fn = fns[req.function];
      if (!fn) return { ok: false, error: 'States.TaskFailed', cause: `HTTP 404: function ${req.function} not found` };
      const r = fn(req.input, req);
      if (!('durationMs' in r)) return r;
      if (req.timeoutMs !== undefined && r.durationMs > req.timeoutMs) {
        t += req.timeoutMs;
        return { ok: false, error: 'States.Timeout', cause: 'the function did not answer in time' };
      }
      t += r.durationMs;
      return r.result;
    },
  };
  return { options, sleeps, calls, elapsed: () => t - T0 };
}

function run(definition: WorkflowDefinition, input: unknown, fns: Record<string, FakeFn> = {}, extra: Partial<ExecuteOptions> = {}) {
  const h = harness(fns);
  const done = execute({ definition, input, ...h.options, executionName: 'e1', workflowName: 'wf', ...extra });
  return done.then((result) => ({ ...result, ...h, types: result.history.map((e) => e.type) }));
}

const ok = (output: unknown): TaskResult => ({ ok: true, output });
const fail = (error: string, cause = 'boom'): TaskResult => ({ ok: false, error, cause });

describe('workflow interpreter: state types', () => {
  it('Pass: Result, ResultPath into the input, OutputPath', async () => {
    const r = await run(
      {
        StartAt: 'P',
        States: { P: { Type: 'Pass', Result: { x: 1 }, ResultPath: '$.res', OutputPath: '$.res', End: true } },
      },
      { keep: true },
    );
    assert.equal(r.status, 'SUCCEEDED');
    assert.deepEqual(r.output, { x: 1 });
  });

  it('Pass without Result passes its (selected) input on; Parameters build a new one', async () => {
    const r = await run(
      {
        StartAt: 'A',
        States: {
          A: { Type: 'Pass', InputPath: '$.order', Next: 'B' },
          B: { Type: 'Pass', Parameters: { id: 7, 'item.$': '$.items[1]', 'exec.$': '$$.Execution.Name', nested: { 'n.$': '$.items[0]' } }, End: true },
        },
      },
      { order: { items: ['a', 'b'] } },
    );
    assert.deepEqual(r.output, { id: 7, item: 'b', exec: 'e1', nested: { n: 'a' } });
    assert.deepEqual(r.types, ['ExecutionStarted', 'StateEntered', 'StateExited', 'StateEntered', 'StateExited', 'ExecutionSucceeded']);
  });

  it('Task: calls the function with the state input and places its result', async () => {
    const r = await run(
      {
        StartAt: 'T',
        States: { T: { Type: 'Task', Resource: 'function:double', ResultPath: '$.doubled', End: true } },
      },
      { n: 21 },
      { double: (input) => ok((input as { n: number }).n * 2) },
    );
    assert.deepEqual(r.output, { n: 21, doubled: 42 });
    assert.deepEqual(
      r.calls.map((c) => [c.function, c.input, c.attempt]),
      [['double', { n: 21 }, 1]],
    );
    assert.deepEqual(r.types, ['ExecutionStarted', 'StateEntered', 'TaskScheduled', 'TaskSucceeded', 'StateExited', 'ExecutionSucceeded']);
  });

  it('Task: Parameters shape the call, ResultSelector the result; Resource may be a bare name or an ARN', async () => {
    const r = await run(
      {
        StartAt: 'T',
        States: {
          T: {
            Type: 'Task',
            Resource: 'arn:aws:lambda:us-east-1:123:function:echo',
            Parameters: { 'v.$': '$.a' },
            ResultSelector: { 'got.$': '$.v' },
            Next: 'U',
          },
          U: { Type: 'Task', Resource: 'echo', End: true },
        },
      },
      { a: 5 },
      { echo: (input) => ok(input) },
    );
    assert.deepEqual(
      r.calls.map((c) => c.function),
      ['echo', 'echo'],
    );
    assert.deepEqual(r.output, { got: 5 });
  });

  it('Wait: Seconds, SecondsPath, Timestamp and TimestampPath wait through the injected sleep', async () => {
    const cases: [string, Record<string, unknown>, unknown, number][] = [
      ['Seconds', { Seconds: 5 }, {}, 5000],
      ['SecondsPath', { SecondsPath: '$.s' }, { s: 3 }, 3000],
      ['Timestamp', { Timestamp: '2024-01-01T00:00:10Z' }, {}, 10_000],
      ['TimestampPath', { TimestampPath: '$.at' }, { at: '2024-01-01T00:01:00Z' }, 60_000],
      ['a Timestamp in the past', { Timestamp: '2023-01-01T00:00:00Z' }, {}, 0],
    ];
    for (const [what, fields, input, ms] of cases) {
      const r = await run({ StartAt: 'W', States: { W: { Type: 'Wait', ...fields, End: true } as never } }, input);
      assert.equal(r.status, 'SUCCEEDED', what);
      assert.deepEqual(r.output, input, what);
      assert.equal(r.elapsed(), ms, what);
    }
  });

  it('Wait: a SecondsPath naming no number fails the execution (States.Runtime)', async () => {
    const r = await run({ StartAt: 'W', States: { W: { Type: 'Wait', SecondsPath: '$.s', End: true } } }, { s: 'soon' });
    assert.equal(r.status, 'FAILED');
    assert.equal(r.error, 'States.Runtime');
  });

  it('Succeed ends with its (selected) input; Fail ends FAILED with Error and Cause', async () => {
    const s = await run({ StartAt: 'S', States: { S: { Type: 'Succeed', InputPath: '$.a', OutputPath: '$.b' } } }, { a: { b: 'done' } });
    assert.deepEqual([s.status, s.output], ['SUCCEEDED', 'done']);
    const f = await run({ StartAt: 'F', States: { F: { Type: 'Fail', Error: 'OrderRejected', Cause: 'too big' } } }, {});
    assert.deepEqual([f.status, f.error, f.cause], ['FAILED', 'OrderRejected', 'too big']);
    assert.equal(f.types.at(-1), 'ExecutionFailed');
  });

  it('Choice: takes the first rule that holds, else Default; output is its input', async () => {
    const def: WorkflowDefinition = {
      StartAt: 'C',
      States: {
        C: {
          Type: 'Choice',
          Choices: [
            { Variable: '$.amount', NumericGreaterThan: 100, Next: 'Big' },
            { Variable: '$.amount', NumericGreaterThan: 10, Next: 'Medium' },
          ],
          Default: 'Small',
        },
        Big: { Type: 'Pass', Result: 'big', End: true },
        Medium: { Type: 'Pass', Result: 'medium', End: true },
        Small: { Type: 'Pass', Result: 'small', End: true },
      },
    };
    for (const [amount, want] of [
      [500, 'big'],
      [50, 'medium'],
      [5, 'small'],
    ] as const) {
      const r = await run(def, { amount });
      assert.equal(r.output, want, String(amount));
      assert.equal(r.history.find((e) => e.type === 'StateExited' && e.state === 'C')?.next, want[0]!.toUpperCase() + want.slice(1));
    }
  });

  it('Choice: no rule holding and no Default fails with States.NoChoiceMatched', async () => {
    const r = await run(
      {
        StartAt: 'C',
        States: { C: { Type: 'Choice', Choices: [{ Variable: '$.x', StringEquals: 'a', Next: 'A' }] }, A: { Type: 'Succeed' } },
      },
      { x: 'b' },
    );
    assert.deepEqual([r.status, r.error], ['FAILED', 'States.NoChoiceMatched']);
  });
});

describe('workflow interpreter: Choice operators', () => {
  const input = {
    s: 'banana',
    n: 10,
    b: true,
    nul: null,
    ts: '2024-01-01T12:00:00Z',
    other: { s: 'banana', n: 10, b: true, ts: '2024-01-01T12:00:00Z', low: 'apple', big: 20 },
  };
  const cases: [Record<string, unknown>, boolean][] = [
    [{ Variable: '$.s', StringEquals: 'banana' }, true],
    [{ Variable: '$.s', StringEquals: 'apple' }, false],
    [{ Variable: '$.n', StringEquals: '10' }, false],
    [{ Variable: '$.s', StringLessThan: 'cherry' }, true],
    [{ Variable: '$.s', StringLessThan: 'banana' }, false],
    [{ Variable: '$.s', StringLessThanEquals: 'banana' }, true],
    [{ Variable: '$.s', StringGreaterThan: 'apple' }, true],
    [{ Variable: '$.s', StringGreaterThan: 'banana' }, false],
    [{ Variable: '$.s', StringGreaterThanEquals: 'banana' }, true],
    [{ Variable: '$.s', StringMatches: 'ban*' }, true],
    [{ Variable: '$.s', StringMatches: '*nan?' }, false],
    [{ Variable: '$.s', StringEqualsPath: '$.other.s' }, true],
    [{ Variable: '$.s', StringGreaterThanPath: '$.other.low' }, true],
    [{ Variable: '$.s', StringLessThanPath: '$.other.low' }, false],
    [{ Variable: '$.s', StringLessThanEqualsPath: '$.other.s' }, true],
    [{ Variable: '$.s', StringGreaterThanEqualsPath: '$.other.s' }, true],
    [{ Variable: '$.n', NumericEquals: 10 }, true],
    [{ Variable: '$.n', NumericEquals: 11 }, false],
    [{ Variable: '$.s', NumericEquals: 10 }, false],
    [{ Variable: '$.n', NumericLessThan: 11 }, true],
    [{ Variable: '$.n', NumericLessThan: 10 }, false],
    [{ Variable: '$.n', NumericLessThanEquals: 10 }, true],
    [{ Variable: '$.n', NumericGreaterThan: 9.5 }, true],
    [{ Variable: '$.n', NumericGreaterThan: 10 }, false],
    [{ Variable: '$.n', NumericGreaterThanEquals: 10 }, true],
    [{ Variable: '$.n', NumericEqualsPath: '$.other.n' }, true],
    [{ Variable: '$.n', NumericLessThanPath: '$.other.big' }, true],
    [{ Variable: '$.n', NumericGreaterThanPath: '$.other.big' }, false],
    [{ Variable: '$.n', NumericLessThanEqualsPath: '$.other.n' }, true],
    [{ Variable: '$.n', NumericGreaterThanEqualsPath: '$.other.big' }, false],
    [{ Variable: '$.b', BooleanEquals: true }, true],
    [{ Variable: '$.b', BooleanEquals: false }, false],
    [{ Variable: '$.s', BooleanEquals: true }, false],
    [{ Variable: '$.b', BooleanEqualsPath: '$.other.b' }, true],
    [{ Variable: '$.ts', TimestampEquals: '2024-01-01T13:00:00+01:00' }, true],
    [{ Variable: '$.ts', TimestampLessThan: '2024-01-02T00:00:00Z' }, true],
    [{ Variable: '$.ts', TimestampGreaterThan: '2024-01-02T00:00:00Z' }, false],
    [{ Variable: '$.ts', TimestampLessThanEquals: '2024-01-01T12:00:00Z' }, true],
    [{ Variable: '$.ts', TimestampGreaterThanEquals: '2024-01-01T12:00:00Z' }, true],
    [{ Variable: '$.ts', TimestampEqualsPath: '$.other.ts' }, true],
    [{ Variable: '$.s', TimestampEquals: '2024-01-01T12:00:00Z' }, false],
    [{ Variable: '$.s', IsPresent: true }, true],
    [{ Variable: '$.missing', IsPresent: true }, false],
    [{ Variable: '$.missing', IsPresent: false }, true],
    [{ Variable: '$.nul', IsNull: true }, true],
    [{ Variable: '$.s', IsNull: true }, false],
    [{ Variable: '$.missing', IsNull: false }, true],
    [{ Variable: '$.s', IsString: true }, true],
    [{ Variable: '$.n', IsString: true }, false],
    [{ Variable: '$.n', IsNumeric: true }, true],
    [{ Variable: '$.s', IsNumeric: false }, true],
    [{ Variable: '$.b', IsBoolean: true }, true],
    [{ Variable: '$.ts', IsTimestamp: true }, true],
    [{ Variable: '$.s', IsTimestamp: true }, false],
    [
      {
        And: [
          { Variable: '$.s', StringEquals: 'banana' },
          { Variable: '$.n', NumericEquals: 10 },
        ],
      },
      true,
    ],
    [
      {
        And: [
          { Variable: '$.s', StringEquals: 'banana' },
          { Variable: '$.n', NumericEquals: 11 },
        ],
      },
      false,
    ],
    [
      {
        Or: [
          { Variable: '$.s', StringEquals: 'apple' },
          { Variable: '$.n', NumericEquals: 10 },
        ],
      },
      true,
    ],
    [
      {
        Or: [
          { Variable: '$.s', StringEquals: 'apple' },
          { Variable: '$.n', NumericEquals: 11 },
        ],
      },
      false,
    ],
    [{ Not: { Variable: '$.s', StringEquals: 'apple' } }, true],
    [{ Not: { Variable: '$.s', StringEquals: 'banana' } }, false],
    [
      {
        Not: {
          And: [
            { Variable: '$.b', BooleanEquals: true },
            {
              Or: [
                { Variable: '$.n', NumericLessThan: 5 },
                { Variable: '$.s', StringMatches: 'b*' },
              ],
            },
          ],
        },
      },
      false,
    ],
  ];
  for (const [rule, holds] of cases) {
    it(`${JSON.stringify(rule)} ${holds ? 'holds' : 'does not hold'}`, async () => {
      const r = await run(
        {
          StartAt: 'C',
          States: {
            C: { Type: 'Choice', Choices: [{ ...rule, Next: 'Yes' }], Default: 'No' },
            Yes: { Type: 'Pass', Result: true, End: true },
            No: { Type: 'Pass', Result: false, End: true },
          },
        },
        input,
      );
      assert.equal(r.status, 'SUCCEEDED', r.cause);
      assert.equal(r.output, holds);
    });
  }

  it('a comparison on a variable that is not there fails the execution (States.Runtime), as ASL does', async () => {
    const r = await run(
      {
        StartAt: 'C',
        States: { C: { Type: 'Choice', Choices: [{ Variable: '$.missing', StringEquals: 'x', Next: 'A' }], Default: 'A' }, A: { Type: 'Succeed' } },
      },
      input,
    );
    assert.deepEqual([r.status, r.error], ['FAILED', 'States.Runtime']);
  });
});

describe('workflow interpreter: paths', () => {
  it('InputPath, ResultPath and OutputPath compose as ASL describes', async () => {
    const r = await run(
      {
        StartAt: 'T',
        States: { T: { Type: 'Task', Resource: 'sum', InputPath: '$.numbers', ResultPath: '$.total', OutputPath: '$.total', End: true } },
      },
      { numbers: [1, 2, 3], other: 'x' },
      { sum: (input) => ok((input as number[]).reduce((a, b) => a + b, 0)) },
    );
    assert.deepEqual(r.calls[0]!.input, [1, 2, 3]);
    assert.equal(r.output, 6);
  });

  it('null paths: InputPath gives {}, ResultPath keeps the input, OutputPath gives {}', async () => {
    const seen: unknown[] = [];
    const r = await run(
      {
        StartAt: 'A',
        States: {
          A: { Type: 'Task', Resource: 'f', InputPath: null, ResultPath: null, Next: 'B' },
          B: { Type: 'Pass', OutputPath: null, End: true },
        },
      },
      { a: 1 },
      {
        f: (input) => {
          seen.push(input);
          return ok('discarded');
        },
      },
    );
    assert.deepEqual(seen, [{}]);
    assert.deepEqual(r.history.find((e) => e.type === 'StateExited' && e.state === 'A')?.output, { a: 1 });
    assert.deepEqual(r.output, {});
  });

  it('a path naming nothing fails the execution: InputPath/OutputPath with States.Runtime, Parameters with States.ParameterPathFailure', async () => {
    const input = await run({ StartAt: 'P', States: { P: { Type: 'Pass', InputPath: '$.nope', End: true } } }, { a: 1 });
    assert.deepEqual([input.status, input.error], ['FAILED', 'States.Runtime']);
    const output = await run({ StartAt: 'P', States: { P: { Type: 'Pass', OutputPath: '$.nope', End: true } } }, { a: 1 });
    assert.deepEqual([output.status, output.error], ['FAILED', 'States.Runtime']);
    const params = await run({ StartAt: 'P', States: { P: { Type: 'Pass', Parameters: { 'x.$': '$.nope' }, End: true } } }, { a: 1 });
    assert.deepEqual([params.status, params.error], ['FAILED', 'States.ParameterPathFailure']);
  });

  it('ResultPath into a non-object fails with States.ResultPathMatchFailure, which Catch can handle', async () => {
    const r = await run(
      {
        StartAt: 'T',
        States: {
          T: { Type: 'Task', Resource: 'f', ResultPath: '$.r', Catch: [{ ErrorEquals: ['States.ResultPathMatchFailure'], Next: 'Handled' }], End: true },
          Handled: { Type: 'Succeed' },
        },
      },
      'a string',
      { f: () => ok(1) },
    );
    assert.deepEqual(r.output, { Error: 'States.ResultPathMatchFailure', Cause: r.history.find((e) => e.type === 'ErrorCaught')!.cause });
  });

  it('helpers: selectPath, placeResult (copying, creating objects on the way), applyTemplate', () => {
    const input = { a: { b: [1, 2] } };
    assert.equal(selectPath(input, '$.a.b[1]', 'InputPath'), 2);
    assert.deepEqual(selectPath(input, "$['a']", 'InputPath'), { b: [1, 2] });
    const placed = placeResult(input, '$.x.y', 'r');
    assert.deepEqual(placed, { a: { b: [1, 2] }, x: { y: 'r' } });
    assert.deepEqual(input, { a: { b: [1, 2] } }, 'the input is not changed');
    assert.deepEqual(placeResult(input, '$.a.b[0]', 9), { a: { b: [9, 2] } });
    assert.throws(
      () => placeResult(input, '$.a.b.c', 1),
      (e: unknown) => e instanceof WorkflowError && e.error === 'States.ResultPathMatchFailure',
    );
    assert.deepEqual(applyTemplate({ list: [{ 'v.$': '$.a.b[0]' }], 'ctx.$': '$$.k' }, { input, context: { k: 'c' } }), { list: [{ v: 1 }], ctx: 'c' });
  });
});

describe('workflow interpreter: Retry and Catch', () => {
  it('retries with IntervalSeconds × BackoffRate^n, then succeeds', async () => {
    let calls = 0;
    const r = await run(
      {
        StartAt: 'T',
        States: {
          T: { Type: 'Task', Resource: 'flaky', Retry: [{ ErrorEquals: ['States.ALL'], IntervalSeconds: 2, BackoffRate: 3, MaxAttempts: 3 }], End: true },
        },
      },
      {},
      { flaky: () => (++calls < 4 ? fail('ConnectionError') : ok('finally')) },
    );
    assert.equal(r.status, 'SUCCEEDED');
    assert.equal(r.output, 'finally');
    assert.deepEqual(r.sleeps, [2000, 6000, 18_000]);
    assert.deepEqual(
      r.calls.map((c) => c.attempt),
      [1, 2, 3, 4],
    );
    assert.deepEqual(
      r.history.filter((e) => e.type === 'TaskRetryScheduled').map((e) => e.delaySeconds),
      [2, 6, 18],
    );
  });

  it('defaults: 3 retries, 1 s doubling; MaxDelaySeconds caps; MaxAttempts 0 never retries', async () => {
    const always = { f: () => fail('E') };
    const d = await run({ StartAt: 'T', States: { T: { Type: 'Task', Resource: 'f', Retry: [{ ErrorEquals: ['E'] }], End: true } } }, {}, always);
    assert.deepEqual([d.status, d.error, d.sleeps], ['FAILED', 'E', [1000, 2000, 4000]]);
    const capped = await run(
      {
        StartAt: 'T',
        States: { T: { Type: 'Task', Resource: 'f', Retry: [{ ErrorEquals: ['E'], IntervalSeconds: 5, MaxAttempts: 4, MaxDelaySeconds: 12 }], End: true } },
      },
      {},
      always,
    );
    assert.deepEqual(capped.sleeps, [5000, 10_000, 12_000, 12_000]);
    const none = await run(
      { StartAt: 'T', States: { T: { Type: 'Task', Resource: 'f', Retry: [{ ErrorEquals: ['E'], MaxAttempts: 0 }], End: true } } },
      {},
      always,
    );
    assert.deepEqual([none.calls.length, none.sleeps], [1, []]);
    assert.equal(retryDelaySeconds({ IntervalSeconds: 3, BackoffRate: 1.5 }, 3), 6.75);
  });

  it('only the first retrier naming the error applies, even when exhausted', async () => {
    const r = await run(
      {
        StartAt: 'T',
        States: {
          T: {
            Type: 'Task',
            Resource: 'f',
            Retry: [
              { ErrorEquals: ['E'], MaxAttempts: 1 },
              { ErrorEquals: ['States.ALL'], MaxAttempts: 5 },
            ],
            End: true,
          },
        },
      },
      {},
      { f: () => fail('E') },
    );
    assert.equal(r.calls.length, 2);
    assert.equal(r.status, 'FAILED');
  });

  it('Catch: the error output {Error, Cause} goes to ResultPath and the execution goes on at Next', async () => {
    const r = await run(
      {
        StartAt: 'T',
        States: {
          T: {
            Type: 'Task',
            Resource: 'f',
            Retry: [{ ErrorEquals: ['ValueError'], MaxAttempts: 1 }],
            Catch: [
              { ErrorEquals: ['KeyError'], Next: 'No' },
              { ErrorEquals: ['ValueError'], ResultPath: '$.error', Next: 'Recover' },
            ],
            End: true,
          },
          Recover: { Type: 'Pass', End: true },
          No: { Type: 'Fail' },
        },
      },
      { order: 1 },
      { f: () => fail('ValueError', 'ValueError: bad order') },
    );
    assert.equal(r.status, 'SUCCEEDED');
    assert.deepEqual(r.output, { order: 1, error: { Error: 'ValueError', Cause: 'ValueError: bad order' } });
    assert.deepEqual(r.types, [
      'ExecutionStarted',
      'StateEntered',
      'TaskScheduled',
      'TaskFailed',
      'TaskRetryScheduled',
      'TaskScheduled',
      'TaskFailed',
      'ErrorCaught',
      'StateExited',
      'StateEntered',
      'StateExited',
      'ExecutionSucceeded',
    ]);
  });

  it("an uncaught task error fails the execution with the function's error and cause", async () => {
    const r = await run(
      { StartAt: 'T', States: { T: { Type: 'Task', Resource: 'f', End: true } } },
      {},
      { f: () => fail('ZeroDivisionError', 'ZeroDivisionError: division by zero') },
    );
    assert.deepEqual([r.status, r.error, r.cause], ['FAILED', 'ZeroDivisionError', 'ZeroDivisionError: division by zero']);
  });

  it('error names: States.ALL covers all but States.Runtime; States.TaskFailed all but States.Timeout too', () => {
    const table: [string[], string, boolean][] = [
      [['ValueError'], 'ValueError', true],
      [['KeyError'], 'ValueError', false],
      [['States.ALL'], 'ValueError', true],
      [['States.ALL'], 'States.Timeout', true],
      [['States.ALL'], 'States.Runtime', false],
      [['States.TaskFailed'], 'ValueError', true],
      [['States.TaskFailed'], 'States.TaskFailed', true],
      [['States.TaskFailed'], 'States.Timeout', false],
      [['States.Timeout'], 'States.Timeout', true],
    ];
    for (const [equals, error, want] of table) assert.equal(errorMatches(equals, error), want, `${equals} ${error}`);
  });
});

describe('workflow interpreter: timeouts and limits', () => {
  it('a Task past its TimeoutSeconds fails with States.Timeout (the call gets the limit), which Catch can handle', async () => {
    const r = await run(
      {
        StartAt: 'T',
        States: {
          T: { Type: 'Task', Resource: 'slow', TimeoutSeconds: 2, Catch: [{ ErrorEquals: ['States.Timeout'], Next: 'Late' }], End: true },
          Late: { Type: 'Pass', Result: 'late', End: true },
        },
      },
      {},
      { slow: () => ({ durationMs: 5000, result: ok('never') }) },
    );
    assert.equal(r.calls[0]!.timeoutMs, 2000);
    assert.equal(r.output, 'late');
    assert.ok(r.types.includes('TaskTimedOut'));
  });

  it("the execution's TimeoutSeconds bounds tasks and waits: TIMED_OUT", async () => {
    const wait = await run({ TimeoutSeconds: 10, StartAt: 'W', States: { W: { Type: 'Wait', Seconds: 60, End: true } } }, {});
    assert.deepEqual([wait.status, wait.error, wait.elapsed()], ['TIMED_OUT', 'States.Timeout', 10_000]);
    const task = await run(
      {
        TimeoutSeconds: 3,
        StartAt: 'T',
        States: {
          T: { Type: 'Task', Resource: 'slow', TimeoutSeconds: 60, Catch: [{ ErrorEquals: ['States.ALL'], Next: 'C' }], End: true },
          C: { Type: 'Succeed' },
        },
      },
      {},
      { slow: () => ({ durationMs: 5000, result: ok('x') }) },
    );
    assert.equal(task.calls[0]!.timeoutMs, 3000);
    assert.equal(task.status, 'TIMED_OUT', 'the execution deadline is not a task error Catch could handle');
    assert.equal(task.types.at(-1), 'ExecutionTimedOut');
  });

  it('a loop without end is stopped after maxTransitions', async () => {
    const r = await run(
      {
        StartAt: 'A',
        States: {
          A: { Type: 'Pass', Next: 'B' },
          B: { Type: 'Choice', Choices: [{ Variable: '$.stop', IsPresent: true, Next: 'End' }], Default: 'A' },
          End: { Type: 'Succeed' },
        },
      },
      {},
      {},
      { maxTransitions: 50 },
    );
    assert.deepEqual([r.status, r.error], ['FAILED', 'States.Runtime']);
  });

  it('an aborted signal ends the execution ABORTED', async () => {
    const ac = new AbortController();
    const r = await run(
      {
        StartAt: 'T',
        States: { T: { Type: 'Task', Resource: 'f', Next: 'W' }, W: { Type: 'Wait', Seconds: 1, End: true } },
      },
      {},
      {
        f: () => {
          ac.abort();
          return ok(1);
        },
      },
      { signal: ac.signal },
    );
    assert.equal(r.status, 'ABORTED');
    assert.equal(r.types.at(-1), 'ExecutionAborted');
  });

  it('history events are numbered and timed on the injected clock', async () => {
    const r = await run({ StartAt: 'W', States: { W: { Type: 'Wait', Seconds: 2, End: true } } }, {});
    assert.deepEqual(
      r.history.map((e) => e.id),
      [1, 2, 3, 4],
    );
    assert.deepEqual(
      r.history.map((e) => e.timestamp),
      ['2024-01-01T00:00:00.000Z', '2024-01-01T00:00:00.000Z', '2024-01-01T00:00:02.000Z', '2024-01-01T00:00:02.000Z'],
    );
  });
});
