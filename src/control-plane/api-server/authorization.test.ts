// The authorization policy, table-driven: request attributes from paths, who may do what, and the 403 wording.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { UserInfo } from './auth.js';
import { authorize, forbiddenMessage, needsBodyName, needsPodLookup, nodeNameOf, requestAttributes, type RequestAttributes } from './authorization.js';

const admin: UserInfo = { name: 'admin', groups: ['system:masters'] };
const n1: UserInfo = { name: 'system:node:n1', groups: ['system:nodes'] };
const boot: UserInfo = { name: 'system:bootstrap:abcdef', groups: ['system:bootstrappers'] };
const stranger: UserInfo = { name: 'jane', groups: ['developers'] };
const nameless: UserInfo = { name: 'kubelet', groups: ['system:nodes'] };

describe('requestAttributes', () => {
  const cases: [string, string, { watch?: string }, Partial<RequestAttributes>][] = [
    ['GET', '/api/v1/namespaces/default/pods', {}, { verb: 'list', resource: { group: '', version: 'v1', resource: 'pods', namespace: 'default' } }],
    [
      'GET',
      '/api/v1/namespaces/default/pods',
      { watch: '1' },
      { verb: 'watch', resource: { group: '', version: 'v1', resource: 'pods', namespace: 'default' } },
    ],
    ['GET', '/api/v1/pods', { watch: 'true' }, { verb: 'watch', resource: { group: '', version: 'v1', resource: 'pods' } }],
    [
      'GET',
      '/api/v1/namespaces/default/pods/web',
      {},
      { verb: 'get', resource: { group: '', version: 'v1', resource: 'pods', namespace: 'default', name: 'web' } },
    ],
    [
      'PATCH',
      '/api/v1/namespaces/default/pods/web/status',
      {},
      { verb: 'patch', resource: { group: '', version: 'v1', resource: 'pods', namespace: 'default', name: 'web', subresource: 'status' } },
    ],
    ['PUT', '/api/v1/nodes/n1/status', {}, { verb: 'update', resource: { group: '', version: 'v1', resource: 'nodes', name: 'n1', subresource: 'status' } }],
    [
      'DELETE',
      '/api/v1/namespaces/default/pods',
      {},
      { verb: 'deletecollection', resource: { group: '', version: 'v1', resource: 'pods', namespace: 'default' } },
    ],
    ['DELETE', '/api/v1/namespaces/default', {}, { verb: 'delete', resource: { group: '', version: 'v1', resource: 'namespaces', name: 'default' } }],
    [
      'PUT',
      '/api/v1/namespaces/ns1/status',
      {},
      { verb: 'update', resource: { group: '', version: 'v1', resource: 'namespaces', name: 'ns1', subresource: 'status' } },
    ],
    [
      'POST',
      '/apis/apps/v1/namespaces/x/deployments',
      {},
      { verb: 'create', resource: { group: 'apps', version: 'v1', resource: 'deployments', namespace: 'x' } },
    ],
    ['POST', '/apis/minik8s.io/v1/join', {}, { verb: 'create', resource: { group: 'minik8s.io', version: 'v1', resource: 'join' } }],
    [
      'DELETE',
      '/apis/minik8s.io/v1/jointokens/abcdef',
      {},
      { verb: 'delete', resource: { group: 'minik8s.io', version: 'v1', resource: 'jointokens', name: 'abcdef' } },
    ],
    [
      'POST',
      '/apis/authentication.k8s.io/v1/tokenreviews',
      {},
      { verb: 'create', resource: { group: 'authentication.k8s.io', version: 'v1', resource: 'tokenreviews' } },
    ],
    [
      'GET',
      '/api/v1/namespaces/d/pods/web/log',
      {},
      { verb: 'get', resource: { group: '', version: 'v1', resource: 'pods', namespace: 'd', name: 'web', subresource: 'log' } },
    ],
    [
      'POST',
      '/api/v1/namespaces/d/pods/web/binding',
      {},
      { verb: 'create', resource: { group: '', version: 'v1', resource: 'pods', namespace: 'd', name: 'web', subresource: 'binding' } },
    ],
    ['GET', '/api', {}, { verb: 'get' }],
    ['GET', '/api/v1', {}, { verb: 'get' }],
    ['GET', '/apis/apps/v1', {}, { verb: 'get' }],
    ['POST', '/version', {}, { verb: 'post' }],
  ];
  for (const [method, path, query, want] of cases) {
    it(`${method} ${path}${query.watch ? '?watch' : ''}`, () => {
      const got = requestAttributes(method, path, query);
      assert.equal(got.verb, want.verb);
      assert.deepEqual(got.resource, want.resource);
      assert.equal(got.path, path);
    });
  }
});

