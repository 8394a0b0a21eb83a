// The Python function runtime (templates/python-function/server.py) run locally on a loopback port: the protocol the activator relies on.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitFor } from '../src/core/wait-for.js';
import { freePort } from '../scripts/sim/free-resources.js';

/** dist/test/x.js -> templates/python-function/server.py in the source tree. */
const SERVER = fileURLToPath(new URL('../../templates/python-function/server.py', import.meta.url));

const HANDLER = `
import sys, time
def handler(event, context):
    print("called with", event)
    if isinstance(event, dict) and event.get("fail"):
        raise ValueError("bad input: " + str(event["fail"]))
    if isinstance(event, dict) and event.get("sleep"):
        time.sleep(event["sleep"])
    if isinstance(event, dict) and event.get("warn"):
        sys.stderr.write("careful\\n")
    return {"event": event, "method": context.method, "path": context["path"], "query": context.query,
            "all": context.query_all, "header": context.headers.get("x-test"), "id": context.invocation_id,
            "function": context.function, "version": context.version}
`;

interface Runtime {
  child: ChildProcess;
  url: string;
  output(): string;
  exited: Promise<number | null>;
}

/** The floor for start-up time: Python's own HTTP server, answering every GET with 200. */
const BARE_SERVER = [
  '-c',
  [
    'import http.server, os',
    'class H(http.server.BaseHTTPRequestHandler):',
    '    def do_GET(self):',
    '        self.send_response(200); self.end_headers()',
    "http.server.HTTPServer(('127.0.0.1', int(os.environ['MINIK8S_PORT'])), H).serve_forever()",
  ].join('\n'),
];

