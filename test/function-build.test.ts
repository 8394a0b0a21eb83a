// Functions on a real master, registry and Docker: the image factory builds versions into the registry, the controller runs them as ReplicaSets; soft and hard updates, rollback without a build, requirements from a local index and without one, apply with codePath, logs, delete.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Docker from 'dockerode';
import type { Event } from '../src/core/api/event.js';
import type { FunctionObject } from '../src/core/api/function.js';
import type { FunctionVersion } from '../src/core/api/function-version.js';
import type { Pod } from '../src/core/api/pod.js';
import type { ReplicaSet } from '../src/core/api/replicaset.js';
import { waitFor } from '../src/core/wait-for.js';
import { BINARY, startMaster, type MasterProcess } from './helpers/master.js';
import { startWorker, type WorkerProcess } from './helpers/worker.js';
import { writeZip } from './helpers/zip.js';

const FNS = '/apis/minik8s.io/v1/namespaces/default/functions';
const VERSIONS = '/apis/minik8s.io/v1/namespaces/default/functionversions';
const RS = '/apis/apps/v1/namespaces/default/replicasets';
const docker = new Docker();

const dockerAvailable = await docker.ping().then(
  () => true,
  () => false,
);

/** A pure-Python wheel of package NAME holding the module mk8stestpkg (VALUE = 42), as pip installs it. */
function wheel(name: string): Buffer {
  const info = `${name.replace(/-/g, '_')}-1.0.dist-info`;
  const files: [string, string][] = [
    ['mk8stestpkg/__init__.py', 'VALUE = 42\n'],
    [`${info}/METADATA`, `Metadata-Version: 2.1\nName: ${name}\nVersion: 1.0\n`],
    [`${info}/WHEEL`, 'Wheel-Version: 1.0\nGenerator: minik8s-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n'],
  ];
  const record = files.map(([file, data]) => `${file},sha256=${createHash('sha256').update(data).digest('base64url')},${Buffer.byteLength(data)}`);
  record.push(`${info}/RECORD,,`);
  return writeZip([...files, [`${info}/RECORD`, `${record.join('\n')}\n`]].map(([file, data]) => ({ name: file, data, deflate: true })));
}

