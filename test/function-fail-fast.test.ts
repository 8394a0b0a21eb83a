// Functions that cannot serve answer at once, on a real master, registry, worker and Docker: a build whose requirements cannot install, a handler raising at import; fixed code serves again. Requirements come through pip's own configuration of the master (PIP_INDEX_URL with a password), which stays out of the function image.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Docker from 'dockerode';
import type { FunctionObject } from '../src/core/api/function.js';
import { waitFor } from '../src/core/wait-for.js';
import { BINARY, startMaster, type MasterProcess } from './helpers/master.js';
import { startWorker, type WorkerProcess } from './helpers/worker.js';
import { writeZip } from './helpers/zip.js';

const docker = new Docker();
const dockerAvailable = await docker.ping().then(
  () => true,
  () => false,
);
const USER = 'builder';
const PASSWORD = 'idx-s3cret-pw';

/** A one-module wheel (mk8stestpkg.VALUE = 42) published as NAME. */
function wheel(name: string): Buffer {
  const info = `${name.replace(/-/g, '_')}-1.0.dist-info`;
  const files: [string, string][] = [
    ['mk8stestpkg/__init__.py', 'VALUE = 42\n'],
    [`${info}/METADATA`, `Metadata-Version: 2.1\nName: ${name}\nVersion: 1.0\n`],
    [`${info}/WHEEL`, 'Wheel-Version: 1.0\nGenerator: minik8s-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n'],
  ];
  const record = files.map(([f, d]) => `${f},sha256=${createHash('sha256').update(d).digest('base64url')},${Buffer.byteLength(d)}`);
  record.push(`${info}/RECORD,,`);
  return writeZip([...files, [`${info}/RECORD`, `${record.join('\n')}\n`]].map(([f, d]) => ({ name: f, data: d, deflate: true })));
}

