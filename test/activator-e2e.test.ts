// Functions through the activator on a real master and a real worker (the host's Docker): cold start via `minik8s invoke`, errors with tracebacks, invocation records (kept over a master restart), scale to zero after the idle grace.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Docker from 'dockerode';
import type { Event } from '../src/core/api/event.js';
import type { FunctionObject } from '../src/core/api/function.js';
import type { Pod } from '../src/core/api/pod.js';
import type { ReplicaSet } from '../src/core/api/replicaset.js';
import { waitFor } from '../src/core/wait-for.js';
import { BINARY, startMaster, type MasterProcess } from './helpers/master.js';
import { startWorker, type WorkerProcess } from './helpers/worker.js';

const docker = new Docker();
const dockerAvailable = await docker.ping().then(
  () => true,
  () => false,
);

const HANDLER = [
  'import time',
  'def handler(event, context):',
  '    print("called with", event, flush=True)',
  '    if event == "boom":',
  '        raise RuntimeError("boom: " + context.invocation_id)',
  '    if isinstance(event, dict) and event.get("sleep"):',
  '        time.sleep(event["sleep"])',
  '    return {"hello": event, "path": context.path, "query": context.query}',
  '',
].join('\n');

describe('functions through the activator (real master and worker)', { skip: dockerAvailable ? false : 'no Docker engine' }, () => {
  let master: MasterProcess;
  let worker: WorkerProcess;
  const dir = mkdtempSync(join(tmpdir(), 'minik8s-act-e2e-'));

  const cli = (...args: string[]) =>
    new Promise<{ status: number; stdout: string; stderr: string; ms: number }>((resolve) => {
      const started = Date.now();
      execFile(process.execPath, [BINARY, ...args], { env: master.env, encoding: 'utf8', timeout: 240_000 }, (err, stdout, stderr) => {
        resolve({ status: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr, ms: Date.now() - started });
      });
    });
  const ok = async (...args: string[]) => {
    const r = await cli(...args);
    assert.equal(r.status, 0, `minik8s ${args.join(' ')} exited ${r.status}:\n${r.stdout}\n${r.stderr}`);
    return r;
  };
  /** A GET; the body as the caller says it is. */
  const api = async <T = unknown>(path: string) => {
    const res = await fetch(`${master.url}${path}`, { headers: { authorization: `Bearer ${master.token}` } });
    return { status: res.status, body: (await res.json()) as T };
  };
  const replicas = async () => (await api<ReplicaSet>('/apis/apps/v1/namespaces/default/replicasets/hello-v1')).body.spec?.replicas;
  const pods = async () => (await api<{ items: Pod[] }>('/api/v1/namespaces/default/pods?labelSelector=minik8s.io/function=hello')).body.items;

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

  it("creates a function served at the activator's URL, at zero pods", async () => {
    writeFileSync(join(dir, 'handler.py'), HANDLER);
    await ok('function', 'create', 'hello', '-f', join(dir, 'handler.py'), '--idle-grace', '4');
    const fn = (await api<FunctionObject>('/apis/minik8s.io/v1/namespaces/default/functions/hello')).body;
    assert.equal(fn.status.url, `${master.activatorUrl}/function/hello`);
    assert.equal(await replicas(), 0);
    const info = (await api<{ url: string }>('/apis/minik8s.io/v1/activator')).body;
    assert.equal(info.url, master.activatorUrl);
  });

  it('the first invoke cold-starts a pod and answers; the next is warm', async () => {
    const cold = await ok('invoke', 'hello', '--data', '{"n": 1}', '--path', '/items/7?full=1');
    assert.deepEqual(JSON.parse(cold.stdout), { hello: { n: 1 }, path: '/items/7', query: { full: '1' } });
    const warm = await ok('invoke', 'hello', '--data', '"plain"');
    assert.deepEqual(JSON.parse(warm.stdout).hello, 'plain');
    // Through the activator directly, timed: a warm call is quick.
    const t0 = performance.now();
    const res = await fetch(`${master.activatorUrl}/function/hello`, { method: 'POST', body: '{}' });
    const warmMs = performance.now() - t0;
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-minik8s-cold-start'), 'false');
    process.stderr.write(`# cold invoke via the CLI ${cold.ms} ms (with the CLI's own start), warm ${warm.ms} ms, warm HTTP ${warmMs.toFixed(1)} ms\n`);
  });

  it('a handler that raises: exit 1 with the error, the invocation id and the traceback', async () => {
    const r = await cli('invoke', 'hello', '--data', '"boom"');
    assert.equal(r.status, 1);
    assert.match(r.stderr, /^error: function hello failed \(HTTP 500\): RuntimeError: boom: ([0-9a-f]{16}) \(invocation \1\)\n/);
    assert.match(r.stderr, /Traceback \(most recent call last\):[\s\S]*handler\.py", line 5, in handler/);
    assert.equal(r.stdout, '');
    const missing = await cli('invoke', 'nope');
    assert.equal(missing.status, 1);
    assert.match(missing.stderr, /functions.minik8s.io "nope" not found/);
  });

  it('lists the invocations, and shows one in full', async () => {
    const table = (await ok('function', 'invocations', 'hello')).stdout.trim().split('\n');
    assert.match(table[0]!, /^ID\s+VERSION\s+TRIGGER\s+STATUS\s+COLD\s+DURATION\s+AGE$/);
    assert.equal(table.length, 5);
    assert.match(table[1]!, /^[0-9a-f]{16}\s+v1\s+http\s+500\s+no\s/);
    assert.match(table[4]!, /^[0-9a-f]{16}\s+v1\s+http\s+200\s+yes\s/);
    const all = JSON.parse((await ok('function', 'invocations', 'hello', '-o', 'json')).stdout);
    const failed = all.items[0];
    assert.equal(failed.stdout, 'called with boom\n');
    assert.match(failed.error, /^RuntimeError: boom/);
    assert.match(failed.traceback, /RuntimeError: boom/);
    const first = all.items.at(-1);
    assert.deepEqual(first.result, { hello: { n: 1 }, path: '/items/7', query: { full: '1' } });
    const one = JSON.parse((await ok('function', 'invocations', 'hello', failed.id)).stdout);
    assert.equal(one.id, failed.id);
    const wide = (await ok('function', 'invocations', 'hello', '-o', 'wide', '--limit', '1')).stdout;
    assert.match(wide, /POD\s+ERROR\n.*hello-v1-\S+\s+RuntimeError: boom/);
  });

  it('keeps the records over a master restart', async () => {
    master.child.kill('SIGTERM');
    await new Promise((resolve) => master.child.once('exit', resolve));
    await master.restart();
    const all = JSON.parse((await ok('function', 'invocations', 'hello', '-o', 'json')).stdout);
    assert.equal(all.items.length, 4);
  });

  it('goes back to zero pods after the idle grace', async () => {
    await waitFor(async () => (await replicas()) === 0 && (await pods()).length === 0, {
      timeoutMs: 90_000,
      intervalMs: 500,
      description: 'hello at zero pods',
    });
    // And comes back on the next call.
    const again = await ok('invoke', 'hello', '--data', '{"back": true}');
    assert.deepEqual(JSON.parse(again.stdout).hello, { back: true });
    const events = (await api<{ items: Event[] }>('/api/v1/namespaces/default/events')).body.items
      .filter((e) => e.involvedObject.name === 'hello')
      .map((e) => e.reason);
    assert.ok(events.includes('ScaledUp') && events.includes('ScaledToZero'), events.join(','));
  });

  it('runs a workflow through the activator: `invoke workflow` prints its output, or fails with the execution', async () => {
    const res = await fetch(`${master.url}/apis/minik8s.io/v1/namespaces/default/workflows`, {
      method: 'POST',
      headers: { authorization: `Bearer ${master.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        apiVersion: 'minik8s.io/v1',
        kind: 'Workflow',
        metadata: { name: 'flow' },
        spec: { definition: { StartAt: 'Call', States: { Call: { Type: 'Task', Resource: 'hello', End: true } } } },
      }),
    });
    assert.equal(res.status, 201, await res.text());
    const run = await ok('invoke', 'workflow', 'flow', '--data', '{"n": 2}');
    assert.deepEqual(JSON.parse(run.stdout), { hello: { n: 2 }, path: '/', query: {} });
    const records = JSON.parse((await ok('function', 'invocations', 'hello', '-o', 'json', '--limit', '1')).stdout).items;
    assert.equal(records[0].trigger, 'workflow');
    const failed = await cli('invoke', 'workflow', 'flow', '--data', '"boom"');
    assert.equal(failed.status, 1);
    assert.match(failed.stderr, /^error: workflow flow failed \(HTTP 500\): .*\(execution \S+\)\n/);
    const bad = await cli('invoke', 'workflow', 'flow', '--data', 'not json');
    assert.equal(bad.status, 1);
    assert.match(bad.stderr, /a workflow's input must be JSON/);
  });
});
