// Unit tests of the function CLI's parts: reading code (file, directory, archive, manifest paths), flags to spec, waiting on a build, rollback's choice, apply's code patch, prefixed logs.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { FunctionObject } from '../core/api/function.js';
import type { FunctionVersion } from '../core/api/function-version.js';
import { functionKind } from '../core/api/function.js';
import { validateObject } from '../core/api/validate.js';
import type { KubeObject } from '../core/api/meta.js';
import { CliError } from './cli-error.js';
import { codeReplacementPatch } from './function-apply.js';
import { readCodeSource, resolveFunctionManifest } from './function-code.js';
import { LinePrefixer } from './function-logs.js';
import { waitOutcome } from './function-wait.js';
import { parseEnv, rollbackTarget, specFromFlags, type FunctionWriteArgs } from './function.js';

const dir = mkdtempSync(join(tmpdir(), 'minik8s-fn-cli-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const put = (path: string, data: string | Buffer) => {
  const full = join(dir, path);
  mkdirSync(join(full, '..'), { recursive: true });
  writeFileSync(full, data);
  return full;
};

describe('readCodeSource', () => {
  it("reads one file; a name other than handler.py implies its module as the handler's", async () => {
    assert.deepEqual(await readCodeSource(put('one/handler.py', 'def handler(e, c): pass\n')), {
      code: { files: { 'handler.py': 'def handler(e, c): pass\n' } },
      description: join(dir, 'one/handler.py'),
    });
    const hello = await readCodeSource(put('one/hello.py', 'x'));
    assert.equal(hello.impliedHandler, 'hello.handler');
  });

  it("reads a directory's text files (skipping caches and hidden files) and its requirements.txt", async () => {
    put('d/handler.py', 'h');
    put('d/lib/util.py', 'u');
    put('d/requirements.txt', 'requests\n');
    put('d/__pycache__/handler.cpython-311.pyc', Buffer.from([0, 1, 2]));
    put('d/.git/HEAD', 'ref');
    const read = await readCodeSource(join(dir, 'd'));
    assert.deepEqual(Object.keys(read.code.files!), ['handler.py', 'lib/util.py', 'requirements.txt']);
    assert.equal(read.requirements, 'requests\n');
  });

  it('packs a directory holding a binary file as a .tar.gz archive', async () => {
    put('bin/handler.py', 'h');
    put('bin/model.bin', Buffer.from([0, 255, 0, 1]));
    const read = await readCodeSource(join(dir, 'bin'));
    assert.equal(read.code.files, undefined);
    assert.ok(gunzipSync(Buffer.from(read.code.archive!, 'base64')).includes('model.bin'));
  });

  it('takes a .zip as it is', async () => {
    const zip = Buffer.from(`PK\u0005\u0006${'\0'.repeat(18)}`, 'latin1');
    assert.deepEqual((await readCodeSource(put('code.zip', zip))).code, { archive: zip.toString('base64') });
  });

  const refused: [string, () => Promise<unknown>, RegExp][] = [
    ['a path that does not exist', () => readCodeSource(join(dir, 'nope.py')), /does not exist/],
    [
      'an empty directory',
      async () => {
        mkdirSync(join(dir, 'empty'), { recursive: true });
        return readCodeSource(join(dir, 'empty'));
      },
      /holds no files/,
    ],
    ['a binary file that is no archive', () => readCodeSource(put('x.bin', Buffer.from([0, 1]))), /not a text file/],
    ['code over 1 MiB', () => readCodeSource(put('big/handler.py', 'x'.repeat(1_100_000))), /at most 1 MiB/],
  ];
  for (const [name, run, want] of refused) it(`refuses ${name}`, () => assert.rejects(run(), (e: unknown) => e instanceof CliError && want.test(e.message)));
});

describe('resolveFunctionManifest', () => {
  const manifest = (spec: Record<string, unknown>): KubeObject => ({ apiVersion: 'minik8s.io/v1', kind: 'Function', metadata: { name: 'm' }, spec });

  it('reads codePath and requirementsPath relative to the manifest and drops them', async () => {
    put('app/code/handler.py', 'def handler(e, c): pass\n');
    put('app/reqs.txt', 'a==1\n');
    const source = put('app/fn.yaml', '');
    const out = await resolveFunctionManifest(manifest({ codePath: './code', requirementsPath: 'reqs.txt', timeoutSeconds: 5 }), source);
    assert.deepEqual(out.spec, { timeoutSeconds: 5, code: { files: { 'handler.py': 'def handler(e, c): pass\n' } }, requirements: 'a==1\n' });
    validateObject(functionKind, { ...out, metadata: { name: 'm', namespace: 'default' } });
  });

  it('makes a valid Function of the example beside its handler', async () => {
    const { readManifests } = await import('./manifests.js');
    const [m] = await readManifests([join(process.cwd(), 'examples/function-hello/function.yaml')], { verb: 'apply' });
    const fn = validateObject(functionKind, { ...m!.object, metadata: { ...m!.object.metadata, namespace: 'default' } }) as FunctionObject;
    assert.deepEqual(Object.keys(fn.spec.code.files!), ['handler.py']);
    assert.match(fn.spec.code.files!['handler.py']!, /def handler\(event, context\)/);
  });

  it('leaves other objects and Functions without paths alone', async () => {
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { codePath: 'x' } } as KubeObject;
    assert.equal(await resolveFunctionManifest(pod, 'f.yaml'), pod);
    const fn = manifest({ code: { files: {} } });
    assert.equal(await resolveFunctionManifest(fn, 'f.yaml'), fn);
  });

  it('refuses code given twice and a missing path, naming the manifest', async () => {
    const source = put('twice/fn.yaml', '');
    await assert.rejects(resolveFunctionManifest(manifest({ codePath: '.', code: {} }), source), /give spec\.code or spec\.codePath, not both/);
    await assert.rejects(
      resolveFunctionManifest(manifest({ codePath: './missing' }), source),
      (e: unknown) => e instanceof CliError && e.message.includes(`${source}: spec.codePath:`) && /does not exist/.test(e.message),
    );
  });
});