const LEASES = '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases';

describe('authorize', () => {
  const attrs = (method: string, path: string, extra: Partial<RequestAttributes> = {}, query: { watch?: string } = {}) => ({
    ...requestAttributes(method, path, query),
    ...extra,
  });
  const cases: [string, UserInfo, RequestAttributes, boolean, RegExp?][] = [
    // Admins: everything.
    ['admin creates pods', admin, attrs('POST', '/api/v1/namespaces/default/pods'), true],
    ['admin deletes nodes', admin, attrs('DELETE', '/api/v1/nodes/n1'), true],
    ['admin makes join tokens', admin, attrs('POST', '/apis/minik8s.io/v1/jointokens'), true],
    ['admin joins', admin, attrs('POST', '/apis/minik8s.io/v1/join'), true],
    ['admin binds a pod', admin, attrs('POST', '/api/v1/namespaces/default/pods/web/binding'), true],
    // Nodes read everything.
    ['node lists pods', n1, attrs('GET', '/api/v1/pods'), true],
    ['node watches services', n1, attrs('GET', '/api/v1/services', {}, { watch: '1' }), true],
    ['node gets another node', n1, attrs('GET', '/api/v1/nodes/n2'), true],
    ['node reads discovery', n1, attrs('GET', '/apis'), true],
    ['node reads metrics', n1, attrs('GET', '/apis/metrics.k8s.io/v1beta1/nodes'), true],
    ['node posts to a non-resource path', n1, attrs('POST', '/api'), false],
    ['node reads logs', n1, attrs('GET', '/api/v1/namespaces/d/pods/web/log'), false, /only cluster admins/],
    ['node runs exec', n1, attrs('POST', '/api/v1/namespaces/d/pods/web/exec'), false],
    ['node lists join tokens', n1, attrs('GET', '/apis/minik8s.io/v1/jointokens'), false, /join tokens are for cluster admins/],
    ['node joins again with its credential', n1, attrs('POST', '/apis/minik8s.io/v1/join'), false],
    // Its own Node.
    ['node creates its Node', n1, attrs('POST', '/api/v1/nodes', { resource: { group: '', version: 'v1', resource: 'nodes', name: 'n1' } }), true],
    [
      'node creates another Node',
      n1,
      attrs('POST', '/api/v1/nodes', { resource: { group: '', version: 'v1', resource: 'nodes', name: 'n2' } }),
      false,
      /only change its own Node/,
    ],
    ['node creates a Node of unknown name', n1, attrs('POST', '/api/v1/nodes'), false],
    ['node patches its Node', n1, attrs('PATCH', '/api/v1/nodes/n1'), true],
    ['node updates its Node', n1, attrs('PUT', '/api/v1/nodes/n1'), true],
    ['node patches its Node status', n1, attrs('PATCH', '/api/v1/nodes/n1/status'), true],
    ['node patches another Node status', n1, attrs('PATCH', '/api/v1/nodes/n2/status'), false, /node "n1" may only change its own Node object/],
    ['node deletes its Node', n1, attrs('DELETE', '/api/v1/nodes/n1'), false, /may not delete/],
    ['node deletes all Nodes', n1, attrs('DELETE', '/api/v1/nodes'), false],
    // Pods: status of its own, deletion of its own, nothing else.
    ['node patches status of its pod', n1, attrs('PATCH', '/api/v1/namespaces/d/pods/web/status', { podNodeName: 'n1' }), true],
    ['node updates status of its pod', n1, attrs('PUT', '/api/v1/namespaces/d/pods/web/status', { podNodeName: 'n1' }), true],
    [
      "node patches status of another node's pod",
      n1,
      attrs('PATCH', '/api/v1/namespaces/d/pods/web/status', { podNodeName: 'n2' }),
      false,
      /not bound to node "n1"/,
    ],
    ['node patches status of an unscheduled pod', n1, attrs('PATCH', '/api/v1/namespaces/d/pods/web/status', { podNodeName: '' }), false],
    ['node patches status without a lookup', n1, attrs('PATCH', '/api/v1/namespaces/d/pods/web/status'), false],
    ['node patches status of a missing pod (404 follows)', n1, attrs('PATCH', '/api/v1/namespaces/d/pods/web/status', { podNodeName: null }), true],
    ['node deletes its pod', n1, attrs('DELETE', '/api/v1/namespaces/d/pods/web', { podNodeName: 'n1' }), true],
    ["node deletes another node's pod", n1, attrs('DELETE', '/api/v1/namespaces/d/pods/web', { podNodeName: 'n2' }), false],
    ['node deletes all pods', n1, attrs('DELETE', '/api/v1/namespaces/d/pods'), false],
    ['node creates a pod', n1, attrs('POST', '/api/v1/namespaces/d/pods'), false, /only write the status of pods bound to it/],
    ["node patches its pod's spec", n1, attrs('PATCH', '/api/v1/namespaces/d/pods/web', { podNodeName: 'n1' }), false],
    // Binding pods to nodes is the scheduler's (an admin's) job: a kubelet may not pick its own pods.
    ['node binds a pod', n1, attrs('POST', '/api/v1/namespaces/d/pods/web/binding', { podNodeName: '' }), false, /only write the status of pods bound to it/],
    ['node binds a pod to itself through bindings', n1, attrs('POST', '/api/v1/namespaces/d/bindings'), false],
    // Its Lease (the heartbeat), and no other.
    [
      'node creates its Lease',
      n1,
      attrs('POST', `${LEASES}`, { resource: { group: 'coordination.k8s.io', version: 'v1', resource: 'leases', namespace: 'kube-node-lease', name: 'n1' } }),
      true,
    ],
    [
      "node creates another node's Lease",
      n1,
      attrs('POST', `${LEASES}`, { resource: { group: 'coordination.k8s.io', version: 'v1', resource: 'leases', namespace: 'kube-node-lease', name: 'n2' } }),
      false,
      /same name as the requesting node/,
    ],
    ['node updates its Lease', n1, attrs('PUT', `${LEASES}/n1`), true],
    ['node patches its Lease', n1, attrs('PATCH', `${LEASES}/n1`), true],
    ['node deletes its Lease', n1, attrs('DELETE', `${LEASES}/n1`), true],
    ['node reads Leases', n1, attrs('GET', LEASES), true],
    ["node updates another node's Lease", n1, attrs('PUT', `${LEASES}/n2`), false, /same name as the requesting node/],
    ['node deletes all Leases', n1, attrs('DELETE', LEASES), false, /only write its own Lease/],
    ['node writes a Lease elsewhere', n1, attrs('PUT', '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/n1'), false, /in namespace kube-node-lease/],
    // Events and token reviews.
    ['node creates events', n1, attrs('POST', '/api/v1/namespaces/d/events'), true],
    ['node patches events', n1, attrs('PATCH', '/api/v1/namespaces/d/events/e1'), true],
    ['node deletes events', n1, attrs('DELETE', '/api/v1/namespaces/d/events/e1'), false],
    ['node reviews a token', n1, attrs('POST', '/apis/authentication.k8s.io/v1/tokenreviews'), true],
    // Everything else.
    ['node creates a service', n1, attrs('POST', '/api/v1/namespaces/d/services'), false],
    ['node scales a deployment', n1, attrs('PATCH', '/apis/apps/v1/namespaces/d/deployments/x'), false],
    ['node deletes a namespace', n1, attrs('DELETE', '/api/v1/namespaces/d'), false],
    ['nodes group without a node name reads', nameless, attrs('GET', '/api/v1/pods'), true],
    ['nodes group without a node name writes', nameless, attrs('PATCH', '/api/v1/nodes/kubelet'), false, /not named system:node/],
    // Join tokens: the join and nothing else.
    ['join token joins', boot, attrs('POST', '/apis/minik8s.io/v1/join'), true],
    ['join token lists pods', boot, attrs('GET', '/api/v1/pods'), false, /may only be used to join/],
    ['join token reads discovery', boot, attrs('GET', '/api'), false],
    ['join token makes join tokens', boot, attrs('POST', '/apis/minik8s.io/v1/jointokens'), false],
    ['join token reviews tokens', boot, attrs('POST', '/apis/authentication.k8s.io/v1/tokenreviews'), false],
    ['join token GETs the join path', boot, attrs('GET', '/apis/minik8s.io/v1/join'), false],
    // Anyone else: nothing.
    ['stranger reads pods', stranger, attrs('GET', '/api/v1/pods'), false],
    ['stranger reads discovery', stranger, attrs('GET', '/api'), false],
  ];
  for (const [name, user, a, allowed, reason] of cases) {
    it(name, () => {
      const d = authorize(user, a);
      assert.equal(d.allowed, allowed, JSON.stringify(d));
      if (reason) assert.match((d as { reason?: string }).reason ?? '', reason);
    });
  }

  it('lets a user in several groups do what any of them allows', () => {
    const both: UserInfo = { name: 'system:node:n1', groups: ['system:bootstrappers', 'system:nodes'] };
    assert.equal(authorize(both, attrs('POST', '/apis/minik8s.io/v1/join')).allowed, true);
    assert.equal(authorize(both, attrs('GET', '/api/v1/pods')).allowed, true);
  });
});

