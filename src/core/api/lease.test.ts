// Lease: schema, MicroTime, the node lease a kubelet writes, and kubectl's HOLDER column.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type Lease, leaseKind, leaseRenewedAt, microTime, NODE_LEASE_NAMESPACE, nodeLease } from './lease.js';
import { kindByName } from './registry.js';
import { tableColumns } from './table.js';
import { validateObject } from './validate.js';

const lease = (spec: object) =>
  validateObject(leaseKind, { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'n1', namespace: NODE_LEASE_NAMESPACE }, spec }) as Lease;

describe('lease', () => {
  it('writes MicroTime with six fraction digits', () => {
    assert.equal(microTime(new Date('2030-01-02T03:04:05.678Z')), '2030-01-02T03:04:05.678000Z');
  });

  it('accepts a node lease and reads its renew time', () => {
    const l = lease({ holderIdentity: 'n1', leaseDurationSeconds: 40, renewTime: '2030-01-02T03:04:05.678901Z' });
    assert.equal(l.spec?.holderIdentity, 'n1');
    assert.equal(leaseRenewedAt(l), Date.parse('2030-01-02T03:04:05.678Z'));
    assert.equal(leaseRenewedAt(lease({})), undefined);
  });

  const bad: [string, object, RegExp][] = [
    ['a zero duration', { leaseDurationSeconds: 0 }, /leaseDurationSeconds.*greater than 0/],
    ['a negative transition count', { leaseTransitions: -1 }, /leaseTransitions/],
    ['a renew time that is no time', { renewTime: 'yesterday' }, /renewTime.*RFC 3339/],
    ['an unknown strategy', { strategy: 'Newest' }, /strategy.*OldestEmulationVersion/],
    ['a preferred holder without a strategy', { preferredHolder: 'a' }, /strategy is defined/],
    ['an unknown field', { holder: 'n1' }, /holder/],
  ];
  for (const [what, spec, message] of bad) it(`refuses ${what}`, () => assert.throws(() => lease(spec), message));

  it('builds the lease a kubelet renews, owned by its Node', () => {
    const l = nodeLease({ nodeName: 'n1', nodeUid: 'u1', now: new Date('2030-01-01T00:00:10Z') });
    assert.deepEqual(l.metadata, {
      name: 'n1',
      namespace: 'kube-node-lease',
      ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'n1', uid: 'u1' }],
    });
    assert.deepEqual(l.spec, { holderIdentity: 'n1', leaseDurationSeconds: 40, renewTime: '2030-01-01T00:00:10.000000Z' });
    assert.deepEqual(validateObject(leaseKind, l).spec, l.spec);
  });

  it('prints NAME HOLDER AGE, and is found by its names', () => {
    assert.deepEqual(
      tableColumns(leaseKind).map((c) => c.header),
      ['NAME', 'HOLDER', 'AGE'],
    );
    assert.equal(leaseKind.columns![0]!.value(lease({ holderIdentity: 'n1' })), 'n1');
    assert.equal(leaseKind.columns![0]!.value(lease({})), '');
    assert.equal(kindByName('leases'), leaseKind);
    assert.equal(kindByName('lease.coordination.k8s.io'), leaseKind);
  });
});
