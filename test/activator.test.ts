// The activator in-process over a memory store, with loopback upstreams standing in for function pods: cold start, picking, retries, timeouts, bounds, records, scale to zero, workflows, HTTPS.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import https from 'node:https';
import { Readable } from 'node:stream';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { functionKind } from '../src/core/api/function.js';
import { podKind } from '../src/core/api/pod.js';
import { replicaSetKind, type ReplicaSet } from '../src/core/api/replicaset.js';
import { eventKind, type Event } from '../src/core/api/event.js';
import { InformerFactory } from '../src/core/controller/informer-factory.js';
import { MemoryStore } from '../src/core/store/memory-store.js';
import { waitFor } from '../src/core/wait-for.js';
import { LocalClient } from '../src/control-plane/api-server/local-client.js';
import { ObjectService } from '../src/control-plane/api-server/object-service.js';
import { ensureSystemNamespaces } from '../src/control-plane/api-server/server.js';
import { Activator, type ActivatorOptions, type WorkflowRunnerLike } from '../src/control-plane/activator/activator.js';
import { freePort } from '../scripts/sim/free-resources.js';
import { runInvoke } from '../src/cli/invoke.js';
import type { CliContext } from '../src/cli/context.js';
import { ApiClient } from '../src/core/client/api-client.js';
import { issueServerCert, loadOrCreateCa } from '../src/core/pki/pki.js';

/** What these tests read of the activator's JSON answers: a Status's kind and message, the fake pod's echo, a failed call's error. */
interface CallBody {
  kind?: string;
  message?: string;
  reason?: string;
  pod?: string;
  error?: string;
}

const SERVER_PY = fileURLToPath(new URL('../../templates/python-function/server.py', import.meta.url));

/** The activator as the master builds it: its own client, the process's informers (for the caller to start once it exists), records in the store. */
function newActivator(
  service: ObjectService,
  options: Omit<ActivatorOptions, 'client' | 'informers' | 'store'>,
): { activator: Activator; informers: InformerFactory } {
  const informers = new InformerFactory({ client: new LocalClient(service.forClient('shared-informers')) });
  const activator = new Activator({ client: new LocalClient(service.forClient('activator')), informers, store: service.store, ...options });
  return { activator, informers };
}