describe('specFromFlags', () => {
  const args = (over: Partial<FunctionWriteArgs>): FunctionWriteArgs => ({ env: [], wait: true, ...over });

  it('turns flags into spec fields, merging scaling over the old spec', async () => {
    const spec = await specFromFlags(args({ minScale: '1', idleGrace: '45s', timeout: '10', env: ['A=1', 'B=x=y', 'A=2'], hard: true }), {
      scaling: { maxScale: 4, target: 3 },
      handler: 'h.f',
    });
    assert.deepEqual(spec, {
      handler: 'h.f',
      env: [
        { name: 'A', value: '2' },
        { name: 'B', value: 'x=y' },
      ],
      scaling: { maxScale: 4, target: 3, minScale: 1, idleGraceSeconds: 45 },
      timeoutSeconds: 10,
      updateStrategy: 'Hard',
    });
  });

  it('refuses bad numbers, bad env and both strategies', async () => {
    await assert.rejects(specFromFlags(args({ maxScale: '0' })), /--max-scale "0": a whole number from 1 to 1000/);
    await assert.rejects(specFromFlags(args({ soft: true, hard: true })), /cannot be given together/);
    assert.throws(() => parseEnv(['NOEQUALS']), /use NAME=VALUE/);
  });
});

function fnWith(status: Record<string, unknown>, generation = 2): FunctionObject {
  const fn = validateObject(functionKind, {
    apiVersion: 'minik8s.io/v1',
    kind: 'Function',
    metadata: { name: 'f', namespace: 'default', generation },
    spec: { code: { files: { 'handler.py': 'x' } } },
  }) as FunctionObject;
  return { ...fn, status };
}

