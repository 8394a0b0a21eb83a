// Table tests of the whole authorization chain (Node rules, masters, then RBAC): subject x rules x request -> allowed, or denied with the message a client sees; and the escalation check.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ClusterRoleBinding, PolicyRule, RoleBinding, Subject } from '../../core/api/rbac.js';
import type { UserInfo } from '../api-server/auth.js';
import { authorize, forbiddenMessage, requestAttributes } from '../api-server/authorization.js';
import { impersonatedUser } from '../api-server/impersonation.js';
import { aggregatedRules, defaultClusterRoleBindings, defaultClusterRoles } from './default-roles.js';
import { escalationRefusal } from './escalation.js';
import { RbacIndex } from './rbac-authorizer.js';
import { rbacChain } from './rbac-chain.js';

const G = 'rbac.authorization.k8s.io';
const user = (kind: Subject['kind'], name: string, namespace?: string): Subject =>
  kind === 'ServiceAccount' ? { kind, name, namespace } : { kind, apiGroup: G, name };
const rb = (namespace: string, name: string, ref: { kind: 'Role' | 'ClusterRole'; name: string }, subjects: Subject[]): RoleBinding => ({
  apiVersion: `${G}/v1`,
  kind: 'RoleBinding',
  metadata: { namespace, name },
  subjects,
  roleRef: { apiGroup: G, ...ref },
});
const crb = (name: string, role: string, subjects: Subject[]): ClusterRoleBinding => ({
  apiVersion: `${G}/v1`,
  kind: 'ClusterRoleBinding',
  metadata: { name },
  subjects,
  roleRef: { apiGroup: G, kind: 'ClusterRole', name: role },
});

/** The bootstrap policy, aggregated, with a few teams' bindings. */
function cluster(): RbacIndex {
  const idx = new RbacIndex();
  const roles = defaultClusterRoles();
  for (let pass = 0; pass < 2; pass++) for (const r of roles) r.rules = aggregatedRules(r, roles) ?? r.rules;
  for (const r of roles) idx.setClusterRole(r);
  for (const b of defaultClusterRoleBindings()) idx.setBinding(b);
  idx.setRole({
    apiVersion: `${G}/v1`,
    kind: 'Role',
    metadata: { namespace: 'dev', name: 'cm-one' },
    rules: [{ apiGroups: [''], resources: ['services'], resourceNames: ['web'], verbs: ['get', 'update'] }],
  });
  idx.setBinding(rb('dev', 'alice-view', { kind: 'ClusterRole', name: 'view' }, [user('User', 'alice')]));
  idx.setBinding(rb('dev', 'bob-admin', { kind: 'ClusterRole', name: 'admin' }, [user('User', 'bob')]));
  idx.setBinding(rb('dev', 'web-editor', { kind: 'Role', name: 'cm-one' }, [user('Group', 'web-team')]));
  idx.setBinding(rb('dev', 'ci-edit', { kind: 'ClusterRole', name: 'edit' }, [user('ServiceAccount', 'ci', 'dev')]));
  idx.setBinding(crb('support-impersonate', 'cluster-admin', [user('User', 'root-ish')]));
  return idx;
}

const idx = cluster();
const chain = rbacChain(idx);
const alice: UserInfo = { name: 'alice', groups: [] };
const bob: UserInfo = { name: 'bob', groups: [] };
const webber: UserInfo = { name: 'wes', groups: ['web-team'] };
const ci: UserInfo = { name: 'system:serviceaccount:dev:ci', groups: ['system:serviceaccounts', 'system:serviceaccounts:dev'] };
const node: UserInfo = { name: 'system:node:n1', groups: ['system:nodes'] };
const admin: UserInfo = { name: 'admin', groups: ['system:masters'] };
const nobody: UserInfo = { name: 'eve', groups: [] };

