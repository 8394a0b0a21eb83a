// wait's --for and --timeout parsing, and when each condition holds.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../core/api/meta.js';
import { conditionMet, parseFor, parseTimeout } from './wait.js';

const pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p' },
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
} as unknown as KubeObject;

describe('wait', () => {
  it('reads --for as kubectl does', () => {
    assert.deepEqual(parseFor('delete'), { type: 'delete' });
    assert.deepEqual(parseFor('condition=Ready'), { type: 'condition', name: 'Ready', value: 'true' });
    assert.deepEqual(parseFor('condition=Ready=false'), { type: 'condition', name: 'Ready', value: 'false' });
    assert.equal(parseFor('jsonpath={.status.phase}=Running').type, 'jsonpath');
    assert.throws(() => parseFor('foo'), { message: 'unrecognized condition: "foo"' });
    assert.throws(() => parseFor(undefined), /--for must be specified/);
  });

  it('reads durations', () => {
    assert.equal(parseTimeout(undefined), 30_000);
    assert.equal(parseTimeout('1m30s'), 90_000);
    assert.equal(parseTimeout('250ms'), 250);
    assert.throws(() => parseTimeout('soon'), /invalid duration "soon"/);
  });

  it('checks conditions, jsonpath values, and absence', () => {
    assert.equal(conditionMet(parseFor('condition=ready'), pod), true);
    assert.equal(conditionMet(parseFor('condition=Ready=False'), pod), false);
    assert.equal(conditionMet(parseFor('jsonpath={.status.phase}=Running'), pod), true);
    assert.equal(conditionMet(parseFor('jsonpath={.status.phase}=Pending'), pod), false);
    assert.equal(conditionMet(parseFor('jsonpath={.status.phase}'), pod), true);
    assert.equal(conditionMet(parseFor('delete'), undefined), true);
    assert.equal(conditionMet(parseFor('delete'), pod), false);
  });
});
