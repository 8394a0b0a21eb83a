// Table tests for JSON merge patch, including the RFC 7386 appendix examples.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyMergePatch } from './merge-patch.js';

const cases: [string, unknown, unknown, unknown][] = [
  ['replace a value', { a: 'b' }, { a: 'c' }, { a: 'c' }],
  ['add a key', { a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
  ['null removes', { a: 'b' }, { a: null }, {}],
  ['null removes one of two', { a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
  ['arrays replace', { a: ['b'] }, { a: 'c' }, { a: 'c' }],
  ['value replaces array', { a: 'c' }, { a: ['b'] }, { a: ['b'] }],
  ['nested merge', { a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
  ['array of objects replaces', { a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
  ['non-object patch replaces', ['a', 'b'], ['c', 'd'], ['c', 'd']],
  ['object over non-object', { a: 'b' }, ['c'], ['c']],
  ['null patch value', { a: 'foo' }, null, null],
  ['string patch', { a: 'foo' }, 'bar', 'bar'],
  ['null in nested new object is dropped', {}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
];

for (const [name, target, patch, want] of cases) {
  test(`merge patch: ${name}`, () => {
    const before = JSON.stringify(target);
    assert.deepEqual(applyMergePatch(target, patch), want);
    assert.equal(JSON.stringify(target), before, 'target must not be mutated');
  });
}
