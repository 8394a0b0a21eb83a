// label/annotate argument splitting and the patch they send, with kubectl's errors.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { metadataPatch, splitUpdates } from './label.js';

describe('label and annotate updates', () => {
  it('splits resources from KEY=VAL and KEY- as kubectl does', () => {
    assert.deepEqual(splitUpdates(['pod', 'web', 'a=1', 'b-'], 'labels'), { resources: ['pod', 'web'], changes: { set: { a: '1' }, remove: ['b'] } });
    assert.throws(() => splitUpdates(['pod/web'], 'labels'), /at least one label update is required/);
    assert.throws(() => splitUpdates(['pod/web'], 'annotations'), /at least one annotation update is required/);
    assert.throws(() => splitUpdates(['pod/web', 'a=1', 'a-'], 'labels'), /can not both modify and remove/);
    assert.throws(() => splitUpdates(['pod/web', 'a=not valid'], 'labels'), /invalid label value/);
    assert.deepEqual(splitUpdates(['pod/web', 'note=any text'], 'annotations').changes.set, { note: 'any text' });
  });

  it('refuses to change a value without --overwrite, in kubectl words', () => {
    assert.throws(() => metadataPatch({ a: '1' }, { set: { a: '2' }, remove: [] }, 'labels', false), {
      message: "'a' already has a value (1), and --overwrite is false",
    });
    assert.throws(() => metadataPatch({ a: '1' }, { set: { a: '2' }, remove: [] }, 'annotations', false), {
      message: "--overwrite is false but found the following declared annotation(s): 'a' already has a value (1)",
    });
    assert.deepEqual(metadataPatch({ a: '1' }, { set: { a: '2' }, remove: [] }, 'labels', true), { patch: { a: '2' }, changed: true, missing: [] });
  });

  it('patches only what changes; removals are nulls and missing keys are reported', () => {
    assert.deepEqual(metadataPatch({ a: '1', b: '2' }, { set: { a: '1' }, remove: ['b', 'c'] }, 'labels', false), {
      patch: { b: null },
      changed: true,
      missing: ['c'],
    });
    assert.equal(metadataPatch({ a: '1' }, { set: { a: '1' }, remove: [] }, 'labels', false).changed, false);
  });
});
