// Quantity parsing, milli conversion, canonical formatting and the schema.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as v from 'valibot';
import { formatQuantity, parseQuantity, quantitySchema, resourceListSchema, toMilli } from './quantity.js';

describe('parseQuantity', () => {
  const cases: [string | number, number][] = [
    ['500m', 0.5],
    ['1', 1],
    ['0', 0],
    ['2.5', 2.5],
    ['.5', 0.5],
    ['100n', 1e-7],
    ['10u', 1e-5],
    ['1k', 1000],
    ['1M', 1e6],
    ['3G', 3e9],
    ['1T', 1e12],
    ['1P', 1e15],
    ['1E', 1e18],
    ['1Ki', 1024],
    ['128Mi', 128 * 1024 ** 2],
    ['1Gi', 1024 ** 3],
    ['1.5Gi', 1.5 * 1024 ** 3],
    ['2Ti', 2 * 1024 ** 4],
    ['1Pi', 1024 ** 5],
    ['1Ei', 1024 ** 6],
    ['1e3', 1000],
    ['1E3', 1000],
    ['5e-3', 0.005],
    ['-1', -1],
    ['+2', 2],
    [3, 3],
    [0.25, 0.25],
  ];
  for (const [input, want] of cases) {
    it(`${JSON.stringify(input)} -> ${want}`, () => assert.equal(parseQuantity(input), want));
  }

  for (const bad of ['', 'lots', '12 GB', '1Gb', '1KiB', 'm', '1.2.3', ' 1', '1 ', '1mi', '0x10', 'Infinity', '--1']) {
    it(`rejects ${JSON.stringify(bad)}`, () => assert.throws(() => parseQuantity(bad), /quantities must match the regular expression/));
  }
  it('rejects non-finite numbers', () => assert.throws(() => parseQuantity(Number.NaN), /finite/));
});

describe('toMilli', () => {
  const cases: [string | number, number][] = [
    ['500m', 500],
    ['2', 2000],
    ['0.1', 100],
    ['1.5', 1500],
    ['1n', 1],
    ['250m', 250],
    [0.3, 300],
    ['1Ki', 1024000],
  ];
  for (const [input, want] of cases) it(`${input} -> ${want}`, () => assert.equal(toMilli(input), want));
});

describe('formatQuantity', () => {
  const cases: [number, boolean, string][] = [
    [0, false, '0'],
    [0.5, false, '500m'],
    [1, false, '1'],
    [1500, false, '1500'],
    [2000, false, '2k'],
    [3e9, false, '3G'],
    [0.0001, false, '100u'],
    [1e-9, false, '1n'],
    [-0.25, false, '-250m'],
    [1024, true, '1Ki'],
    [1024 ** 3, true, '1Gi'],
    [1.5 * 1024 ** 3, true, '1536Mi'],
    [1000, true, '1k'],
    [1500, true, '1500'],
  ];
  for (const [value, binary, want] of cases) {
    it(`${value}${binary ? ' (binary)' : ''} -> ${want}`, () => assert.equal(formatQuantity(value, { binary }), want));
  }
  it('round-trips through parseQuantity', () => {
    for (const q of ['250m', '64Mi', '3', '1k', '10u'])
      assert.equal(parseQuantity(formatQuantity(parseQuantity(q), { binary: q.endsWith('i') })), parseQuantity(q));
  });
});

describe('quantitySchema', () => {
  it('accepts strings and numbers', () => {
    for (const q of ['1', '100m', '1Gi', 2, 0.5]) assert.ok(v.safeParse(quantitySchema, q).success, String(q));
  });
  it('rejects bad strings with the Kubernetes message', () => {
    const r = v.safeParse(quantitySchema, 'lots');
    assert.equal(r.success, false);
    assert.match(r.issues![0].message, /^quantities must match the regular expression/);
  });
  it('resource lists reject negative quantities', () => {
    assert.equal(v.safeParse(resourceListSchema, { cpu: '-1' }).success, false);
    assert.ok(v.safeParse(resourceListSchema, { cpu: '1', memory: '1Gi', 'nvidia.com/gpu': 1 }).success);
  });
});
