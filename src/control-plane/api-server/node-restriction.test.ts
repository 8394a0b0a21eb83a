// Table tests of node restriction: what a node may change on its own Node, and on no other.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Node } from '../../core/api/node.js';
import { nodeRestriction, unusableNodeAddress, type NodeRestrictionInput } from './node-restriction.js';

const stored: Node = {
  apiVersion: 'v1',
  kind: 'Node',
  metadata: {
    name: 'n1',
    labels: { 'kubernetes.io/hostname': 'n1', 'node-role.kubernetes.io/worker': '', 'node-restriction.kubernetes.io/tier': 'gold', gpu: 'a100' },
  },
  spec: { podCIDR: '10.244.1.0/24', podCIDRs: ['10.244.1.0/24'], taints: [{ key: 'dedicated', value: 'ml', effect: 'NoSchedule' }] },
  status: {
    addresses: [
      { type: 'InternalIP', address: '192.168.1.11' },
      { type: 'Hostname', address: 'n1' },
    ],
    daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
  },
};

/** The stored Node with `change` applied to a copy. */
function changed(change: (n: Node) => void): Node {
  const copy = structuredClone(stored);
  change(copy);
  return copy;
}

function judge(next: Node, extra: Partial<NodeRestrictionInput> = {}): string | undefined {
  return nodeRestriction({ nodeName: 'n1', old: stored, next, otherNodeAddresses: new Set(['192.168.1.12']), ...extra });
}

test('node restriction: spec and metadata writes', () => {
  const cases: [string, Node, RegExp | undefined][] = [
    ['no change', changed(() => {}), undefined],
    ['its own label outside kubernetes.io', changed((n) => (n.metadata.labels!.gpu = 'h100')), undefined],
    ['a kubelet label', changed((n) => (n.metadata.labels!['topology.kubernetes.io/zone'] = 'z1')), undefined],
    [
      'adds a role',
      changed((n) => (n.metadata.labels!['node-role.kubernetes.io/control-plane'] = '')),
      /^node "n1" is not allowed to modify labels: node-role\.kubernetes\.io\/control-plane$/,
    ],
    ['removes a role', changed((n) => delete n.metadata.labels!['node-role.kubernetes.io/worker']), /modify labels: node-role\.kubernetes\.io\/worker/],
    ['changes a node-restriction label', changed((n) => (n.metadata.labels!['node-restriction.kubernetes.io/tier'] = 'x')), /modify labels: node-restriction/],
    ['clears taints', changed((n) => delete n.spec!.taints), /^node "n1" is not allowed to modify taints$/],
    ['adds a taint', changed((n) => n.spec!.taints!.push({ key: 'x', effect: 'NoExecute' })), /modify taints/],
    ['cordons itself', changed((n) => (n.spec!.unschedulable = true)), /modify unschedulable/],
    ['changes its pod CIDR', changed((n) => (n.spec!.podCIDR = '10.244.2.0/24')), /modify pod CIDR/],
    ['adds a finalizer', changed((n) => (n.metadata.finalizers = ['example.com/hold'])), /modify finalizers/],
    ['adds an owner reference', changed((n) => (n.metadata.ownerReferences = [{ apiVersion: 'v1', kind: 'Pod', name: 'p', uid: 'u' }])), /set OwnerReferences/],
    ['another Node', changed((n) => (n.metadata.name = 'n2')), /^node "n1" is not allowed to modify node "n2"$/],
  ];
  for (const [what, next, want] of cases) {
    const got = judge(next);
    if (want === undefined) assert.equal(got, undefined, what);
    else assert.match(got ?? '(allowed)', want, what);
  }
});

test('node restriction: a create may not set restricted labels', () => {
  const next = changed((n) => (n.metadata.labels = { 'node-role.kubernetes.io/control-plane': '' }));
  assert.match(judge(next, { old: undefined }) ?? '', /^node "n1" is not allowed to set the following labels: node-role\.kubernetes\.io\/control-plane$/);
});

test('node restriction: status addresses and the kubelet port', () => {
  const withAddress = (address: string) => changed((n) => (n.status!.addresses = [{ type: 'InternalIP', address }]));
  const status = { subresource: 'status' };
  const cases: [string, Node, Partial<NodeRestrictionInput>, RegExp | undefined][] = [
    ['a heartbeat', changed(() => {}), status, undefined],
    ['a new routable address', withAddress('192.168.1.20'), status, undefined],
    ['loopback', withAddress('127.0.0.1'), status, /not allowed to report InternalIP 127\.0\.0\.1: it is a loopback address/],
    ['loopback v6', withAddress('::1'), status, /loopback/],
    ['mapped loopback', withAddress('::ffff:127.0.0.1'), status, /loopback/],
    ['unspecified', withAddress('0.0.0.0'), status, /unspecified/],
    ['link-local', withAddress('169.254.169.254'), status, /link-local/],
    ['link-local v6', withAddress('fe80::1'), status, /link-local/],
    ['localhost by name', changed((n) => (n.status!.addresses = [{ type: 'Hostname', address: 'localhost' }])), status, /loopback name/],
    ['another node', withAddress('192.168.1.12'), status, /another node reports that address/],
    ['another node, sharing allowed', withAddress('192.168.1.12'), { ...status, allowShared: true }, undefined],
    ['loopback on a loopback master', withAddress('127.0.0.1'), { ...status, allowLoopback: true }, undefined],
    ['link-local on a loopback master', withAddress('169.254.1.1'), { ...status, allowLoopback: true }, /link-local/],
    [
      'moves its kubelet port',
      changed((n) => (n.status!.daemonEndpoints = { kubeletEndpoint: { Port: 31337 } })),
      status,
      /change its kubelet port from 10250 to 31337/,
    ],
    ['drops its kubelet port', changed((n) => delete n.status!.daemonEndpoints), status, /from 10250 to none/],
  ];
  for (const [what, next, extra, want] of cases) {
    const got = judge(next, extra);
    if (want === undefined) assert.equal(got, undefined, what);
    else assert.match(got ?? '(allowed)', want, what);
  }
  // The first heartbeat (no port yet) names any port.
  const first = judge(
    changed((n) => (n.status!.daemonEndpoints = { kubeletEndpoint: { Port: 10251 } })),
    {
      ...status,
      old: changed((n) => delete n.status!.daemonEndpoints),
    },
  );
  assert.equal(first, undefined);
});

test('unusableNodeAddress accepts routable addresses and names', () => {
  for (const a of ['10.0.0.1', '192.168.1.1', '2001:db8::1', 'node1.example.com']) assert.equal(unusableNodeAddress(a), undefined, a);
});