/** A PEP 503 "simple" index on loopback: each package name has the same one-module wheel. */
async function startIndex(options: { port?: number; packages?: string[] } = {}): Promise<{ server: Server; url: string }> {
  const packages = options.packages ?? ['minik8s-test-pkg'];
  const server = createServer((req, res) => {
    for (const name of packages) {
      const whl = wheel(name);
      const file = `${name.replace(/-/g, '_')}-1.0-py3-none-any.whl`;
      if (req.url === `/simple/${name}/`) {
        const sha = createHash('sha256').update(whl).digest('hex');
        res.writeHead(200, { 'content-type': 'text/html' }).end(`<html><body><a href="/files/${file}#sha256=${sha}">${file}</a></body></html>`);
        return;
      }
      if (req.url === `/files/${file}`) {
        res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(whl);
        return;
      }
    }
    res.writeHead(404).end('not found');
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', () => resolve()));
  return { server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}/simple` };
}

describe('functions: image factory and controller (real master, registry and Docker)', { skip: dockerAvailable ? false : 'no Docker engine' }, () => {
  let master: MasterProcess;
  let worker: WorkerProcess;
  let index: { server: Server; url: string };
  const dir = mkdtempSync(join(tmpdir(), 'minik8s-test-fn-'));

  /** The CLI, asynchronously: the index this test serves must keep answering while a command waits for a build. */
  const cli = (...args: string[]) =>
    new Promise<{ status: number; stdout: string; stderr: string }>((resolve) => {
      execFile(process.execPath, [BINARY, ...args], { env: master.env, encoding: 'utf8', timeout: 240_000 }, (err, stdout, stderr) => {
        resolve({ status: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      });
    });
  const ok = async (...args: string[]) => {
    const r = await cli(...args);
    assert.equal(r.status, 0, `minik8s ${args.join(' ')} exited ${r.status}:\n${r.stdout}\n${r.stderr}`);
    return r.stdout;
  };
  /** A GET; the body as the caller says it is. */
  const api = async <T = unknown>(path: string) => {
    const res = await fetch(`${master.url}${path}`, { headers: { authorization: `Bearer ${master.token}` } });
    return { status: res.status, body: (await res.json()) as T };
  };
  const file = (name: string, text: string) => {
    const path = join(dir, name);
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, text);
    return path;
  };
  const handler = (version: string) =>
    [
      'import os',
      'def handler(event, context):',
      `    print("handled by ${version}", flush=True)`,
      `    return {"version": "${version}", "event": event, "greeting": os.environ.get("GREETING", "")}`,
      '',
    ].join('\n');
  const rs = async (name: string) => (await api<ReplicaSet>(`${RS}/${name}`)).body;
  const readyPodIP = (fn: string, version: number) =>
    waitFor(
      async () => {
        const pods = (
          await api<{ items: Pod[] }>(`/api/v1/namespaces/default/pods?labelSelector=minik8s.io/function=${fn},minik8s.io/function-version=${version}`)
        ).body.items;
        const ready = pods.find((p) => !p.metadata.deletionTimestamp && p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
        return ready?.status?.podIP as string | undefined;
      },
      { timeoutMs: 90_000, description: `a Ready pod of ${fn} version ${version}` },
    );
  const invokePod = async (ip: string, body: unknown) => {
    const res = await fetch(`http://${ip}:8080/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    // The handler's answer: a JSON object.
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  before(async () => {
    index = await startIndex();
    master = await startMaster({ seedImages: true, extraArgs: ['--pip-index-url', index.url] });
    worker = await startWorker({ server: master.url, joinToken: master.joinToken });
  });

  after(async () => {
    // Pods first (the worker removes its containers), then the images this master's builds made.
    await worker?.destroy();
    const registryPort = master?.registryPort;
    if (process.env.MINIK8S_TEST_KEEP_LOG) writeFileSync(process.env.MINIK8S_TEST_KEEP_LOG, master?.output() ?? '');
    await master?.stop();
    index?.server.close();
    rmSync(dir, { recursive: true, force: true });
    if (registryPort !== undefined) {
      // Every layer the builds made carries the registry they were for, intermediate (cache) ones too: newest first, children before parents.
      const images = await docker.listImages({ all: true, filters: { label: [`minik8s.io/registry=127.0.0.1:${registryPort}`] } });
      for (const image of images.sort((a, b) => b.Created - a.Created))
        await docker
          .getImage(image.Id)
          .remove({ force: true })
          .catch(() => {});
    }
  });

  let v1Image = '';

  it('creates a function: the build shows its steps, pushes the image and makes a ReplicaSet at 0', async () => {
    const out = await ok('function', 'create', 'hello', '-f', file('v1/handler.py', handler('v1')), '--idle-grace', '600');
    assert.match(out, /function\/hello created/);
    // Which steps show depends on Docker's cache (a cached step passes in milliseconds); the push always does.
    assert.match(out, /building version 1: pushing functions\/default-hello:v1\n/);
    assert.match(out, /function\/hello ready: version 1 serving at https:\/\/[^ ]+:\d+\/function\/hello\n/);
    const fn = (await api<FunctionObject>(`${FNS}/hello`)).body;
    assert.equal(fn.status.version, 1);
    assert.match(fn.status.image!, /^functions\/default-hello@sha256:[0-9a-f]{64}$/);
    v1Image = fn.status.image!;
    assert.ok(fn.status.conditions!.some((c) => c.type === 'Built' && c.status === 'True' && c.reason === 'BuildSucceeded'));
    assert.ok(fn.status.conditions!.some((c) => c.type === 'Ready' && c.status === 'True' && c.reason === 'ScaledToZero'));
    const tags = (await (await fetch(`${master.registryUrl}/v2/functions/default-hello/tags/list`)).json()) as { tags: string[] };
    assert.deepEqual(tags.tags, ['v1']);
    const set = await rs('hello-v1');
    assert.equal(set.spec.replicas, 0);
    assert.equal(set.spec.template.spec.containers[0].image, v1Image);
    assert.equal(set.metadata.ownerReferences![0].kind, 'Function');
    const table = await ok('get', 'fn');
    assert.match(table, /^NAME\s+VERSION\s+URL\s+READY\s+AGE/);
    assert.match(table, /hello\s+1\s+https:\S+\/function\/hello\s+0\/0\s/);
  });

  it("runs the image when scaled by hand: the pod answers with the handler's result, and function logs shows its output", async () => {
    await ok('scale', 'rs', 'hello-v1', '--replicas', '1');
    const ip = await readyPodIP('hello', 1);
    const res = await invokePod(ip, { name: 'world' });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { version: 'v1', event: { name: 'world' }, greeting: '' });
    await waitFor(async () => /\[hello-v1-[a-z0-9]+\] handled by v1/.test((await cli('function', 'logs', 'hello')).stdout), {
      timeoutMs: 20_000,
      description: "the handler's print in function logs",
    });
  });

  it('a soft update builds version 2; version 1 goes to 0 once version 2 has a Ready pod', async () => {
    const out = await ok('function', 'update', 'hello', '-f', file('v2/handler.py', handler('v2')), '--soft');
    assert.match(out, /function\/hello updated: version 2 serving/);
    const v2 = await rs('hello-v2');
    assert.equal(v2.spec.replicas, 1, "the new version starts with the old one's pods");
    const ip = await readyPodIP('hello', 2);
    assert.equal((await invokePod(ip, null)).body.version, 'v2');
    await waitFor(async () => (await rs('hello-v1')).spec.replicas === 0, { timeoutMs: 30_000, description: 'hello-v1 scaled to 0' });
    const events = (await api<{ items: Event[] }>('/api/v1/namespaces/default/events')).body.items;
    assert.ok(
      events.some((e) => e.involvedObject.name === 'hello' && e.reason === 'ScaledOldVersion'),
      'a ScaledOldVersion event',
    );
    const described = await ok('describe', 'function', 'hello');
    assert.match(described, /Versions:/);
    assert.match(described, /2 \*\s+Succeeded\s+functions\/default-hello:v2/);
  });

  it("a hard update of the environment alone makes version 3 on version 2's image (no build) and stops version 2 at once", async () => {
    const out = await ok('function', 'update', 'hello', '--env', 'GREETING=hi', '--hard');
    assert.match(out, /version 3 serving/);
    assert.match(out, /reused the image of version 2/);
    const v3 = (await api<FunctionVersion>(`${VERSIONS}/hello-v3`)).body;
    assert.equal(v3.status.reusedFrom, 2);
    assert.equal(v3.status.image, (await api<FunctionVersion>(`${VERSIONS}/hello-v2`)).body.status.image);
    assert.equal((await rs('hello-v3')).spec.replicas, 0, 'hard: the next request cold-starts the new version');
    assert.equal((await rs('hello-v2')).spec.replicas, 0);
  });

  it("rollback --to 1 serves version 1's image again without building", async () => {
    const buildsBefore = (await api<{ items: Event[] }>('/api/v1/namespaces/default/events')).body.items.filter((e) => e.reason === 'BuildStarted').length;
    const out = await ok('function', 'rollback', 'hello', '--to', '1');
    assert.match(out, /rolled back: version 1 serving/);
    const fn = (await api<FunctionObject>(`${FNS}/hello`)).body;
    assert.equal(fn.status.version, 1);
    assert.equal(fn.status.image, v1Image);
    const events = (await api<{ items: Event[] }>('/api/v1/namespaces/default/events')).body.items;
    assert.equal(events.filter((e) => e.reason === 'BuildStarted').length, buildsBefore, 'no build');
    assert.equal((await api<{ items: FunctionVersion[] }>(VERSIONS)).body.items.length, 3, 'no new version');
  });

  it('installs requirements from the index given with --pip-index-url', async () => {
    const code = 'import mk8stestpkg\ndef handler(event, context):\n    return {"value": mk8stestpkg.VALUE}\n';
    await ok(
      'function',
      'create',
      'withdeps',
      '-f',
      file('deps/handler.py', code),
      '--requirements',
      file('deps/requirements.txt', 'minik8s-test-pkg==1.0\n'),
      '--idle-grace',
      '600',
    );
    await ok('scale', 'rs', 'withdeps-v1', '--replicas', '1');
    assert.deepEqual((await invokePod(await readyPodIP('withdeps', 1), null)).body, { value: 42 });
  });

  it('fails with a clear message when no package index answers', async () => {
    await new Promise<void>((resolve) => index.server.close(() => resolve()));
    index.server.closeAllConnections();
    const r = await cli(
      'function',
      'create',
      'broken',
      '-f',
      file('broken/handler.py', handler('b')),
      '--requirements',
      file('broken/requirements.txt', 'minik8s-other-pkg==1.0\n'),
    );
    assert.equal(r.status, 1, r.stdout + r.stderr);
    assert.match(r.stderr, /version 1 could not be built: requirements could not be installed: no package index reachable \(set --pip-index-url/);
    assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
    const fn = (await api<FunctionObject>(`${FNS}/broken`)).body;
    assert.ok(fn.status.conditions!.some((c) => c.type === 'Built' && c.status === 'False' && c.reason === 'BuildFailed'));
    assert.equal(fn.status.version, undefined);
    assert.equal((await api(`${RS}/broken-v1`)).status, 404, 'no ReplicaSet for a version without an image');
  });

  it('the same code submitted again once the index answers builds the failed version again', async () => {
    const port = Number(new URL(index.url).port);
    index = await startIndex({ port, packages: ['minik8s-other-pkg'] });
    const out = await ok('function', 'update', 'broken', '-f', join(dir, 'broken/handler.py'), '--requirements', join(dir, 'broken/requirements.txt'));
    assert.match(out, /function\/broken updated: version 1 serving/);
    assert.equal(
      (await api<{ items: FunctionVersion[] }>(VERSIONS)).body.items.filter((v) => v.spec.function === 'broken').length,
      1,
      'the same version, built again',
    );
  });

  it('applies a manifest whose code path is relative to it, and a second apply changes nothing', async () => {
    file('app/code/handler.py', handler('applied'));
    const manifest = file(
      'app/fn.yaml',
      'apiVersion: minik8s.io/v1\nkind: Function\nmetadata:\n  name: applied\nspec:\n  codePath: ./code\n  scaling: {idleGraceSeconds: 600}\n',
    );
    assert.match(await ok('apply', '-f', manifest), /function\.minik8s\.io\/applied created|functions?\/applied created/);
    await waitFor(async () => (await api<FunctionObject>(`${FNS}/applied`)).body.status?.version === 1, {
      timeoutMs: 120_000,
      description: 'applied version 1',
    });
    assert.match(await ok('apply', '-f', manifest), /unchanged/);
    file('app/code/handler.py', handler('applied2'));
    assert.match(await ok('apply', '-f', manifest), /configured/);
    await waitFor(async () => (await api<FunctionObject>(`${FNS}/applied`)).body.status?.version === 2, {
      timeoutMs: 120_000,
      description: 'applied version 2',
    });
  });

  it('delete removes the function with its versions, ReplicaSets and pods', async () => {
    await ok('function', 'delete', 'hello', 'withdeps', 'broken', 'applied');
    assert.equal((await api<{ items: FunctionObject[] }>(FNS)).body.items.length, 0);
    await waitFor(
      async () =>
        (await api<{ items: FunctionVersion[] }>(VERSIONS)).body.items.length === 0 &&
        (await api<{ items: ReplicaSet[] }>(RS)).body.items.length === 0 &&
        (await api<{ items: Pod[] }>('/api/v1/namespaces/default/pods')).body.items.length === 0,
      { timeoutMs: 60_000, description: 'versions, ReplicaSets and pods gone' },
    );
  });
});