describe('waitOutcome', () => {
  const target = { name: 'f', namespace: 'default', request: 'r2', generation: 2 };
  const cases: [string, Record<string, unknown>, unknown][] = [
    ['the controller has not seen the write', { observedGeneration: 1, build: { version: 1, phase: 'Succeeded', request: 'r1' } }, { done: false }],
    ["another request's status", { observedGeneration: 2, build: { version: 1, phase: 'Failed', request: 'r1' } }, { done: false }],
    [
      'building',
      { observedGeneration: 2, build: { version: 2, phase: 'Building', step: '3/7 RUN pip', request: 'r2' } },
      { done: false, progress: 'building version 2: 3/7 RUN pip' },
    ],
    [
      'built but not yet serving',
      { observedGeneration: 2, version: 1, build: { version: 2, phase: 'Succeeded', request: 'r2' } },
      { done: false, progress: 'rolling to version 2' },
    ],
    [
      'serving',
      { observedGeneration: 2, version: 2, url: 'http://m:8090/function/f', build: { version: 2, phase: 'Succeeded', request: 'r2', message: 'built in 3 s' } },
      { done: true, ok: true, version: 2, url: 'http://m:8090/function/f', note: 'built in 3 s' },
    ],
    [
      'failed',
      { observedGeneration: 2, version: 1, build: { version: 2, phase: 'Failed', message: 'no index', request: 'r2' } },
      { done: true, ok: false, version: 2, message: 'no index' },
    ],
  ];
  for (const [name, status, want] of cases) it(name, () => assert.deepEqual(waitOutcome(fnWith(status), target), want));

  it('a rollback waits for its version to serve', () => {
    assert.deepEqual(
      waitOutcome(fnWith({ observedGeneration: 2, version: 3, build: { version: 1, phase: 'Succeeded', request: 'r2' } }), { ...target, version: 1 }),
      { done: false, progress: 'rolling to version 1' },
    );
  });
});

describe('rollbackTarget', () => {
  const v = (n: number, phase: 'Succeeded' | 'Failed') => ({ spec: { version: n }, status: { phase } }) as unknown as FunctionVersion;
  const versions = [v(1, 'Succeeded'), v(2, 'Failed'), v(3, 'Succeeded'), v(4, 'Succeeded')];
  it('defaults to the newest built version below the serving one', () => assert.equal(rollbackTarget(versions, 4, undefined).spec.version, 3));
  it('skips failed versions', () => assert.equal(rollbackTarget(versions, 3, undefined).spec.version, 1));
  it('takes --to', () => assert.equal(rollbackTarget(versions, 4, 1).spec.version, 1));
  it('refuses a version without an image, a missing one, and nothing earlier', () => {
    assert.throws(() => rollbackTarget(versions, 4, 2), /version 2 has no image \(its build failed\)/);
    assert.throws(() => rollbackTarget(versions, 4, 9), /version 9 does not exist \(kept: 1, 2, 3, 4\)/);
    assert.throws(() => rollbackTarget(versions, 1, undefined), /no earlier built version/);
  });
});

describe('codeReplacementPatch', () => {
  it('removes files the new code dropped and replaces the rest', () => {
    assert.deepEqual(codeReplacementPatch({ files: { 'a.py': '1', 'b.py': '2' } }, { files: { 'a.py': '3' } }), { files: { 'a.py': '3', 'b.py': null } });
  });
  it('switches between files and an archive', () => {
    assert.deepEqual(codeReplacementPatch({ files: { 'a.py': '1' } }, { archive: 'UEs=' }), { files: null, archive: 'UEs=' });
    assert.deepEqual(codeReplacementPatch({ archive: 'UEs=' }, { files: { 'a.py': '1' } }), { files: { 'a.py': '1' }, archive: null });
  });
});

describe('LinePrefixer', () => {
  it('prefixes whole lines, holding a partial one until it ends', () => {
    let out = '';
    const p = new LinePrefixer('[pod-1] ', (t) => {
      out += t;
    });
    p.push(Buffer.from('one\ntw'));
    assert.equal(out, '[pod-1] one\n');
    p.push(Buffer.from('o\n'));
    p.push(Buffer.from('three'));
    p.end();
    assert.equal(out, '[pod-1] one\n[pod-1] two\n[pod-1] three\n');
  });
});
