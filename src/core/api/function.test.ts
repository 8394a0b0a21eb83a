// Unit tests of the Function and FunctionVersion kinds: defaults, validation with field paths, the code size limit, names, columns and immutable versions.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { functionKind, MAX_CODE_BYTES, type FunctionObject } from './function.js';
import { functionVersionKind, versionMatches, type FunctionVersion } from './function-version.js';
import { kindByName } from './registry.js';
import { validateObject, validateUpdate } from './validate.js';
import { InvalidError } from '../errors.js';

const valid = {
  apiVersion: 'minik8s.io/v1',
  kind: 'Function',
  metadata: { name: 'hello', namespace: 'default' },
  spec: { code: { files: { 'handler.py': 'def handler(event, context):\n    return event\n' } } },
};

function causes(spec: unknown): string[] {
  try {
    validateObject(functionKind, { ...valid, spec });
  } catch (err) {
    assert.ok(err instanceof InvalidError, String(err));
    return (err as InvalidError).toStatus().details?.causes?.map((c) => `${c.field}: ${c.reason}: ${c.message}`) ?? [];
  }
  return [];
}

describe('Function kind', () => {
  it('fills the defaults of the contract', () => {
    const fn = validateObject(functionKind, valid) as FunctionObject;
    assert.equal(fn.spec.runtime, 'python3');
    assert.equal(fn.spec.handler, 'handler.handler');
    assert.deepEqual(fn.spec.scaling, { target: 10, minScale: 0, maxScale: 10, idleGraceSeconds: 30 });
    assert.equal(fn.spec.timeoutSeconds, 60);
    assert.equal(fn.spec.updateStrategy, 'Soft');
  });

  it('is what `get fn`, `get functions` and `get function.minik8s.io` name; versions are fnv', () => {
    for (const name of ['fn', 'function', 'functions', 'Function', 'function.minik8s.io']) assert.equal(kindByName(name), functionKind, name);
    for (const name of ['fnv', 'functionversions']) assert.equal(kindByName(name), functionVersionKind, name);
  });

  it('prints VERSION, URL and READY (ready of desired)', () => {
    const fn = {
      ...(validateObject(functionKind, valid) as FunctionObject),
      status: { version: 2, url: 'http://10.0.0.1:8090/function/hello', replicas: 3, readyReplicas: 1 },
    };
    assert.deepEqual(
      functionKind.columns!.filter((c) => !c.wide).map((c) => [c.name, c.value(fn)]),
      [
        ['VERSION', '2'],
        ['URL', 'http://10.0.0.1:8090/function/hello'],
        ['READY', '1/3'],
      ],
    );
    const fresh = validateObject(functionKind, valid) as FunctionObject;
    assert.deepEqual(
      functionKind.columns!.filter((c) => !c.wide).map((c) => c.value(fresh)),
      ['<none>', '<none>', '0/0'],
    );
  });

  it('accepts an archive, triggers, env, resources and scaling', () => {
    assert.deepEqual(
      causes({
        code: { archive: Buffer.from('PK\u0005\u0006').toString('base64') },
        handler: 'app.main.run',
        requirements: 'requests==2.31\n',
        env: [{ name: 'GREETING', value: 'hi' }],
        resources: { limits: { cpu: '500m', memory: '128Mi' } },
        scaling: { target: 5, minScale: 1, maxScale: 3, idleGraceSeconds: 0 },
        timeoutSeconds: 5,
        updateStrategy: 'Hard',
        triggers: [{ schedule: '*/1 * * * *', data: { tick: true } }, { schedule: '@hourly' }],
      }),
      [],
    );
  });

  const bad: [string, unknown, RegExp][] = [
    ['no code', {}, /^spec\.code: FieldValueRequired/m],
    ['both files and archive', { code: { files: { 'handler.py': 'x' }, archive: 'UEs=' } }, /^spec\.code: FieldValueRequired: .*exactly one of files/m],
    ['an archive that is not base64', { code: { archive: 'not base64!' } }, /^spec\.code\.archive: FieldValueInvalid: .*must be base64/m],
    [
      "code without the handler's file",
      { code: { files: { 'main.py': 'x' } } },
      /^spec\.handler: FieldValueInvalid: .*has no handler\.py or handler\/__init__\.py/m,
    ],
    [
      'a file path climbing out',
      { code: { files: { 'handler.py': 'x', '../etc/passwd': 'x' } } },
      /^spec\.code\.files\[\.\.\/etc\/passwd\]: FieldValueInvalid/m,
    ],
    [
      'an absolute file path',
      { code: { files: { 'handler.py': 'x', '/abs.py': 'x' } } },
      /^spec\.code\.files\[\/abs\.py\]: FieldValueInvalid: .*relative path/m,
    ],
    ['a handler that is no module.function', { handler: 'handler', code: valid.spec.code }, /^spec\.handler: FieldValueInvalid: .*module\.function/m],
    ['another runtime', { runtime: 'node18', code: valid.spec.code }, /^spec\.runtime: FieldValueNotSupported: .*"python3"/m],
    [
      'minScale above maxScale',
      { code: valid.spec.code, scaling: { minScale: 5, maxScale: 2 } },
      /^spec\.scaling\.minScale: FieldValueInvalid: .*maxScale \(2\)/m,
    ],
    ['a target of 0', { code: valid.spec.code, scaling: { target: 0 } }, /^spec\.scaling\.target: FieldValueInvalid/m],
    ['a timeout past 900 s', { code: valid.spec.code, timeoutSeconds: 901 }, /^spec\.timeoutSeconds: FieldValueInvalid/m],
    ['an unknown strategy', { code: valid.spec.code, updateStrategy: 'Rolling' }, /^spec\.updateStrategy: FieldValueNotSupported/m],
    [
      'an environment name the runtime sets',
      { code: valid.spec.code, env: [{ name: 'MINIK8S_HANDLER', value: 'x' }] },
      /^spec\.env\[0\]\.name: FieldValueInvalid: .*set by the function runtime/m,
    ],
    [
      'the same environment name twice',
      {
        code: valid.spec.code,
        env: [
          { name: 'A', value: '1' },
          { name: 'A', value: '2' },
        ],
      },
      /^spec\.env\[1\]\.name: FieldValueDuplicate/m,
    ],
    [
      'a request above its limit',
      { code: valid.spec.code, resources: { requests: { cpu: '2' }, limits: { cpu: '1' } } },
      /^spec\.resources\.requests\[cpu\]: FieldValueInvalid/m,
    ],
    [
      'a schedule of four fields',
      { code: valid.spec.code, triggers: [{ schedule: '* * * *' }] },
      /^spec\.triggers\[0\]\.schedule: FieldValueInvalid: .*five fields/m,
    ],
    [
      'a schedule that never fires',
      { code: valid.spec.code, triggers: [{ schedule: '0 0 31 2 *' }] },
      /^spec\.triggers\[0\]\.schedule: FieldValueInvalid: .*never fires/m,
    ],
    ['codePath (the CLI reads it; the server never sees one)', { code: valid.spec.code, codePath: './code' }, /unknown field "spec\.codePath"/m],
  ];
  for (const [name, spec, want] of bad) it(`refuses ${name}`, () => assert.match(causes(spec).join('\n'), want));

  it('refuses code over 1 MiB as stored', () => {
    const big = { code: { files: { 'handler.py': 'def handler(e, c): pass\n', 'data.txt': 'x'.repeat(MAX_CODE_BYTES) } } };
    assert.match(causes(big).join('\n'), /^spec\.code: FieldValueInvalid: .*must be no more than 1048576 bytes \(1 MiB\) as stored/m);
  });
});

