// ConfigMap: schema checks, immutability on update, kubectl's NAME DATA AGE columns and the `cm` short name.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type ConfigMap, configMapBytes, configMapKind } from './configmap.js';
import { kindByName } from './registry.js';
import { tableColumns } from './table.js';
import { validateObject } from './validate.js';

const cm = (fields: object) =>
  validateObject(configMapKind, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'default' }, ...fields }) as ConfigMap;

describe('configmap', () => {
  it('accepts text and binary keys and reads either as bytes', () => {
    const c = cm({ data: { 'app.conf': 'x=1\n' }, binaryData: { blob: Buffer.from([0, 255]).toString('base64') } });
    assert.equal(configMapBytes(c, 'app.conf')?.toString(), 'x=1\n');
    assert.deepEqual([...configMapBytes(c, 'blob')!], [0, 255]);
    assert.equal(configMapBytes(c, 'none'), undefined);
  });

  const bad: [string, object, RegExp][] = [
    ['a key with a slash', { data: { 'a/b': 'x' } }, /a valid config key/],
    ['a key starting with ..', { data: { '..data': 'x' } }, /must not be '\.' or '\.\.'/],
    ['binaryData that is not base64', { binaryData: { b: '***' } }, /base64/],
    ['a key in both maps', { data: { k: 'x' }, binaryData: { k: 'eA==' } }, /duplicate of key present in binaryData/],
    ['more than 1 MiB', { data: { k: 'x'.repeat(1024 * 1024 + 1) } }, /Too long: must have at most 1048576 bytes/],
    ['a non-string value', { data: { k: 1 } }, /data/],
  ];
  for (const [what, fields, message] of bad) it(`refuses ${what}`, () => assert.throws(() => cm(fields), message));

  it('keeps an immutable one as it is, and lets a mutable one change', () => {
    const old = cm({ data: { k: 'a' }, immutable: true });
    const problems = configMapKind.validateUpdate!(old, cm({ data: { k: 'b' }, immutable: true }));
    assert.deepEqual(
      problems.map((p) => [p.path.join('.'), p.detail]),
      [['data', 'field is immutable when `immutable` is set']],
    );
    assert.deepEqual(
      configMapKind.validateUpdate!(old, cm({ data: { k: 'a' } })).map((p) => p.path.join('.')),
      ['immutable'],
    );
    assert.deepEqual(configMapKind.validateUpdate!(old, cm({ data: { k: 'a' }, immutable: true })), []);
    assert.deepEqual(configMapKind.validateUpdate!(cm({ data: { k: 'a' } }), cm({ data: { k: 'b' }, immutable: true })), []);
  });

  it('prints NAME DATA AGE, counting both maps, and is found as cm', () => {
    assert.deepEqual(
      tableColumns(configMapKind).map((c) => c.header),
      ['NAME', 'DATA', 'AGE'],
    );
    assert.equal(configMapKind.columns![0]!.value(cm({ data: { a: '1', b: '2' }, binaryData: { c: 'eA==' } })), '3');
    assert.equal(configMapKind.columns![0]!.value(cm({})), '0');
    assert.equal(kindByName('cm'), configMapKind);
    assert.equal(kindByName('configmaps'), configMapKind);
  });
});
