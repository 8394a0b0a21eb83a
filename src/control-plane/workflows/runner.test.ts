// Unit tests of the WorkflowRunner on a memory store with a stub FunctionInvoker: calls go out as JSON with trigger workflow, records are kept, failures and timeouts map to ASL errors.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { functionKind } from '../../core/api/function.js';
import { workflowKind } from '../../core/api/workflow.js';
import { InvalidError, NotFoundError } from '../../core/errors.js';
import { MemoryStore } from '../../core/store/memory-store.js';
import type { FunctionInvoker, InvokeRequest, InvokeResult } from '../activator/invoker.js';
import { LocalClient } from '../api-server/local-client.js';
import { ObjectService } from '../api-server/object-service.js';
import { ensureSystemNamespaces } from '../api-server/server.js';
import { ExecutionStore } from './execution-store.js';
import { executionName, WorkflowRunner } from './runner.js';

/** Answers by function name; records every call. */
class StubInvoker implements FunctionInvoker {
  readonly calls: InvokeRequest[] = [];
  constructor(private readonly answers: Record<string, (body: unknown, req: InvokeRequest) => Promise<[number, unknown]> | [number, unknown]>) {}

  async invoke(req: InvokeRequest): Promise<InvokeResult> {
    this.calls.push(req);
    const body = JSON.parse((req.body as Buffer).toString('utf8')) as unknown;
    const answer = this.answers[req.name];
    const [status, out] = answer ? await answer(body, req) : [404, { message: `function "${req.name}" not found` }];
    return { status, headers: {}, body: Buffer.from(JSON.stringify(out)), invocationId: `inv-${this.calls.length}` };
  }
}

const definition = {
  StartAt: 'Check',
  States: {
    Check: { Type: 'Choice', Choices: [{ Variable: '$.amount', NumericGreaterThan: 100, Next: 'Big' }], Default: 'Small' },
    Big: { Type: 'Task', Resource: 'function:approve', ResultPath: '$.approval', End: true },
    Small: { Type: 'Pass', Result: 'auto-approved', ResultPath: '$.approval', End: true },
  },
};

async function setup(answers: ConstructorParameters<typeof StubInvoker>[0], def: unknown = definition) {
  const store = new MemoryStore();
  const service = new ObjectService({ store });
  await ensureSystemNamespaces(service);
  await service.create(functionKind, 'default', {
    metadata: { name: 'approve' },
    spec: { code: { files: { 'handler.py': 'def handler(event, context):\n    return event\n' } } },
  });
  await service.create(workflowKind, 'default', { metadata: { name: 'orders' }, spec: { definition: def } });
  const invoker = new StubInvoker(answers);
  const executions = new ExecutionStore({ store });
  const runner = new WorkflowRunner({ client: new LocalClient(service), invoker, executions, sleep: async () => {} });
  return { service, invoker, executions, runner };
}

