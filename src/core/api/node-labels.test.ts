// Table of which labels a node may set on itself (Kubernetes' NodeRestriction rule).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { nodeMaySetLabel } from './node-labels.js';

test('a node may set its kubelet labels and labels outside kubernetes.io, never roles or node-restriction labels', () => {
  const cases: [string, boolean][] = [
    ['kubernetes.io/hostname', true],
    ['kubernetes.io/arch', true],
    ['topology.kubernetes.io/zone', true],
    ['node.kubernetes.io/instance-type', true],
    ['node.kubernetes.io/anything', true],
    ['kubelet.kubernetes.io/x', true],
    ['gpu', true],
    ['example.com/rack', true],
    ['node-role.kubernetes.io/control-plane', false],
    ['node-role.kubernetes.io/worker', false],
    ['kubernetes.io/role', false],
    ['node-restriction.kubernetes.io/tier', false],
    ['team.node-restriction.kubernetes.io/tier', false],
    ['k8s.io/x', false],
    ['foo.k8s.io/x', false],
    ['evilkubernetes.io/x', true],
  ];
  for (const [key, allowed] of cases) assert.equal(nodeMaySetLabel(key), allowed, key);
});