describe('authorize() with RBAC: subject x request -> decision and message', () => {
  const cases: { name: string; user: UserInfo; method: string; path: string; allowed: boolean; message?: string }[] = [
    { name: 'masters do anything', user: admin, method: 'DELETE', path: '/api/v1/nodes/n1', allowed: true },
    { name: 'view lists pods in its namespace', user: alice, method: 'GET', path: '/api/v1/namespaces/dev/pods', allowed: true },
    {
      name: 'view cannot create',
      user: alice,
      method: 'POST',
      path: '/api/v1/namespaces/dev/pods',
      allowed: false,
      message: 'pods is forbidden: User "alice" cannot create resource "pods" in API group "" in the namespace "dev"',
    },
    {
      name: 'a RoleBinding grants nothing elsewhere',
      user: alice,
      method: 'GET',
      path: '/api/v1/namespaces/prod/pods',
      allowed: false,
      message: 'pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "prod"',
    },
    {
      name: 'cluster scope wording',
      user: alice,
      method: 'GET',
      path: '/api/v1/nodes',
      allowed: false,
      message: 'nodes is forbidden: User "alice" cannot list resource "nodes" in API group "" at the cluster scope',
    },
    {
      name: 'subresource wording, with the name',
      user: alice,
      method: 'POST',
      path: '/api/v1/namespaces/dev/pods/web-0/exec',
      allowed: false,
      message: 'pods "web-0" is forbidden: User "alice" cannot create resource "pods/exec" in API group "" in the namespace "dev"',
    },
    { name: 'view never reads Secrets', user: alice, method: 'GET', path: '/api/v1/namespaces/dev/secrets/s', allowed: false },
    { name: 'admin writes RoleBindings in its namespace', user: bob, method: 'POST', path: `/apis/${G}/v1/namespaces/dev/rolebindings`, allowed: true },
    { name: 'admin may not touch ClusterRoles', user: bob, method: 'POST', path: `/apis/${G}/v1/clusterroles`, allowed: false },
    { name: 'resourceNames: the named object', user: webber, method: 'PUT', path: '/api/v1/namespaces/dev/services/web', allowed: true },
    { name: 'resourceNames: not another', user: webber, method: 'PUT', path: '/api/v1/namespaces/dev/services/db', allowed: false },
    { name: 'resourceNames: never a list', user: webber, method: 'GET', path: '/api/v1/namespaces/dev/services', allowed: false },
    { name: 'a ServiceAccount by RBAC like any user', user: ci, method: 'POST', path: '/apis/apps/v1/namespaces/dev/deployments', allowed: true },
    { name: 'discovery for every authenticated user', user: nobody, method: 'GET', path: '/apis/apps/v1', allowed: true },
    {
      name: 'other paths are not',
      user: nobody,
      method: 'GET',
      path: '/metrics',
      allowed: false,
      message: 'forbidden: User "eve" cannot get path "/metrics"',
    },
    { name: 'self reviews for every user', user: nobody, method: 'POST', path: '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', allowed: true },
    {
      name: 'SubjectAccessReview is not every user’s',
      user: nobody,
      method: 'POST',
      path: '/apis/authorization.k8s.io/v1/subjectaccessreviews',
      allowed: false,
    },
    { name: 'the Node rules stay: a node reads pods', user: node, method: 'GET', path: '/api/v1/pods', allowed: true },
    {
      name: 'the Node rules stay: and explain their refusals',
      user: node,
      method: 'DELETE',
      path: '/api/v1/nodes/n2',
      allowed: false,
      message:
        'nodes "n2" is forbidden: User "system:node:n1" cannot delete resource "nodes" in API group "" at the cluster scope: a node may not delete Node objects',
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const attrs = requestAttributes(c.method, c.path);
      const decision = authorize(c.user, attrs, chain);
      assert.equal(decision.allowed, c.allowed);
      if (c.message !== undefined) assert.equal(forbiddenMessage(c.user, attrs, decision.allowed ? undefined : decision.reason), c.message);
    });
  }
  it('without RBAC the chain is the Node rules and masters only', () => {
    assert.equal(authorize(alice, requestAttributes('GET', '/api/v1/namespaces/dev/pods')).allowed, false);
  });
});