describe('lookups the route layer does for nodes', () => {
  it("asks for the stored pod only for a node's pod status writes and deletes", () => {
    assert.equal(needsPodLookup(n1, requestAttributes('PATCH', '/api/v1/namespaces/d/pods/web/status')), true);
    assert.equal(needsPodLookup(n1, requestAttributes('PUT', '/api/v1/namespaces/d/pods/web/status')), true);
    assert.equal(needsPodLookup(n1, requestAttributes('DELETE', '/api/v1/namespaces/d/pods/web')), true);
    assert.equal(needsPodLookup(n1, requestAttributes('PATCH', '/api/v1/namespaces/d/pods/web')), false);
    assert.equal(needsPodLookup(n1, requestAttributes('GET', '/api/v1/namespaces/d/pods/web')), false);
    assert.equal(needsPodLookup(admin, requestAttributes('DELETE', '/api/v1/namespaces/d/pods/web')), false);
    assert.equal(needsPodLookup(boot, requestAttributes('DELETE', '/api/v1/namespaces/d/pods/web')), false);
  });

  it("asks for the body's name only for a node creating a Node or a Lease", () => {
    assert.equal(needsBodyName(n1, requestAttributes('POST', '/api/v1/nodes')), true);
    assert.equal(needsBodyName(n1, requestAttributes('POST', LEASES)), true);
    assert.equal(needsBodyName(admin, requestAttributes('POST', '/api/v1/nodes')), false);
    assert.equal(needsBodyName(n1, requestAttributes('POST', '/api/v1/namespaces/d/pods')), false);
  });

  it('reads the node name from the user', () => {
    assert.equal(nodeNameOf(n1), 'n1');
    assert.equal(nodeNameOf(nameless), undefined);
    assert.equal(nodeNameOf({ name: 'system:node:n1', groups: [] }), undefined);
    assert.equal(nodeNameOf({ name: 'system:node:', groups: ['system:nodes'] }), undefined);
  });
});