describe('WorkflowRunner', () => {
  it('takes different branches for two inputs, calling functions as JSON with trigger workflow, and records both', async () => {
    const { runner, invoker, executions } = await setup({ approve: (body) => [200, { approvedBy: 'fn', amount: (body as { amount: number }).amount }] });
    const big = await runner.run({ namespace: 'default', name: 'orders', input: { amount: 500 } });
    assert.equal(big.status, 'SUCCEEDED');
    assert.deepEqual(big.output, { amount: 500, approval: { approvedBy: 'fn', amount: 500 } });
    assert.deepEqual(
      invoker.calls.map((c) => [c.namespace, c.name, c.trigger, c.method, c.headers?.['content-type']]),
      [['default', 'approve', 'workflow', 'POST', 'application/json']],
    );
    const small = await runner.run({ namespace: 'default', name: 'orders', input: { amount: 5 } });
    assert.deepEqual(small.output, { amount: 5, approval: 'auto-approved' });
    assert.equal(invoker.calls.length, 1, 'the small order calls no function');

    const list = await executions.list('default', 'orders');
    assert.deepEqual(
      list.map((e) => e.status),
      ['SUCCEEDED', 'SUCCEEDED'],
    );
    const record = await executions.get('default', 'orders', big.executionName);
    assert.deepEqual(record.input, { amount: 500 });
    assert.ok(record.stopTime);
    assert.deepEqual(
      record.history.map((e) => e.type),
      ['ExecutionStarted', 'StateEntered', 'StateExited', 'StateEntered', 'TaskScheduled', 'TaskSucceeded', 'StateExited', 'ExecutionSucceeded'],
    );
  });

  it('a handler that raised fails the execution with its error type; the record keeps the cause', async () => {
    const { runner, executions } = await setup({ approve: () => [500, { error: 'ValueError: amount too large', traceback: 'Traceback...' }] });
    const r = await runner.run({ namespace: 'default', name: 'orders', input: { amount: 1000 } });
    assert.deepEqual([r.status, r.error, r.cause], ['FAILED', 'ValueError', 'ValueError: amount too large']);
    const record = await executions.get('default', 'orders', r.executionName);
    assert.deepEqual([record.status, record.error], ['FAILED', 'ValueError']);
    assert.equal(record.history.find((e) => e.type === 'TaskFailed')?.cause, 'ValueError: amount too large');
  });

  it('a task past its TimeoutSeconds is aborted and fails with States.Timeout', async () => {
    const hang = (_body: unknown, req: InvokeRequest) =>
      new Promise<[number, unknown]>((resolve) => req.signal!.addEventListener('abort', () => resolve([499, {}])));
    const { runner } = await setup(
      { approve: hang },
      {
        StartAt: 'T',
        States: { T: { Type: 'Task', Resource: 'approve', TimeoutSeconds: 1, End: true } },
      },
    );
    const r = await runner.run({ namespace: 'default', name: 'orders', input: {} });
    assert.deepEqual([r.status, r.error], ['FAILED', 'States.Timeout']);
  });

  it('a string input reaches the function as a JSON string', async () => {
    const { runner, invoker } = await setup(
      { approve: (body) => [200, body] },
      { StartAt: 'T', States: { T: { Type: 'Task', Resource: 'approve', End: true } } },
    );
    const r = await runner.run({ namespace: 'default', name: 'orders', input: 'hello' });
    assert.equal(r.output, 'hello');
    assert.equal((invoker.calls[0]!.body as Buffer).toString(), '"hello"');
  });

  it('no such workflow: NotFoundError; a Task naming a missing function is refused when applied (422 with its path)', async () => {
    const { runner, service } = await setup({});
    await assert.rejects(runner.run({ namespace: 'default', name: 'nope', input: {} }), NotFoundError);
    await assert.rejects(
      service.create(workflowKind, 'default', {
        metadata: { name: 'bad' },
        spec: { definition: { StartAt: 'T', States: { T: { Type: 'Task', Resource: 'function:missing', End: true } } } },
      }),
      (err: unknown) =>
        err instanceof InvalidError &&
        err.toStatus().details?.causes?.[0]?.field === 'spec.definition.States.T.Resource' &&
        /no function "missing" in namespace "default"/.test(err.message),
    );
    // An update to the spec is judged too; one that leaves it alone is not.
    await assert.rejects(service.patch(workflowKind, 'default', 'orders', { spec: { definition: { States: { Big: { Resource: 'gone' } } } } }), InvalidError);
    await service.delete(functionKind, 'default', 'approve');
    const labelled = await service.patch(workflowKind, 'default', 'orders', { metadata: { labels: { team: 'a' } } });
    assert.equal(labelled.metadata.labels?.team, 'a');
  });

  it('execution names sort by start time', () => {
    const a = executionName(new Date('2024-01-31T12:00:00Z'));
    const b = executionName(new Date('2024-01-31T12:00:01Z'));
    assert.match(a, /^20240131-120000-[0-9a-f]{6}$/);
    assert.ok(a < b);
  });
});
