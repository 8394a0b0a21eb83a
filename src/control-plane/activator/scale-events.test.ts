// The autoscaler's Event on a Function: reason by direction, the function as involved object, Kubernetes' timestamp format.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ReplicaSet } from '../../core/api/replicaset.js';
import { scaleEvent, scaleReason } from './scale-events.js';

describe('scale events', () => {
  it('names the direction', () => {
    assert.equal(scaleReason({ from: 0, to: 2 }), 'ScaledUp');
    assert.equal(scaleReason({ from: 3, to: 1 }), 'ScaledDown');
    assert.equal(scaleReason({ from: 1, to: 0 }), 'ScaledToZero');
  });

  it('is about the function, in its namespace, with the ReplicaSet and the reason in the message', () => {
    const fn = { apiVersion: 'minik8s.io/v1', kind: 'Function', metadata: { name: 'hello', namespace: 'shop', uid: 'u1' } };
    const replicaSet = { metadata: { name: 'hello-v2' } } as ReplicaSet;
    const event = scaleEvent(fn, { functionKey: 'shop/hello', replicaSet, from: 0, to: 1, reason: 'a request waits', panicking: false }, new Date('2024-01-02T03:04:05.678Z'));
    const { metadata, ...rest } = event as { metadata: { name: string; namespace: string } };
    assert.match(metadata.name, /^hello\.[0-9a-f]{16}$/);
    assert.equal(metadata.namespace, 'shop');
    assert.deepEqual(rest, {
      involvedObject: { apiVersion: 'minik8s.io/v1', kind: 'Function', name: 'hello', namespace: 'shop', uid: 'u1' },
      reason: 'ScaledUp',
      message: 'ReplicaSet hello-v2: 0 -> 1 (a request waits)',
      type: 'Normal',
      source: { component: 'function-autoscaler' },
      firstTimestamp: '2024-01-02T03:04:05Z',
      lastTimestamp: '2024-01-02T03:04:05Z',
      count: 1,
      reportingComponent: 'function-autoscaler',
    });
  });
});