/** A PEP 503 index on loopback that wants a password, holding one package; every other name is a 404. */
async function startPrivateIndex(pkg: string): Promise<{ server: Server; url: string; requests: () => number }> {
  const whl = wheel(pkg);
  const file = `${pkg.replace(/-/g, '_')}-1.0-py3-none-any.whl`;
  const expected = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;
  let requests = 0;
  const server = createServer((req, res) => {
    requests++;
    if (req.headers.authorization !== expected) return void res.writeHead(401, { 'www-authenticate': 'Basic realm="index"' }).end();
    if (req.url === `/simple/${pkg}/`) {
      const sha = createHash('sha256').update(whl).digest('hex');
      return void res.writeHead(200, { 'content-type': 'text/html' }).end(`<html><body><a href="/files/${file}#sha256=${sha}">${file}</a></body></html>`);
    }
    if (req.url === `/files/${file}`) return void res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(whl);
    res.writeHead(404).end('not found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return { server, url: `http://${USER}:${PASSWORD}@127.0.0.1:${(server.address() as { port: number }).port}/simple`, requests: () => requests };
}

describe('functions fail fast (real master, registry, worker and Docker)', { skip: dockerAvailable ? false : 'no Docker engine' }, () => {
  let master: MasterProcess;
  let worker: WorkerProcess;
  let index: Awaited<ReturnType<typeof startPrivateIndex>>;
  const dir = mkdtempSync(join(tmpdir(), 'minik8s-test-failfast-'));

  const cli = (...args: string[]) =>
    new Promise<{ status: number; stdout: string; stderr: string }>((resolve) => {
      execFile(process.execPath, [BINARY, ...args], { env: master.env, encoding: 'utf8', timeout: 240_000 }, (err, stdout, stderr) => {
        resolve({ status: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      });
    });
  const file = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
  /** A call through the activator, timed. */
  const call = async (name: string) => {
    const started = Date.now();
    const res = await fetch(`${master.activatorUrl}/function/${name}`, {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json' },
      signal: AbortSignal.timeout(120_000),
    });
    const text = await res.text();
    return { status: res.status, version: res.headers.get('x-minik8s-version'), text, ms: Date.now() - started };
  };

  before(async () => {
    index = await startPrivateIndex('minik8s-test-pkg');
    // No --pip-index-url: the index comes from pip's own environment variable on the master.
    master = await startMaster({ seedImages: true, env: { PIP_INDEX_URL: index.url } });
    worker = await startWorker({ server: master.url, joinToken: master.joinToken });
  });

  after(async () => {
    await worker?.destroy();
    const registryPort = master?.registryPort;
    await master?.stop();
    index?.server.close();
    rmSync(dir, { recursive: true, force: true });
    if (registryPort !== undefined) {
      const images = await docker.listImages({ all: true, filters: { label: [`minik8s.io/registry=127.0.0.1:${registryPort}`] } });
      for (const image of images.sort((a, b) => b.Created - a.Created))
        await docker
          .getImage(image.Id)
          .remove({ force: true })
          .catch(() => {});
    }
  });

  it('a function whose requirements cannot install: clean build error, and a call fails within 1 s naming it and the version', {
    timeout: 240_000,
  }, async () => {
    const r = await cli(
      'function',
      'create',
      'typo',
      '-f',
      file('handler.py', 'def handler(e, c):\n    return 1\n'),
      '--requirements',
      file('req.txt', 'pilow\n'),
    );
    assert.equal(r.status, 1, r.stdout + r.stderr);
    assert.match(
      r.stderr,
      /version 1 could not be built: requirements could not be installed: pip failed \(exit code 1\): ERROR: Could not find a version that satisfies the requirement pilow/,
    );
    assert.ok(!r.stderr.includes('\x1b'), 'no ANSI escape codes');
    assert.ok(index.requests() > 0, "pip asked the index from the master's PIP_INDEX_URL");
    const described = await cli('describe', 'function', 'typo');
    assert.match(described.stdout, /ERROR: Could not find a version that satisfies the requirement pilow/);
    const res = await call('typo');
    assert.equal(res.status, 503, res.text);
    assert.ok(res.ms < 1_000, `answered in ${res.ms} ms`);
    assert.equal(res.version, '1');
    assert.match(
      JSON.parse(res.text).message,
      /^function typo version 1 failed to build: .*ERROR: Could not find a version that satisfies the requirement pilow/,
    );
  });

  it('a handler raising at import: the call fails with the error and where it was raised, the next one within 1 s; fixed code serves 200', {
    timeout: 300_000,
  }, async () => {
    const bad = 'import json\nraise RuntimeError("model file missing")\ndef handler(e, c):\n    return 1\n';
    const created = await cli('function', 'create', 'imp', '-f', file('bad.py', bad), '--handler', 'bad.handler');
    assert.equal(created.status, 0, created.stdout + created.stderr);
    const first = await call('imp');
    assert.equal(first.status, 502, first.text);
    const message = JSON.parse(first.text).message as string;
    assert.match(
      message,
      /^function imp version 1 cannot start: cannot import handler module 'bad'.*RuntimeError: model file missing \(raised at bad\.py line 2\)/,
    );
    const again = await call('imp');
    assert.equal(again.status, 502);
    assert.ok(again.ms < 1_000, `answered in ${again.ms} ms`);
    assert.equal(again.version, '1');

    // Fixed code, with a requirement from the password-protected index.
    const good = 'import mk8stestpkg\ndef handler(e, c):\n    return {"value": mk8stestpkg.VALUE}\n';
    const updated = await cli(
      'function',
      'update',
      'imp',
      '-f',
      file('good.py', good),
      '--handler',
      'good.handler',
      '--requirements',
      file('ok.txt', 'minik8s-test-pkg\n'),
    );
    assert.equal(updated.status, 0, updated.stdout + updated.stderr);
    const fixed = await waitFor(
      async () => {
        const res = await call('imp');
        return res.status === 200 ? res : undefined;
      },
      { timeoutMs: 120_000, description: 'version 2 answering 200' },
    );
    assert.deepEqual(JSON.parse(fixed.text), { value: 42 });
    assert.equal(fixed.version, '2');

    // The index password is in no layer of the function image, nor in the master's output.
    const fn = (await (
      await fetch(`${master.url}/apis/minik8s.io/v1/namespaces/default/functions/imp`, { headers: { authorization: `Bearer ${master.token}` } })
    ).json()) as FunctionObject;
    const history = await docker.getImage(`127.0.0.1:${master.registryPort}/functions/default-imp:v${fn.status.version}`).history();
    assert.ok(history.length > 0);
    const layers = JSON.stringify(history);
    assert.ok(!layers.includes(PASSWORD) && !layers.includes('pip.conf'), 'no pip configuration in the image history');
    assert.ok(!master.output().includes(PASSWORD), "the master's output does not show the password");
  });
});
