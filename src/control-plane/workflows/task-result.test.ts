// Unit tests of how a function's HTTP answer becomes a Task's output or ASL error.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { taskResultFromResponse } from './task-result.js';

describe('taskResultFromResponse', () => {
  const table: [string, number, string, unknown][] = [
    ['JSON output', 200, '{"a":1}', { ok: true, output: { a: 1 } }],
    ['an empty body is null', 200, '', { ok: true, output: null }],
    ['text that is not JSON stays text', 200, 'hello', { ok: true, output: 'hello' }],
    [
      'a handler that raised: its exception type is the error name',
      500,
      '{"error":"ValueError: bad order","traceback":"Traceback ..."}',
      { ok: false, error: 'ValueError', cause: 'ValueError: bad order' },
    ],
    [
      'dotted exception types',
      500,
      '{"error":"requests.exceptions.HTTPError: 404","traceback":""}',
      { ok: false, error: 'requests.exceptions.HTTPError', cause: 'requests.exceptions.HTTPError: 404' },
    ],
    [
      "the function's timeout",
      504,
      '{"message":"the function did not answer within 60 s"}',
      { ok: false, error: 'States.Timeout', cause: 'the function did not answer within 60 s' },
    ],
    [
      'no such function',
      404,
      '{"kind":"Status","message":"function \\"x\\" not found"}',
      { ok: false, error: 'States.TaskFailed', cause: 'HTTP 404: function "x" not found' },
    ],
    ['no pod in time', 503, 'busy', { ok: false, error: 'States.TaskFailed', cause: 'HTTP 503: busy' }],
  ];
  for (const [what, status, body, want] of table) {
    it(what, () => assert.deepEqual(taskResultFromResponse(status, Buffer.from(body)), want));
  }
});