async function startRuntime(dir: string, env: Record<string, string> = {}, args: string[] = [SERVER]): Promise<Runtime> {
  const port = await freePort();
  let output = '';
  const child = spawn('python3', args, {
    env: { ...process.env, MINIK8S_PORT: String(port), MINIK8S_FUNCTION_DIR: dir, MINIK8S_FUNCTION_NAME: 'hello', MINIK8S_FUNCTION_VERSION: '3', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (d) => {
    output += d;
  });
  child.stderr!.on('data', (d) => {
    output += d;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  await waitFor(
    async () => {
      if (child.exitCode !== null) throw new Error(`runtime exited: ${output}`);
      return (await fetch(`${url}/healthz`).catch(() => undefined)) !== undefined;
    },
    { timeoutMs: 10_000, description: 'the runtime to listen' },
  );
  return { child, url, output: () => output, exited };
}

function stop(rt: Runtime | undefined): Promise<unknown> {
  if (!rt || rt.child.exitCode !== null) return Promise.resolve();
  rt.child.kill('SIGKILL');
  return rt.exited;
}

const decode = (h: string | null) => Buffer.from(h ?? '', 'base64').toString('utf8');

describe('python function runtime', () => {
  let dir: string;
  let rt: Runtime;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'minik8s-fn-'));
    writeFileSync(join(dir, 'handler.py'), HANDLER);
    rt = await startRuntime(dir);
  });
  after(async () => {
    await stop(rt);
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers /healthz once the handler is imported, and starts fast', async () => {
    // The floor, measured now because the machine may be loaded: a bare Python HTTP server on
    // the same port-polling path. The runtime should cost little more than Python's own start.
    const floorDir = mkdtempSync(join(tmpdir(), 'minik8s-fn-floor-'));
    const floorStarted = Date.now();
    const floor = await startRuntime(floorDir, {}, BARE_SERVER);
    const floorMs = Date.now() - floorStarted;
    await stop(floor);
    rmSync(floorDir, { recursive: true, force: true });
    const started = Date.now();
    const quick = await startRuntime(dir);
    const tookMs = Date.now() - started;
    try {
      assert.ok(tookMs < 3 * floorMs + 1000, `started in ${tookMs} ms; a bare Python HTTP server in ${floorMs} ms`);
      const res = await fetch(`${quick.url}/healthz`);
      assert.equal(res.status, 200);
    } finally {
      await stop(quick);
    }
  });

  it('passes JSON in and out, with query, headers, method, path and the invocation id in the context', async () => {
    const res = await fetch(`${rt.url}/a/b?x=1&x=2&y=`, {
      method: 'PUT',
      body: JSON.stringify({ n: 1 }),
      headers: { 'content-type': 'application/json', 'x-test': 'yes', 'x-minik8s-invocation-id': 'inv-1' },
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/json');
    assert.equal(res.headers.get('x-minik8s-invocation-id'), 'inv-1');
    assert.deepEqual(await res.json(), {
      event: { n: 1 },
      method: 'PUT',
      path: '/a/b',
      query: { x: '1', y: '' },
      all: { x: ['1', '2'], y: [''] },
      header: 'yes',
      id: 'inv-1',
      function: 'hello',
      version: '3',
    });
    assert.equal(decode(res.headers.get('x-minik8s-stdout')), "called with {'n': 1}\n");
    assert.ok(Number(res.headers.get('x-minik8s-duration-ms')) >= 0);
  });

  it('gives raw text for a body that is not JSON, None for none, and makes up an invocation id', async () => {
    const text = (await (await fetch(`${rt.url}/`, { method: 'POST', body: 'just words' })).json()) as { event: unknown; id: string };
    assert.equal(text.event, 'just words');
    assert.match(text.id, /^[0-9a-f]{32}$/);
    const empty = (await (await fetch(`${rt.url}/`)).json()) as { event: unknown };
    assert.equal(empty.event, null);
  });

  it('turns an exception into a 500 with the error and traceback, and keeps serving', async () => {
    const res = await fetch(`${rt.url}/`, { method: 'POST', body: JSON.stringify({ fail: 'x' }) });
    assert.equal(res.status, 500);
    const body = (await res.json()) as { error: string; traceback: string };
    assert.equal(body.error, 'ValueError: bad input: x');
    assert.match(body.traceback, /handler\.py", line \d+, in handler/);
    assert.doesNotMatch(body.traceback, /server\.py/);
    assert.match(decode(res.headers.get('x-minik8s-stdout')), /called with/);
    assert.match(rt.output(), /ValueError: bad input: x/);
    const next = await fetch(`${rt.url}/`, { method: 'POST', body: '{"fine": true}' });
    assert.equal(next.status, 200);
  });

  it('captures stderr per call, and writes both streams to its own output too', async () => {
    const res = await fetch(`${rt.url}/`, { method: 'POST', body: JSON.stringify({ warn: true }) });
    assert.equal(decode(res.headers.get('x-minik8s-stderr')), 'careful\n');
    await waitFor(() => rt.output().includes('careful'), { timeoutMs: 5000, description: 'stderr in the output' });
  });

  it('keeps the captures of concurrent calls apart', async () => {
    const calls = await Promise.all([1, 2, 3, 4].map((i) => fetch(`${rt.url}/`, { method: 'POST', body: JSON.stringify({ i, sleep: 0.05 }) })));
    for (const [k, res] of calls.entries()) {
      assert.equal(decode(res.headers.get('x-minik8s-stdout')), `called with {'i': ${k + 1}, 'sleep': 0.05}\n`);
    }
  });

  it('reports a handler that cannot be imported on /healthz and in its log, and stays up', async () => {
    const bad = mkdtempSync(join(tmpdir(), 'minik8s-fn-bad-'));
    writeFileSync(join(bad, 'handler.py'), 'import no_such_module_here\n');
    // As the kubelet provides it: an empty file at the termination message path.
    const terminationLog = join(bad, 'termination-log');
    writeFileSync(terminationLog, '');
    const broken = await startRuntime(bad, { MINIK8S_TERMINATION_LOG: terminationLog });
    try {
      const res = await fetch(`${broken.url}/healthz`);
      assert.equal(res.status, 500);
      const body = (await res.json()) as { error: string };
      assert.match(body.error, /cannot import handler module 'handler'.*ModuleNotFoundError.*no_such_module_here/);
      assert.match(broken.output(), /no_such_module_here/);
      const call = await fetch(`${broken.url}/`, { method: 'POST', body: '{}' });
      assert.equal(call.status, 500);
      assert.match(((await call.json()) as { error: string }).error, /no_such_module_here/);
      // The termination message says it too, traceback and all, for whoever reads the pod's status.
      const message = readFileSync(terminationLog, 'utf8');
      assert.match(message, /^cannot import handler module 'handler'.*ModuleNotFoundError/);
      assert.match(message, /File ".*handler\.py", line 1/);
    } finally {
      await stop(broken);
      rmSync(bad, { recursive: true, force: true });
    }
  });

  it('finishes the calls in flight on SIGTERM, then exits', async () => {
    const draining = await startRuntime(dir);
    try {
      const slow = fetch(`${draining.url}/`, { method: 'POST', body: JSON.stringify({ sleep: 0.6 }) });
      await waitFor(() => draining.output().includes("'sleep': 0.6"), { timeoutMs: 5000, description: 'the slow call to start' });
      draining.child.kill('SIGTERM');
      const res = await slow;
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('connection'), 'close');
      assert.equal(await draining.exited, 0);
      assert.match(draining.output(), /drained, exiting/);
    } finally {
      await stop(draining);
    }
  });
});