/** A stand-in for a function pod: the runtime's protocol, with knobs in the query (sleep, fail, health). */
async function fakeUpstream(name: string): Promise<{ port: number; calls: string[]; healthy: { value: number }; close(): Promise<void> }> {
  const calls: string[] = [];
  const healthy = { value: 200 };
  const server = http.createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    if (url.pathname === '/healthz' && !req.headers['x-minik8s-invocation-id']) {
      res
        .writeHead(healthy.value, { 'content-type': 'application/json' })
        .end(healthy.value === 200 ? '{}' : JSON.stringify({ error: "cannot import handler module 'handler': SyntaxError: bad" }));
      return;
    }
    let body = '';
    req.on('data', (d) => {
      body += d;
    });
    req.on('end', () => {
      calls.push(`${req.method} ${req.url}`);
      const done = () => {
        const stdout = Buffer.from(`hello from ${name}\n`).toString('base64');
        if (url.searchParams.get('fail')) {
          res
            .writeHead(500, { 'content-type': 'application/json', 'x-minik8s-stdout': stdout })
            .end(JSON.stringify({ error: 'ValueError: nope', traceback: 'Traceback...\nValueError: nope\n' }));
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json', 'x-minik8s-stdout': stdout }).end(
          JSON.stringify({
            pod: name,
            method: req.method,
            path: url.pathname,
            query: url.search,
            body,
            id: req.headers['x-minik8s-invocation-id'],
            test: req.headers['x-test'] ?? null,
          }),
        );
      };
      const sleep = Number(url.searchParams.get('sleep') ?? 0);
      if (sleep) setTimeout(done, sleep);
      else done();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    calls,
    healthy,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('activator', () => {
  let store: MemoryStore;
  let service: ObjectService;
  let activator: Activator;
  let base: string;
  const stop = new AbortController();
  let running: Promise<void>;
  let informing: Promise<void>;
  const upstreams: Awaited<ReturnType<typeof fakeUpstream>>[] = [];
  let podSeq = 0;

  const call = async (path: string, init: RequestInit = {}) => {
    const res = await fetch(`${base}${path}`, init);
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      /* text */
    }
    return { status: res.status, headers: res.headers, body: body as CallBody };
  };

  const createFunction = async (name: string, o: { scaling?: Record<string, number>; timeoutSeconds?: number; replicas?: number; version?: number } = {}) => {
    await service.create(functionKind, 'default', {
      apiVersion: 'minik8s.io/v1',
      kind: 'Function',
      metadata: { name },
      spec: {
        code: { files: { 'handler.py': 'def handler(event, context):\n    return event\n' } },
        scaling: o.scaling ?? {},
        ...(o.timeoutSeconds ? { timeoutSeconds: o.timeoutSeconds } : {}),
      },
    });
    const version = o.version ?? 1;
    await service.patch(functionKind, 'default', name, { status: { version } }, { subresource: 'status' });
    const labels = { 'minik8s.io/function': name, 'minik8s.io/function-version': String(version) };
    await service.create(replicaSetKind, 'default', {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name: `${name}-v${version}`, labels },
      spec: {
        replicas: o.replicas ?? 0,
        selector: { matchLabels: labels },
        template: { metadata: { labels }, spec: { containers: [{ name: 'function', image: 'fn:1' }] } },
      },
    });
  };

  /** A pod of the function at 127.0.0.1:port, as a kubelet would report it (Ready or not). */
  const createPod = async (fn: string, port: number, o: { ready?: boolean; version?: number } = {}) => {
    const name = `${fn}-v${o.version ?? 1}-${++podSeq}`;
    await service.create(podKind, 'default', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, labels: { 'minik8s.io/function': fn, 'minik8s.io/function-version': String(o.version ?? 1) } },
      spec: { nodeName: 'n1', containers: [{ name: 'function', image: 'fn:1', ports: [{ name: 'http', containerPort: port }] }] },
    });
    await service.patch(
      podKind,
      'default',
      name,
      {
        status: { phase: 'Running', podIP: '127.0.0.1', conditions: [{ type: 'Ready', status: o.ready ? 'True' : 'False' }] },
      },
      { subresource: 'status' },
    );
    return name;
  };

  const replicas = async (name: string) => ((await service.get(replicaSetKind, 'default', name)) as ReplicaSet).spec.replicas ?? 0;
  const upstream = async (name: string) => {
    const u = await fakeUpstream(name);
    upstreams.push(u);
    return u;
  };

  before(async () => {
    store = new MemoryStore();
    service = new ObjectService({ store });
    await ensureSystemNamespaces(service);
    const built = newActivator(service, {
      address: '127.0.0.1',
      port: await freePort(),
      holdCapacity: 3,
      coldStartTimeoutMs: 5_000,
      autoscalerTickMs: 100,
      recordsFlushMs: 100,
    });
    activator = built.activator;
    const { port } = await activator.listen();
    base = `http://127.0.0.1:${port}`;
    informing = built.informers.start(stop.signal);
    running = activator.start(stop.signal);
  });

  after(async () => {
    stop.abort();
    await Promise.all([running, informing]);
    for (const u of upstreams) await u.close();
  });

  it('answers 404 with a Status for an unknown function or path', async () => {
    const missing = await call('/function/nope', { method: 'POST' });
    assert.equal(missing.status, 404);
    assert.equal(missing.body.kind, 'Status');
    assert.match(missing.body.message!, /functions.minik8s.io "nope" not found/);
    const path = await call('/elsewhere');
    assert.equal(path.status, 404);
    assert.match(path.body.message!, /call \/function\/NAME/);
  });

  it('cold start: asks for a pod at once, holds the call, and sends it as soon as the pod answers its health probe', async () => {
    await createFunction('cold');
    const u = await upstream('cold-a');
    const answer = call('/function/cold/sub/path?x=1', { method: 'POST', body: '{"n":1}', headers: { 'x-test': 'yes', 'content-type': 'application/json' } });
    // The autoscaler writes the ReplicaSet's replicas through the scale path: one pod, at once.
    await waitFor(async () => (await replicas('cold-v1')) === 1, { timeoutMs: 5_000, description: 'the ReplicaSet scaled to 1' });
    // The pod gets an address; the kubelet has not called it Ready: the activator's own probe is enough.
    await createPod('cold', u.port, { ready: false });
    const res = await answer;
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.headers.get('x-minik8s-cold-start'), 'true');
    assert.equal(res.headers.get('x-minik8s-version'), '1');
    assert.equal(res.headers.get('x-minik8s-stdout'), null, 'captures are for the record, not the caller');
    const id = res.headers.get('x-minik8s-invocation-id')!;
    assert.match(id, /^[0-9a-f]{16}$/);
    assert.deepEqual(res.body, { pod: 'cold-a', method: 'POST', path: '/sub/path', query: '?x=1', body: '{"n":1}', id, test: 'yes' });

    const warm = await call('/function/cold', { method: 'POST', body: 'raw' });
    assert.equal(warm.status, 200);
    assert.equal(warm.headers.get('x-minik8s-cold-start'), 'false');

    const [newest, first] = activator.records.list('default', 'cold');
    assert.equal(first!.id, id);
    assert.equal(first!.coldStart, true);
    assert.equal(first!.trigger, 'http');
    assert.equal(first!.status, 200);
    assert.equal(first!.version, 1);
    assert.equal(first!.stdout, 'hello from cold-a\n');
    assert.deepEqual((first!.result as { body: string }).body, '{"n":1}');
    assert.equal(newest!.coldStart, false);
    // Recorded as an Event on the Function.
    await waitFor(
      async () => ((await service.list(eventKind, 'default')).items as Event[]).some((e) => e.reason === 'ScaledUp' && e.involvedObject.name === 'cold'),
      { timeoutMs: 5_000, description: 'a ScaledUp event' },
    );
  });

  it('sends each call to the pod with the fewest in flight', async () => {
    await createFunction('spread', { replicas: 2, scaling: { minScale: 2 } });
    const a = await upstream('spread-a');
    const b = await upstream('spread-b');
    await createPod('spread', a.port, { ready: true });
    await createPod('spread', b.port, { ready: true });
    await waitFor(async () => (await call('/function/spread')).status === 200, { timeoutMs: 5_000, description: 'the function to serve' });
    a.calls.length = 0;
    b.calls.length = 0;
    const slow = await Promise.all(Array.from({ length: 6 }, () => call('/function/spread?sleep=150', { method: 'POST' })));
    assert.ok(slow.every((r) => r.status === 200));
    assert.deepEqual([a.calls.length, b.calls.length], [3, 3]);
  });

  it('retries a refused connection once on another pod', async () => {
    await createFunction('retry', { replicas: 2, scaling: { minScale: 2 } });
    const good = await upstream('retry-good');
    const deadPort = await freePort();
    await createPod('retry', deadPort, { ready: true });
    await createPod('retry', good.port, { ready: true });
    for (let i = 0; i < 6; i++) {
      const res = await call('/function/retry', { method: 'POST' });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.pod, 'retry-good');
    }
  });

  it("answers 504 past the function's timeout, and passes a handler's 500 on with the error recorded", async () => {
    await createFunction('slow', { replicas: 1, scaling: { minScale: 1 }, timeoutSeconds: 1 });
    const u = await upstream('slow-a');
    await createPod('slow', u.port, { ready: true });
    await waitFor(async () => (await call('/function/slow')).status === 200, { timeoutMs: 5_000, description: 'the function to serve' });
    const late = await call('/function/slow?sleep=1500', { method: 'POST' });
    assert.equal(late.status, 504);
    assert.match(late.body.message!, /did not answer within 1 s/);
    const failed = await call('/function/slow?fail=1', { method: 'POST', body: '{}' });
    assert.equal(failed.status, 500);
    assert.deepEqual(failed.body.error, 'ValueError: nope');
    const id = failed.headers.get('x-minik8s-invocation-id')!;
    const rec = activator.records.get('default', 'slow', id)!;
    assert.equal(rec.status, 500);
    assert.equal(rec.error, 'ValueError: nope');
    assert.match(rec.traceback!, /Traceback/);
    assert.equal(rec.stdout, 'hello from slow-a\n');
    const timedOut = activator.records.list('default', 'slow').find((r) => r.status === 504)!;
    assert.match(timedOut.error!, /did not answer within 1 s/);
  });

  it('holds at most its bound per function: more get 503 with Retry-After at once, the held ones at the deadline', async () => {
    // A function whose ReplicaSet never comes: nothing can start.
    await service.create(functionKind, 'default', {
      apiVersion: 'minik8s.io/v1',
      kind: 'Function',
      metadata: { name: 'stuck' },
      spec: { code: { files: { 'handler.py': 'def handler(e, c):\n    return 1\n' } } },
    });
    const held = [1, 2, 3].map(() => call('/function/stuck', { method: 'POST' }));
    await waitFor(() => activator.heldRequests('default', 'stuck') === 3, { timeoutMs: 3_000, description: 'three calls held' });
    const refused = await call('/function/stuck', { method: 'POST' });
    assert.equal(refused.status, 503);
    assert.equal(refused.headers.get('retry-after'), '1');
    assert.match(refused.body.message!, /3 requests waiting/);
    for (const r of await Promise.all(held)) {
      assert.equal(r.status, 503);
      assert.equal(r.headers.get('retry-after'), '1');
      assert.match(r.body.message!, /no pod ready to serve yet/);
    }
  });

  it("fails held calls at once when the function's handler cannot load", async () => {
    await createFunction('broken');
    const u = await upstream('broken-a');
    u.healthy.value = 500;
    const answer = call('/function/broken', { method: 'POST' });
    await waitFor(async () => (await replicas('broken-v1')) === 1, { timeoutMs: 5_000, description: 'the ReplicaSet scaled to 1' });
    await createPod('broken', u.port);
    const res = await answer;
    assert.equal(res.status, 502);
    assert.match(res.body.message!, /function broken version 1 cannot start: cannot import handler module/);
    // Later calls are told at once too.
    const again = await call('/function/broken', { method: 'POST' });
    assert.equal(again.status, 502);
  });

  /** A Function with no version serving, its build at `build`. */
  const createUnbuilt = async (name: string, build: Record<string, unknown>) => {
    await service.create(functionKind, 'default', {
      apiVersion: 'minik8s.io/v1',
      kind: 'Function',
      metadata: { name },
      spec: { code: { files: { 'handler.py': 'def handler(event, context):\n    return event\n' } } },
    });
    await service.patch(functionKind, 'default', name, { status: { build } }, { subresource: 'status' });
  };
  const PIP_FAILURE =
    'requirements could not be installed: pip failed (exit code 1): ERROR: Could not find a version that satisfies the requirement pilow (from versions: none)\n  ERROR: No matching distribution found for pilow';

  it('answers a call to a function whose only version failed to build at once: 503 naming the version and the failing line', async () => {
    await createUnbuilt('nobuild', { version: 1, phase: 'Failed', message: PIP_FAILURE });
    await waitFor(async () => (await call('/function/nobuild', { method: 'POST' })).status === 503, {
      timeoutMs: 3_000,
      description: 'the informer saw the failure',
    });
    const started = Date.now();
    const res = await call('/function/nobuild', { method: 'POST' });
    assert.ok(Date.now() - started < 1_000, `answered in ${Date.now() - started} ms`);
    assert.equal(res.status, 503);
    assert.equal(res.body.reason, 'BuildFailed');
    assert.equal(res.headers.get('x-minik8s-version'), '1');
    assert.equal(res.headers.get('retry-after'), null, 'retrying cannot help');
    assert.equal(
      res.body.message,
      'function nobuild version 1 failed to build: requirements could not be installed: pip failed (exit code 1): ERROR: Could not find a version that satisfies the requirement pilow (from versions: none)',
    );
    assert.match(JSON.stringify(res.body), /No matching distribution found for pilow/);
  });

  it('answers a call held through a build as soon as the build fails, not at the cold-start deadline', async () => {
    await createUnbuilt('latefail', { version: 1, phase: 'Building', step: '4/9 RUN pip install' });
    const started = Date.now();
    const answer = call('/function/latefail', { method: 'POST' });
    await waitFor(() => activator.heldRequests('default', 'latefail') === 1, { timeoutMs: 3_000, description: 'the call held' });
    await service.patch(
      functionKind,
      'default',
      'latefail',
      { status: { build: { version: 1, phase: 'Failed', message: PIP_FAILURE } } },
      { subresource: 'status' },
    );
    const res = await answer;
    assert.equal(res.status, 503);
    assert.match(res.body.message!, /^function latefail version 1 failed to build: .*pilow/);
    assert.ok(Date.now() - started < 4_000, `answered after ${Date.now() - started} ms (the deadline is 5 s)`);
  });

  it('answers at once when every pod of the version has exited (CrashLoopBackOff), quoting its termination message', async () => {
    await createFunction('crashy');
    const answer = call('/function/crashy', { method: 'POST' });
    await waitFor(async () => (await replicas('crashy-v1')) === 1, { timeoutMs: 5_000, description: 'the ReplicaSet scaled to 1' });
    const started = Date.now();
    await service.create(podKind, 'default', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'crashy-v1-x', labels: { 'minik8s.io/function': 'crashy', 'minik8s.io/function-version': '1' } },
      spec: { nodeName: 'n1', containers: [{ name: 'function', image: 'fn:1' }] },
    });
    await service.patch(
      podKind,
      'default',
      'crashy-v1-x',
      {
        status: {
          phase: 'Running',
          conditions: [{ type: 'Ready', status: 'False' }],
          containerStatuses: [
            {
              name: 'function',
              image: 'fn:1',
              ready: false,
              restartCount: 2,
              state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 20s restarting failed container' } },
              lastState: { terminated: { exitCode: 1, reason: 'Error', message: 'MemoryError: the model does not fit' } },
            },
          ],
        },
      },
      { subresource: 'status' },
    );
    const res = await answer;
    assert.ok(Date.now() - started < 1_000, `answered ${Date.now() - started} ms after the crash was reported`);
    assert.equal(res.status, 502);
    assert.equal(
      res.body.message,
      'function crashy version 1 cannot start: the runtime exited with code 1 (Error, restarted 2 times): MemoryError: the model does not fit',
    );
    const again = await call('/function/crashy', { method: 'POST' });
    assert.equal(again.status, 502);
  });

  it('scales to zero once idle for the grace, and not before', async () => {
    await createFunction('idle', { scaling: { idleGraceSeconds: 1 } });
    const u = await upstream('idle-a');
    const answer = call('/function/idle', { method: 'POST' });
    await waitFor(async () => (await replicas('idle-v1')) === 1, { timeoutMs: 5_000, description: 'the ReplicaSet scaled to 1' });
    await createPod('idle', u.port, { ready: true });
    assert.equal((await answer).status, 200);
    const served = Date.now();
    await waitFor(async () => (await replicas('idle-v1')) === 0, { timeoutMs: 10_000, description: 'the ReplicaSet back at 0' });
    assert.ok(Date.now() - served >= 900, `went to zero ${Date.now() - served} ms after the last call`);
  });

  it('calls through the in-process FunctionInvoker with the trigger recorded, and runs workflows through the runner', async () => {
    await createFunction('inproc', { replicas: 1, scaling: { minScale: 1 } });
    const u = await upstream('inproc-a');
    await createPod('inproc', u.port, { ready: true });
    const r = await activator.invoke({ namespace: 'default', name: 'inproc', body: { a: 1 }, trigger: 'workflow', path: '/x', query: 'q=2' });
    assert.equal(r.status, 200);
    const body = JSON.parse(r.body.toString());
    assert.deepEqual([body.path, body.query, body.body], ['/x', '?q=2', '{"a":1}']);
    assert.equal(activator.records.get('default', 'inproc', r.invocationId)?.trigger, 'workflow');

    const noRunner = await call('/workflow/flow', { method: 'POST', body: '{}' });
    assert.equal(noRunner.status, 501);
    const runs: unknown[] = [];
    const runner: WorkflowRunnerLike = {
      async run(o) {
        runs.push(o.input);
        return (o.input as { ok?: boolean }).ok
          ? { executionName: 'flow-1', status: 'SUCCEEDED', output: { done: true } }
          : { executionName: 'flow-2', status: 'FAILED', error: 'States.TaskFailed', cause: 'boom' };
      },
    };
    activator.setWorkflowRunner(runner);
    const ok = await call('/workflow/flow', { method: 'POST', body: '{"ok":true}' });
    assert.deepEqual([ok.status, ok.body, ok.headers.get('x-minik8s-execution')], [200, { done: true }, 'flow-1']);
    const failed = await call('/namespaces/default/workflow/flow', { method: 'POST', body: '{"ok":false}' });
    assert.equal(failed.status, 500);
    assert.deepEqual(failed.body, { error: 'States.TaskFailed', cause: 'boom', execution: 'flow-2', status: 'FAILED' });
    assert.equal((await call('/workflow/flow', { method: 'POST', body: 'not json' })).status, 400);
  });

  it('stores the records in batches, so another activator on the same store reads them', async () => {
    await activator.records.flush();
    const { activator: other } = newActivator(service, { address: '127.0.0.1', port: 0 });
    await other.records.load();
    assert.ok(other.records.list('default', 'cold').length >= 2);
  });
});

