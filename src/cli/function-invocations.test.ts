// `minik8s function invocations`: durations and the table.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { InvocationRecord } from '../core/api/invocation-record.js';
import { formatDurationMs, invocationsTable } from './function-invocations.js';

describe('function invocations table', () => {
  it('durations: ms, then seconds, then minutes', () => {
    assert.deepEqual([0.4, 12, 999, 1000, 1250, 59_999, 61_000, 125_400].map(formatDurationMs), ['0ms', '12ms', '999ms', '1s', '1.25s', '60s', '1m1s', '2m5s']);
  });

  it('ID, VERSION, TRIGGER, STATUS, COLD, DURATION, AGE; wide adds POD and ERROR', () => {
    const now = new Date('2026-01-01T00:01:00Z');
    const records: InvocationRecord[] = [
      {
        id: 'a1',
        namespace: 'default',
        function: 'hello',
        version: 2,
        trigger: 'http',
        start: '2026-01-01T00:00:55.500Z',
        durationMs: 12,
        coldStart: false,
        status: 200,
        pod: 'hello-v2-x',
      },
      {
        id: 'b2',
        namespace: 'default',
        function: 'hello',
        trigger: 'schedule',
        start: '2026-01-01T00:00:00Z',
        durationMs: 1250,
        coldStart: true,
        status: 503,
        error: 'function hello has no pod ready\nmore',
      },
    ];
    assert.equal(
      invocationsTable(records, now),
      [
        'ID    VERSION   TRIGGER    STATUS   COLD   DURATION   AGE',
        'a1    v2        http       200      no     12ms       4s',
        'b2    <none>    schedule   503      yes    1.25s      60s',
        '',
      ].join('\n'),
    );
    const wide = invocationsTable(records, now, { wide: true, noHeaders: true }).split('\n');
    assert.match(wide[0]!, /hello-v2-x\s+<none>$/);
    assert.match(wide[1]!, /<none>\s+function hello has no pod ready$/);
  });
});