describe('forbiddenMessage', () => {
  it('words refusals as Kubernetes does', () => {
    assert.equal(
      forbiddenMessage(n1, requestAttributes('PATCH', '/api/v1/nodes/n2'), 'node "n1" may only change its own Node object'),
      'nodes "n2" is forbidden: User "system:node:n1" cannot patch resource "nodes" in API group "" at the cluster scope: node "n1" may only change its own Node object',
    );
    assert.equal(
      forbiddenMessage(n1, requestAttributes('POST', '/api/v1/namespaces/default/pods')),
      'pods is forbidden: User "system:node:n1" cannot create resource "pods" in API group "" in the namespace "default"',
    );
    assert.equal(
      forbiddenMessage(n1, requestAttributes('PATCH', '/api/v1/namespaces/default/pods/web/status')),
      'pods "web" is forbidden: User "system:node:n1" cannot patch resource "pods/status" in API group "" in the namespace "default"',
    );
    assert.equal(
      forbiddenMessage(boot, requestAttributes('GET', '/apis/apps/v1/deployments')),
      'deployments.apps is forbidden: User "system:bootstrap:abcdef" cannot list resource "deployments" in API group "apps" at the cluster scope',
    );
    assert.equal(forbiddenMessage(boot, requestAttributes('GET', '/api')), 'forbidden: User "system:bootstrap:abcdef" cannot get path "/api"');
  });
});
