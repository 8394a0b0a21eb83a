// The finalizers a DELETE leaves on an owner for each propagation policy, and the legacy orphanDependents.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { podKind } from './pod.js';
import { replicaSetKind } from './replicaset.js';
import { effectivePolicy, finalizersForDeletion, ownsDependents, type PropagationPolicy } from './deletion-propagation.js';

describe('finalizersForDeletion', () => {
  const cases: [string, string[], PropagationPolicy | undefined, string[]][] = [
    ['default is background: nothing added', [], undefined, []],
    ['foreground adds foregroundDeletion', ['x'], 'Foreground', ['x', 'foregroundDeletion']],
    ['orphan adds orphan', [], 'Orphan', ['orphan']],
    ['orphan replaces foreground', ['foregroundDeletion'], 'Orphan', ['orphan']],
    ['background drops both', ['orphan', 'x'], 'Background', ['x']],
    ['no policy keeps an orphan finalizer already there', ['orphan'], undefined, ['orphan']],
    ['foreground twice: once', ['foregroundDeletion'], 'Foreground', ['foregroundDeletion']],
  ];
  for (const [name, current, policy, want] of cases) {
    it(name, () => assert.deepEqual(finalizersForDeletion(current, policy), want));
  }
});

describe('effectivePolicy', () => {
  it('propagationPolicy, else orphanDependents, else none', () => {
    assert.equal(effectivePolicy({ propagationPolicy: 'Foreground' }), 'Foreground');
    assert.equal(effectivePolicy({ orphanDependents: true }), 'Orphan');
    assert.equal(effectivePolicy({ orphanDependents: false }), 'Background');
    assert.equal(effectivePolicy({}), undefined);
  });
  it('only owner kinds take the policy', () => {
    assert.equal(ownsDependents(replicaSetKind), true);
    assert.equal(ownsDependents(podKind), false);
  });
});