describe('activator with the real Python runtime', () => {
  let child: ChildProcess | undefined;
  let dir: string;
  const stop = new AbortController();

  after(async () => {
    stop.abort();
    if (child && child.exitCode === null) {
      child.kill('SIGKILL');
      await new Promise((resolve) => child!.once('exit', resolve));
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('proxies to server.py and records its output and traceback', async () => {
    dir = mkdtempSync(join(tmpdir(), 'minik8s-act-fn-'));
    writeFileSync(
      join(dir, 'handler.py'),
      'def handler(event, context):\n    print("got", event)\n    if event == "boom":\n        raise RuntimeError("boom")\n    return {"echo": event, "path": context.path}\n',
    );
    const port = await freePort();
    child = spawn('python3', [SERVER_PY], { env: { ...process.env, MINIK8S_PORT: String(port), MINIK8S_FUNCTION_DIR: dir }, stdio: 'ignore' });
    const service = new ObjectService({ store: new MemoryStore() });
    await ensureSystemNamespaces(service);
    const { activator, informers } = newActivator(service, { address: '127.0.0.1', port: await freePort() });
    const { port: aport } = await activator.listen();
    const informing = informers.start(stop.signal);
    const running = activator.start(stop.signal);
    await service.create(functionKind, 'default', {
      apiVersion: 'minik8s.io/v1',
      kind: 'Function',
      metadata: { name: 'py' },
      spec: { code: { files: { 'handler.py': 'x' } } },
    });
    await service.patch(functionKind, 'default', 'py', { status: { version: 1 } }, { subresource: 'status' });
    await service.create(podKind, 'default', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'py-1', labels: { 'minik8s.io/function': 'py', 'minik8s.io/function-version': '1' } },
      spec: { nodeName: 'n1', containers: [{ name: 'function', image: 'fn', ports: [{ name: 'http', containerPort: port }] }] },
    });
    await service.patch(
      podKind,
      'default',
      'py-1',
      { status: { phase: 'Running', podIP: '127.0.0.1', conditions: [{ type: 'Ready', status: 'False' }] } },
      { subresource: 'status' },
    );
    const url = `http://127.0.0.1:${aport}/function/py/a?b=1`;
    const res = await waitFor(
      async () => {
        const r = await fetch(url, { method: 'POST', body: '{"k": 1}' });
        return r.status === 200 ? r : undefined;
      },
      { timeoutMs: 10_000, description: 'the runtime to answer through the activator' },
    );
    assert.deepEqual(await res.json(), { echo: { k: 1 }, path: '/a' });
    const boom = await fetch(url, { method: 'POST', body: '"boom"' });
    assert.equal(boom.status, 500);
    const rec = activator.records.get('default', 'py', boom.headers.get('x-minik8s-invocation-id')!)!;
    assert.equal(rec.error, 'RuntimeError: boom');
    assert.match(rec.traceback!, /handler\.py", line 4, in handler/);
    assert.equal(rec.stdout, 'got boom\n');
    stop.abort();
    await Promise.all([running, informing]);
  });
});

/** A request to the activator over https, trusting `ca` only (none: Node's own roots); the status and body. */
function httpsCall(url: string, ca: string | undefined, body?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.request(url, { method: 'POST', agent: false, ...(ca ? { ca } : {}) }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        text += d;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('activator over HTTPS', () => {
  const stop = new AbortController();
  const dir = mkdtempSync(join(tmpdir(), 'minik8s-act-tls-'));
  let running: Promise<unknown> | undefined;
  let upstream: Awaited<ReturnType<typeof fakeUpstream>> | undefined;
  let ca = '';
  let port = 0;

  before(async () => {
    const clusterCa = await loadOrCreateCa({ dir });
    ca = clusterCa.certPem;
    const serving = await issueServerCert(clusterCa, { commonName: 'activator', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] });
    const service = new ObjectService({ store: new MemoryStore() });
    await ensureSystemNamespaces(service);
    const { activator, informers } = newActivator(service, {
      address: '127.0.0.1',
      port: await freePort(),
      tls: { cert: serving.certPem, key: serving.keyPem, ca },
    });
    ({ port } = await activator.listen());
    running = Promise.all([informers.start(stop.signal), activator.start(stop.signal)]);
    upstream = await fakeUpstream('tls-a');
    await service.create(functionKind, 'default', {
      apiVersion: 'minik8s.io/v1',
      kind: 'Function',
      metadata: { name: 'sec' },
      spec: { code: { files: { 'handler.py': 'x' } } },
    });
    await service.patch(functionKind, 'default', 'sec', { status: { version: 1 } }, { subresource: 'status' });
    const labels = { 'minik8s.io/function': 'sec', 'minik8s.io/function-version': '1' };
    await service.create(podKind, 'default', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'sec-1', labels },
      spec: { nodeName: 'n1', containers: [{ name: 'function', image: 'fn', ports: [{ name: 'http', containerPort: upstream.port }] }] },
    });
    await service.patch(
      podKind,
      'default',
      'sec-1',
      { status: { phase: 'Running', podIP: '127.0.0.1', conditions: [{ type: 'Ready', status: 'True' }] } },
      { subresource: 'status' },
    );
  });

  after(async () => {
    stop.abort();
    await running;
    await upstream?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers a call over https to a client that trusts the cluster CA', async () => {
    const res = await waitFor(
      async () => {
        const r = await httpsCall(`https://127.0.0.1:${port}/function/sec/x`, ca, '{"n":1}');
        return r.status === 200 ? r : undefined;
      },
      { timeoutMs: 5_000, description: 'the function to answer over https' },
    );
    assert.equal((JSON.parse(res.body) as CallBody).pod, 'tls-a');
  });

  it('`minik8s invoke` trusts the CA of its config', async () => {
    let out = '';
    let err = '';
    const client = new ApiClient({ server: 'https://127.0.0.1:1', tls: { ca } });
    const ctx: CliContext = {
      namespace: 'default',
      namespaceExplicit: false,
      client: () => client,
      out: (t) => {
        out += t;
      },
      err: (t) => {
        err += t;
      },
      stdin: Readable.from([]),
      now: () => new Date(),
    };
    const code = await runInvoke(ctx, { target: 'sec', data: '"hi"', activator: `https://127.0.0.1:${port}`, env: {} });
    assert.equal(code, 0, err);
    assert.deepEqual(JSON.parse(out).body, '"hi"');
    client.close();
    // Without the CA the certificate is not verified: the CLI says so rather than calling.
    const bare = new ApiClient({ server: 'https://127.0.0.1:1' });
    await assert.rejects(
      runInvoke({ ...ctx, client: () => bare }, { target: 'sec', activator: `https://127.0.0.1:${port}`, env: {} }),
      /cannot verify the activator at https:\/\/127\.0\.0\.1:\d+: .*cluster CA/,
    );
    bare.close();
  });

  it('a client without the CA fails verification; plain HTTP gets a 400 saying to use HTTPS, not the function', async () => {
    await assert.rejects(httpsCall(`https://127.0.0.1:${port}/function/sec`, undefined), /self[- ]signed|unable to verify|certificate/i);
    const plain = await fetch(`http://127.0.0.1:${port}/function/sec`, { method: 'POST', body: '{}' });
    assert.equal(plain.status, 400);
    assert.equal(await plain.text(), 'Client sent an HTTP request to an HTTPS server.\n');
  });
});
