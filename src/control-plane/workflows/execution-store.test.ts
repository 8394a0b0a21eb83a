// Unit tests of execution records: the per-workflow bound, size bounds, lists newest first, removal with the workflow, and stale RUNNING records after a restart.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { NotFoundError } from '../../core/errors.js';
import { MemoryStore } from '../../core/store/memory-store.js';
import { planCleanup } from './execution-cleanup.js';
import type { WorkflowExecution } from '../../core/api/workflow-execution.js';
import { boundedRecord, boundedValue, ExecutionStore, executionsToPrune, MAX_VALUE_BYTES } from './execution-store.js';

function record(name: string, options: Partial<WorkflowExecution> = {}): WorkflowExecution {
  const startTime = options.startTime ?? `2024-01-01T00:00:${name.padStart(2, '0').slice(-2)}.000Z`;
  return {
    apiVersion: 'minik8s.io/v1',
    kind: 'WorkflowExecution',
    metadata: { name, namespace: 'default', creationTimestamp: startTime },
    workflow: 'wf',
    workflowUid: 'uid-1',
    status: 'RUNNING',
    startTime,
    input: { n: 1 },
    history: [],
    ...options,
  };
}

describe('execution records: pure bounds', () => {
  it('keeps at most the limit, dropping the oldest that is not running here', () => {
    assert.deepEqual(executionsToPrune(['03', '01', '02'], 5, new Set()), []);
    assert.deepEqual(executionsToPrune(['03', '01', '02', '04'], 2, new Set()), ['01', '02']);
    assert.deepEqual(executionsToPrune(['03', '01', '02', '04'], 2, new Set(['01'])), ['02', '03']);
  });

  it('large values become previews; a large history loses payloads first, then its oldest events', () => {
    assert.deepEqual(boundedValue({ a: 1 }), { a: 1 });
    const big = 'x'.repeat(MAX_VALUE_BYTES + 10);
    const cut = boundedValue(big) as { truncated: boolean; bytes: number; preview: string };
    assert.equal(cut.truncated, true);
    assert.equal(cut.bytes, MAX_VALUE_BYTES + 12);
    assert.equal(cut.preview.length, 1024);

    const history = Array.from({ length: 200 }, (_, i) => ({
      id: i + 1,
      timestamp: '2024-01-01T00:00:00.000Z',
      type: 'StateEntered' as const,
      state: 'S',
      input: 'y'.repeat(1000),
    }));
    const r = boundedRecord(record('01', { history, output: 'done' }), 100_000);
    assert.ok(JSON.stringify(r).length <= 100_000);
    assert.equal(r.history.at(-1)!.id, 200, 'the newest events stay');
    assert.equal(r.history.at(-1)!.input, 'y'.repeat(1000), 'with their payloads');
    assert.equal(r.output, 'done');
    const tiny = boundedRecord(record('01', { history }), 5000);
    assert.ok(tiny.historyDropped! > 0);
    assert.equal(tiny.historyDropped! + tiny.history.length, 200);
  });

  it('cleanup: a gone workflow loses all its records; an existing one those of other incarnations', () => {
    assert.deepEqual(planCleanup(undefined), { type: 'remove-all' });
    assert.deepEqual(planCleanup({ apiVersion: 'minik8s.io/v1', kind: 'Workflow', metadata: { name: 'wf', uid: 'u2' } }), {
      type: 'remove-others',
      keepUid: 'u2',
    });
  });
});

describe('ExecutionStore', () => {
  it('begins, saves, lists newest first without history, and gets one with it', async () => {
    const executions = new ExecutionStore({ store: new MemoryStore(), limit: 10 });
    await executions.begin(record('01'));
    await executions.begin(record('02'));
    await executions.save(
      {
        ...record('01'),
        status: 'SUCCEEDED',
        stopTime: '2024-01-01T00:00:05.000Z',
        output: 2,
        history: [{ id: 1, timestamp: '2024-01-01T00:00:01.000Z', type: 'ExecutionStarted' }],
      },
      { final: true },
    );
    const list = await executions.list('default', 'wf');
    assert.deepEqual(
      list.map((e) => [e.metadata.name, e.status, e.events]),
      [
        ['02', 'RUNNING', 0],
        ['01', 'SUCCEEDED', 1],
      ],
    );
    assert.ok(!('history' in list[0]!));
    const one = await executions.get('default', 'wf', '01');
    assert.equal(one.output, 2);
    assert.equal(one.history.length, 1);
    await assert.rejects(executions.get('default', 'wf', 'nope'), NotFoundError);
  });

  it('keeps the last `limit` executions per workflow, across a restart of the store object', async () => {
    const store = new MemoryStore();
    const first = new ExecutionStore({ store, limit: 3 });
    for (const n of ['01', '02', '03']) {
      await first.begin(record(n));
      await first.save({ ...record(n), status: 'SUCCEEDED' }, { final: true });
    }
    const second = new ExecutionStore({ store, limit: 3 });
    await second.begin(record('04'));
    await second.begin(record('05', { workflow: 'other' }));
    assert.deepEqual(
      (await second.list('default', 'wf')).map((e) => e.metadata.name),
      ['04', '03', '02'],
    );
    assert.deepEqual(
      (await second.list('default', 'other')).map((e) => e.metadata.name),
      ['05'],
    );
  });

  it("removes a workflow's records, or only those of another uid", async () => {
    const executions = new ExecutionStore({ store: new MemoryStore() });
    await executions.begin(record('01', { workflowUid: 'old' }));
    await executions.begin(record('02', { workflowUid: 'new' }));
    assert.deepEqual([...(await executions.storedWorkflows())], ['default/wf']);
    assert.equal(await executions.removeWorkflow('default', 'wf', { keepUid: 'new' }), 1);
    assert.deepEqual(
      (await executions.list('default', 'wf')).map((e) => e.metadata.name),
      ['02'],
    );
    assert.equal(await executions.removeWorkflow('default', 'wf'), 1);
    assert.deepEqual(await executions.list('default', 'wf'), []);
    // A running execution whose workflow went meanwhile: its last save does not bring the record back.
    await executions.save({ ...record('02'), status: 'SUCCEEDED' }, { final: true });
    assert.deepEqual(await executions.list('default', 'wf'), []);
  });

  it('marks executions an earlier master left RUNNING as ABORTED, not the ones running now', async () => {
    const store = new MemoryStore();
    await new ExecutionStore({ store }).begin(record('01'));
    const now = new ExecutionStore({ store });
    await now.begin(record('02'));
    assert.equal(await now.abortStale(new Date('2024-01-02T00:00:00Z')), 1);
    const stale = await now.get('default', 'wf', '01');
    assert.deepEqual(
      [stale.status, stale.error, stale.stopTime, stale.history.at(-1)?.type],
      ['ABORTED', 'States.Aborted', '2024-01-02T00:00:00.000Z', 'ExecutionAborted'],
    );
    assert.equal((await now.get('default', 'wf', '02')).status, 'RUNNING');
  });
});