describe('escalationRefusal', () => {
  const rules = (...r: PolicyRule[]) => r;
  const cases: { name: string; user: UserInfo; resource: string; namespace?: string; object: object; refused: RegExp | false }[] = [
    {
      name: 'a Role within what the writer holds',
      user: bob,
      resource: 'roles',
      namespace: 'dev',
      object: { rules: rules({ apiGroups: [''], resources: ['pods'], verbs: ['get'] }) },
      refused: false,
    },
    {
      name: 'a Role with a rule the writer lacks, in Kubernetes wording',
      user: bob,
      resource: 'roles',
      namespace: 'dev',
      object: { rules: rules({ apiGroups: [''], resources: ['nodes'], verbs: ['list'] }) },
      refused:
        /^roles\.rbac\.authorization\.k8s\.io "r" is forbidden: user "bob" \(groups=\["system:authenticated"\]\) is attempting to grant RBAC permissions not currently held:\n\{APIGroups:\[""\], Resources:\["nodes"\], Verbs:\["list"\]\}$/,
    },
    {
      name: 'what it holds in one namespace is not held in another',
      user: bob,
      resource: 'roles',
      namespace: 'prod',
      object: { rules: rules({ apiGroups: [''], resources: ['pods'], verbs: ['get'] }) },
      refused: /not currently held/,
    },
    {
      name: 'binding a role within its rights',
      user: bob,
      resource: 'rolebindings',
      namespace: 'dev',
      object: { roleRef: { kind: 'ClusterRole', name: 'edit' } },
      refused: false,
    },
    {
      name: 'binding cluster-admin is escalation',
      user: bob,
      resource: 'rolebindings',
      namespace: 'dev',
      object: { roleRef: { kind: 'ClusterRole', name: 'cluster-admin' } },
      refused: /not currently held/,
    },
    {
      name: 'binding a missing role',
      user: bob,
      resource: 'rolebindings',
      namespace: 'dev',
      object: { roleRef: { kind: 'Role', name: 'nope' } },
      refused: /roles\.rbac\.authorization\.k8s\.io "nope" not found/,
    },
    {
      name: 'an aggregationRule needs everything',
      user: bob,
      resource: 'clusterroles',
      object: { aggregationRule: { clusterRoleSelectors: [] } },
      refused: /must have cluster-admin privileges to use the aggregationRule/,
    },
    {
      name: 'cluster-admin holders grant anything',
      user: { name: 'root-ish', groups: [] },
      resource: 'clusterrolebindings',
      object: { roleRef: { kind: 'ClusterRole', name: 'cluster-admin' } },
      refused: false,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const refusal = escalationRefusal(idx, { user: c.user, resource: c.resource, namespace: c.namespace, name: 'r', object: c.object });
      if (c.refused === false) assert.equal(refusal, undefined);
      else assert.match(refusal ?? '', c.refused);
    });
  }
  it('the escalate verb lets a writer grant what it lacks; bind lets it bind', () => {
    const local = cluster();
    local.setClusterRole({
      apiVersion: `${G}/v1`,
      kind: 'ClusterRole',
      metadata: { name: 'role-maker' },
      rules: [
        { apiGroups: [G], resources: ['roles'], verbs: ['escalate'] },
        { apiGroups: [G], resources: ['clusterroles'], verbs: ['bind'], resourceNames: ['cluster-admin'] },
      ],
    });
    local.setBinding(crb('maker', 'role-maker', [user('User', 'mia')]));
    const mia = { name: 'mia', groups: [] };
    assert.equal(
      escalationRefusal(local, {
        user: mia,
        resource: 'roles',
        namespace: 'dev',
        name: 'r',
        object: { rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }] },
      }),
      undefined,
    );
    assert.equal(
      escalationRefusal(local, {
        user: mia,
        resource: 'rolebindings',
        namespace: 'dev',
        name: 'b',
        object: { roleRef: { kind: 'ClusterRole', name: 'cluster-admin' } },
      }),
      undefined,
    );
    assert.match(
      escalationRefusal(local, {
        user: mia,
        resource: 'rolebindings',
        namespace: 'dev',
        name: 'b',
        object: { roleRef: { kind: 'ClusterRole', name: 'admin' } },
      }) ?? '',
      /not currently held/,
    );
  });
});

describe('impersonatedUser', () => {
  it('a user with groups, plus system:authenticated', () => {
    assert.deepEqual(impersonatedUser('alice', ['qa']), { name: 'alice', groups: ['qa', 'system:authenticated'] });
  });
  it('a ServiceAccount gets its groups', () => {
    assert.deepEqual(impersonatedUser('system:serviceaccount:dev:ci', []), {
      name: 'system:serviceaccount:dev:ci',
      groups: ['system:serviceaccounts', 'system:serviceaccounts:dev', 'system:authenticated'],
    });
  });
  it('no headers: no impersonation; groups alone are a 400', () => {
    assert.equal(impersonatedUser(undefined, []), undefined);
    assert.throws(() => impersonatedUser(undefined, ['qa']), { message: 'requested ["qa"] without impersonating a user' });
  });
});
