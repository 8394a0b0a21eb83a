// Unit tests of the workflow CLI's renderings: the executions table, one execution with its history, and describe workflow.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { validateObject } from '../core/api/validate.js';
import { workflowKind } from '../core/api/workflow.js';
import type { WorkflowExecution, WorkflowExecutionSummary } from '../core/api/workflow-execution.js';
import { renderObject } from './describe.js';
import { eventDetail, renderExecution } from './workflow.js';
import { executionsTable, formatDuration } from './workflow-describe.js';

const now = new Date('2024-01-01T00:10:00Z');

const summaries: WorkflowExecutionSummary[] = [
  {
    apiVersion: 'minik8s.io/v1',
    kind: 'WorkflowExecution',
    metadata: { name: '20240101-000900-bbbbbb', namespace: 'default', creationTimestamp: '2024-01-01T00:09:00.000Z' },
    workflow: 'orders',
    status: 'RUNNING',
    startTime: '2024-01-01T00:09:00.000Z',
    events: 3,
  },
  {
    apiVersion: 'minik8s.io/v1',
    kind: 'WorkflowExecution',
    metadata: { name: '20240101-000000-aaaaaa', namespace: 'default', creationTimestamp: '2024-01-01T00:00:00.000Z' },
    workflow: 'orders',
    status: 'FAILED',
    startTime: '2024-01-01T00:00:00.000Z',
    stopTime: '2024-01-01T00:00:01.250Z',
    error: 'ValueError',
    events: 7,
  },
];

describe('workflow CLI', () => {
  it('executions: NAME STATUS DURATION ERROR AGE, newest first as served', () => {
    assert.equal(
      executionsTable(summaries, now),
      [
        'NAME                     STATUS    DURATION   ERROR        AGE',
        '20240101-000900-bbbbbb   RUNNING   1m+        <none>       60s',
        '20240101-000000-aaaaaa   FAILED    1.3s       ValueError   10m',
        '',
      ].join('\n'),
    );
    assert.match(executionsTable(summaries, now, { wide: true, noHeaders: true }), /^20240101-000900-bbbbbb .* 2024-01-01T00:09:00.000Z +<none> +3\n/);
  });

  it('durations read like ages', () => {
    assert.deepEqual([850, 1250, 59_000, 64_000, 3_600_000, 7_500_000].map(formatDuration), ['850ms', '1.3s', '59s', '1m4s', '1h', '2h5m']);
  });

  it('one execution: its fields, then each history event with its state, time since start and what it says', () => {
    const e: WorkflowExecution = {
      apiVersion: 'minik8s.io/v1',
      kind: 'WorkflowExecution',
      metadata: { name: 'x1', namespace: 'default', creationTimestamp: '2024-01-01T00:00:00.000Z' },
      workflow: 'orders',
      status: 'SUCCEEDED',
      startTime: '2024-01-01T00:00:00.000Z',
      stopTime: '2024-01-01T00:00:02.000Z',
      input: { amount: 500 },
      output: { ok: true },
      history: [
        { id: 1, timestamp: '2024-01-01T00:00:00.000Z', type: 'ExecutionStarted', input: { amount: 500 } },
        { id: 2, timestamp: '2024-01-01T00:00:00.010Z', type: 'TaskScheduled', state: 'Big', function: 'approve', attempt: 1, input: { amount: 500 } },
        { id: 3, timestamp: '2024-01-01T00:00:00.500Z', type: 'TaskFailed', state: 'Big', error: 'ValueError', cause: 'ValueError: no' },
        { id: 4, timestamp: '2024-01-01T00:00:00.500Z', type: 'TaskRetryScheduled', state: 'Big', error: 'ValueError', attempt: 1, delaySeconds: 1 },
        { id: 5, timestamp: '2024-01-01T00:00:02.000Z', type: 'StateExited', state: 'Big', output: { ok: true }, next: 'Done' },
      ],
    };
    const text = renderExecution(e, now);
    assert.match(text, /^Name: +x1\nNamespace: +default\nWorkflow: +orders\nStatus: +SUCCEEDED\n/);
    assert.match(text, /Duration: +2s\n/);
    assert.match(text, /Input: +\{"amount":500\}\nOutput: +\{"ok":true\}\n/);
    assert.match(text, /History:\n {2}ID +TYPE +STATE +ELAPSED +DETAIL\n {2}1 +ExecutionStarted +\+0ms +\{"amount":500\}\n/);
    assert.match(text, / {2}2 +TaskScheduled +Big +\+10ms +approve \(attempt 1\) \{"amount":500\}\n/);
    assert.match(text, / {2}3 +TaskFailed +Big +\+500ms +ValueError: ValueError: no\n/);
    assert.match(text, / {2}4 +TaskRetryScheduled +Big +\+500ms +retry 1 in 1s after ValueError\n/);
    assert.match(text, / {2}5 +StateExited +Big +\+2s +\{"ok":true\} -> Done\n$/);
    assert.equal(eventDetail({ id: 1, timestamp: '', type: 'ErrorCaught', error: 'States.Timeout', next: 'Late' }), 'States.Timeout -> Late');
  });

  it('describe workflow: start, states with where they go, and the latest executions', () => {
    const wf = validateObject(workflowKind, {
      apiVersion: 'minik8s.io/v1',
      kind: 'Workflow',
      metadata: { name: 'orders', namespace: 'default', creationTimestamp: '2024-01-01T00:00:00Z' },
      spec: {
        definition: {
          Comment: 'orders by size',
          StartAt: 'Check',
          TimeoutSeconds: 60,
          States: {
            Check: { Type: 'Choice', Choices: [{ Variable: '$.amount', NumericGreaterThan: 100, Next: 'Big' }], Default: 'Small' },
            Big: {
              Type: 'Task',
              Resource: 'function:approve',
              TimeoutSeconds: 5,
              Retry: [{ ErrorEquals: ['States.ALL'], MaxAttempts: 2 }],
              Catch: [{ ErrorEquals: ['States.ALL'], Next: 'Failed' }],
              End: true,
            },
            Small: { Type: 'Wait', Seconds: 1, End: true },
            Failed: { Type: 'Fail', Error: 'Rejected' },
          },
        },
      },
    });
    const text = renderObject(workflowKind, wf, { workflowExecutions: summaries, now });
    assert.match(text, /^Name: +orders\nNamespace: +default\n/);
    assert.match(text, /Comment: +orders by size\nStart At: +Check\nTimeout: +60s\nStates:\n/);
    assert.match(text, / {2}Check +Choice +Big, default Small +1 rule\(s\)\n/);
    assert.match(text, / {2}Big +Task +\(end\), catch States.ALL Failed +function:approve, timeout 5s, retry States.ALL x2\n/);
    assert.match(text, / {2}Small +Wait +\(end\) +1s\n/);
    assert.match(text, / {2}Failed +Fail +\(fail\) +Rejected\n/);
    assert.match(text, /Executions \(latest 2 of 2\):\n {2}NAME +STATUS/);
    assert.match(renderObject(workflowKind, wf, { workflowExecutions: [], now }), /Executions: +<none>\n/);
  });
});
