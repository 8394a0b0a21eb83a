// Workflows and scheduled triggers on a real master (etcd, activator, image factory) and a real worker (the host's Docker): validation when applied, a Choice taking two branches, a function's error, execution records through the CLI and a master restart, and a cron trigger's call.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Docker from 'dockerode';
import type { FunctionObject } from '../src/core/api/function.js';
import type { InvocationRecord } from '../src/core/api/invocation-record.js';
import type { WorkflowExecutionSummary } from '../src/core/api/workflow-execution.js';
import type { Status } from '../src/core/errors.js';
import { waitFor } from '../src/core/wait-for.js';
import { BINARY, startMaster, type MasterProcess } from './helpers/master.js';
import { startWorker, type WorkerProcess } from './helpers/worker.js';

const docker = new Docker();
const dockerAvailable = await docker.ping().then(
  () => true,
  () => false,
);
const EXAMPLE = new URL('../../examples/workflow-choice.yaml', import.meta.url).pathname;

/** What the HTTP trigger answers: the workflow's output, or for a failed execution its error, cause and name. */
type TriggerAnswer = Record<string, unknown> & { error?: string; cause?: string; execution?: string };

describe('workflows and scheduled triggers (real master and worker)', { skip: dockerAvailable ? false : 'no Docker engine' }, () => {
  let master: MasterProcess;
  let worker: WorkerProcess;
  const dir = mkdtempSync(join(tmpdir(), 'minik8s-wf-e2e-'));

  const cli = (...args: string[]) =>
    new Promise<{ status: number; stdout: string; stderr: string }>((resolve) => {
      execFile(process.execPath, [BINARY, ...args], { env: master.env, encoding: 'utf8', timeout: 300_000 }, (err, stdout, stderr) => {
        resolve({ status: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      });
    });
  const ok = async (...args: string[]) => {
    const r = await cli(...args);
    assert.equal(r.status, 0, `minik8s ${args.join(' ')} exited ${r.status}:\n${r.stdout}\n${r.stderr}`);
    return r;
  };
  /** The answer, its JSON as the caller says it is. */
  const api = async <T = unknown>(method: string, path: string, body?: unknown) => {
    const res = await fetch(`${master.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${master.token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: (await res.json()) as T };
  };
  /** Runs the workflow through the activator's HTTP trigger, as `invoke workflow` does. */
  const trigger = async (name: string, input: unknown) => {
    const res = await fetch(`${master.activatorUrl}/workflow/${name}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(input),
    });
    return { status: res.status, execution: res.headers.get('x-minik8s-execution'), body: (await res.json()) as TriggerAnswer };
  };
  const workflow = (definition: unknown) => ({ apiVersion: 'minik8s.io/v1', kind: 'Workflow', metadata: { name: 'bad' }, spec: { definition } });

  before(async () => {
    master = await startMaster({ seedImages: true });
    worker = await startWorker({ server: master.url, joinToken: master.joinToken });
  });

  after(async () => {
    await worker?.destroy();
    const registryPort = master?.registryPort;
    await master?.stop();
    rmSync(dir, { recursive: true, force: true });
    if (registryPort !== undefined) {
      const prefix = `127.0.0.1:${registryPort}/functions/`;
      for (const image of await docker.listImages().catch(() => [])) {
        const refs = [...(image.RepoTags ?? []), ...(image.RepoDigests ?? [])];
        if (refs.some((r) => r.startsWith(prefix)))
          await docker
            .getImage(image.Id)
            .remove({ force: true })
            .catch(() => {});
      }
    }
  });

  it('refuses a definition with problems when applied: 422 naming each field', async () => {
    const unknown = await api<Status>(
      'POST',
      '/apis/minik8s.io/v1/namespaces/default/workflows',
      workflow({
        StartAt: 'A',
        States: { A: { Type: 'Pass', Next: 'Nowhere' }, B: { Type: 'Succeed' } },
      }),
    );
    assert.equal(unknown.status, 422);
    assert.deepEqual(
      unknown.body.details!.causes!.map((c) => `${c.field}: ${c.reason}`),
      ['spec.definition.States.A.Next: FieldValueNotFound'],
    );

    const endless = await api<Status>(
      'POST',
      '/apis/minik8s.io/v1/namespaces/default/workflows',
      workflow({
        StartAt: 'A',
        States: { A: { Type: 'Pass', Next: 'B' }, B: { Type: 'Pass', Next: 'A' }, C: { Type: 'Succeed' } },
      }),
    );
    assert.equal(endless.status, 422);
    assert.deepEqual(
      endless.body.details!.causes!.map((c) => c.field),
      ['spec.definition.States.A', 'spec.definition.States.B', 'spec.definition.States.C'],
    );

    // Through the CLI: a Task naming a function that does not exist.
    writeFileSync(join(dir, 'missing.json'), JSON.stringify(workflow({ StartAt: 'T', States: { T: { Type: 'Task', Resource: 'function:nope', End: true } } })));
    const r = await cli('apply', '-f', join(dir, 'missing.json'));
    assert.equal(r.status, 1);
    assert.match(
      r.stderr,
      /Workflow "bad" is invalid: spec\.definition\.States\.T\.Resource: Not found: "function:nope": no function "nope" in namespace "default"/,
    );
    assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
  });

  it('applies the example (two functions and a workflow) and builds the functions', { timeout: 600_000 }, async () => {
    const r = await ok('apply', '-f', EXAMPLE);
    assert.match(r.stdout, /workflow.minik8s.io\/add-and-judge created/);
    for (const fn of ['add', 'add-five']) {
      await waitFor(
        async () => (await api<FunctionObject>('GET', `/apis/minik8s.io/v1/namespaces/default/functions/${fn}`)).body.status?.build?.phase === 'Succeeded',
        { timeoutMs: 540_000, intervalMs: 1000, description: `function ${fn} built` },
      );
    }
    const get = await ok('get', 'workflows');
    assert.match(get.stdout, /^NAME +STATES +START +AGE\nadd-and-judge +5 +Add +\S+\n$/);
  });

  it('a Choice takes different branches for two inputs, through the activator', { timeout: 300_000 }, async () => {
    const equal = await trigger('add-and-judge', { x: 6, y: 7 });
    assert.equal(equal.status, 200, JSON.stringify(equal.body));
    assert.deepEqual(equal.body, { x: 18, message: 'x is 18' });
    assert.ok(equal.execution);
    const notEqual = await ok('invoke', 'workflow', 'add-and-judge', '--data', '{"x": 1, "y": 2}');
    assert.deepEqual(JSON.parse(notEqual.stdout), { x: 8, message: 'x is not 18' });
  });

  it('a function that raises fails the execution with its error type (500 from the trigger)', async () => {
    const failed = await trigger('add-and-judge', { x: 1 });
    assert.equal(failed.status, 500);
    assert.equal(failed.body.error, 'KeyError');
    assert.match(failed.body.cause!, /KeyError: 'y'/);
    assert.equal(failed.body.execution, failed.execution);
  });

  it('lists executions and shows one with its history, through the CLI, also after a master restart', { timeout: 180_000 }, async () => {
    const check = async () => {
      const list = await ok('workflow', 'executions', 'add-and-judge');
      const lines = list.stdout.trim().split('\n');
      assert.match(lines[0]!, /^NAME +STATUS +DURATION +ERROR +AGE$/);
      assert.deepEqual(
        lines.slice(1).map((l) => l.split(/\s+/)[1]),
        ['FAILED', 'SUCCEEDED', 'SUCCEEDED'],
      );
      assert.match(lines[1]!, / FAILED +\S+ +KeyError /);
      const name = lines[3]!.split(/\s+/)[0]!;
      const one = await ok('workflow', 'execution', 'add-and-judge', name);
      assert.match(one.stdout, /Status: +SUCCEEDED\n/);
      assert.match(one.stdout, /Output: +\{"x":18,"message":"x is 18"\}\n/);
      for (const line of [/TaskScheduled +Add +\S+ +add \(attempt 1\) \{"x":6,"y":7\}/, /StateExited +Judge +\S+ +\{"x":18\} -> Equal/, /ExecutionSucceeded/])
        assert.match(one.stdout, line);
      const json = JSON.parse((await ok('workflow', 'execution', 'add-and-judge', name, '-o', 'json')).stdout);
      assert.equal(json.history[0].type, 'ExecutionStarted');
      const describe = await ok('describe', 'workflow', 'add-and-judge');
      assert.match(describe.stdout, /Start At: +Add\n/);
      assert.match(describe.stdout, /Judge +Choice +Equal, default NotEqual/);
      assert.match(describe.stdout, /Executions \(latest 3 of 3\):/);
    };
    await check();
    // A crash, then a start on the same data: the records were in etcd.
    await master.kill();
    await master.restart();
    await check();
  });

  it('a scheduled trigger calls its function through the activator at the next minute, recorded with trigger schedule', { timeout: 240_000 }, async () => {
    const patched = await api('PATCH', '/apis/minik8s.io/v1/namespaces/default/functions/add', {
      spec: { triggers: [{ schedule: '* * * * *', data: { x: 40, y: 2 } }] },
    });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    // At most a minute to the tick, plus a cold start if the pod went idle.
    const record = await waitFor(
      async () => {
        const list = (await api<{ items: InvocationRecord[] }>('GET', '/apis/minik8s.io/v1/namespaces/default/functions/add/invocations')).body;
        return list.items.find((i) => i.trigger === 'schedule');
      },
      { timeoutMs: 180_000, intervalMs: 1000, description: 'a call with trigger schedule' },
    );
    assert.equal(record.status, 200);
    assert.deepEqual(record.result, { x: 42 });
    await api('PATCH', '/apis/minik8s.io/v1/namespaces/default/functions/add', { spec: { triggers: null } });
  });

  it('deleting a workflow removes its execution records', async () => {
    await ok('delete', 'workflow', 'add-and-judge');
    const gone = await api('GET', '/apis/minik8s.io/v1/namespaces/default/workflows/add-and-judge/executions');
    assert.equal(gone.status, 404);
    // Made again under the same name: the earlier one's records do not come back with it.
    await ok('apply', '-f', EXAMPLE);
    await waitFor(
      async () =>
        (await api<{ items?: WorkflowExecutionSummary[] }>('GET', '/apis/minik8s.io/v1/namespaces/default/workflows/add-and-judge/executions')).body.items
          ?.length === 0,
      { timeoutMs: 20_000, description: 'no executions of the new add-and-judge' },
    );
  });
});
