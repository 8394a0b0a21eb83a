// The autoscaler's Event on a Function: reason by direction, and the ReplicaSet and the reason in the message.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ReplicaSet } from '../../core/api/replicaset.js';
import { scaleMessage, scaleReason } from './scale-events.js';

describe('scale events', () => {
  it('names the direction', () => {
    assert.equal(scaleReason({ from: 0, to: 2 }), 'ScaledUp');
    assert.equal(scaleReason({ from: 3, to: 1 }), 'ScaledDown');
    assert.equal(scaleReason({ from: 1, to: 0 }), 'ScaledToZero');
  });

  it('says which ReplicaSet moved, from and to, and why', () => {
    const replicaSet = { metadata: { name: 'hello-v2' } } as ReplicaSet;
    assert.equal(scaleMessage({ replicaSet, from: 0, to: 1, reason: 'a request waits' }), 'ReplicaSet hello-v2: 0 -> 1 (a request waits)');
  });
});