describe('FunctionVersion kind', () => {
  const fn = validateObject(functionKind, valid) as FunctionObject;
  const version = validateObject(functionVersionKind, {
    apiVersion: 'minik8s.io/v1',
    kind: 'FunctionVersion',
    metadata: { name: 'hello-v1', namespace: 'default' },
    spec: { function: 'hello', version: 1, template: fn.spec, buildHash: 'a'.repeat(64) },
  }) as FunctionVersion;

  it('matches the spec it was made from, whatever its scaling or triggers', () => {
    assert.ok(versionMatches(version, fn.spec));
    assert.ok(
      versionMatches(version, { ...fn.spec, scaling: { ...fn.spec.scaling, maxScale: 50 }, updateStrategy: 'Hard', triggers: [{ schedule: '@daily' }] }),
    );
    assert.ok(!versionMatches(version, { ...fn.spec, env: [{ name: 'A', value: '1' }] }));
    assert.ok(!versionMatches(version, { ...fn.spec, timeoutSeconds: 5 }));
  });

  it('is immutable', () => {
    const changed = { ...version, spec: { ...version.spec, buildHash: 'b'.repeat(64) } };
    assert.throws(
      () => validateUpdate(functionVersionKind, version, changed),
      (err: unknown) => err instanceof InvalidError && /immutable/.test(err.message),
    );
    validateUpdate(functionVersionKind, version, { ...version, metadata: { ...version.metadata, labels: { a: 'b' } } });
  });
});
