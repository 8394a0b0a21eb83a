// Table tests of the RBAC authorizer: subjects x bindings x roles x request -> allowed (and by what) or denied; and the default roles' aggregation.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ClusterRole, ClusterRoleBinding, Role, RoleBinding, Subject } from '../../core/api/rbac.js';
import { aggregatedRules, defaultClusterRoleBindings, defaultClusterRoles } from './default-roles.js';
import { uncoveredRules } from './policy-rule.js';
import { RbacIndex, type RbacRequest, type RbacUser } from './rbac-authorizer.js';

const G = 'rbac.authorization.k8s.io';
const role = (namespace: string, name: string, rules: Role['rules']): Role => ({ apiVersion: `${G}/v1`, kind: 'Role', metadata: { namespace, name }, rules });
const roleBinding = (namespace: string, name: string, ref: { kind: 'Role' | 'ClusterRole'; name: string }, subjects: Subject[]): RoleBinding => ({
  apiVersion: `${G}/v1`,
  kind: 'RoleBinding',
  metadata: { namespace, name },
  subjects,
  roleRef: { apiGroup: G, ...ref },
});
const clusterRoleBinding = (name: string, roleName: string, subjects: Subject[]): ClusterRoleBinding => ({
  apiVersion: `${G}/v1`,
  kind: 'ClusterRoleBinding',
  metadata: { name },
  subjects,
  roleRef: { apiGroup: G, kind: 'ClusterRole', name: roleName },
});

/** The defaults with aggregation applied (as the aggregation controller would leave them), plus a few bindings. */
function index(): RbacIndex {
  const idx = new RbacIndex();
  const roles = defaultClusterRoles();
  for (let pass = 0; pass < 2; pass++) {
    for (const r of roles) {
      const rules = aggregatedRules(r, roles);
      if (rules) r.rules = rules;
    }
  }
  for (const r of roles) idx.setClusterRole(r);
  for (const b of defaultClusterRoleBindings()) idx.setBinding(b);
  idx.setRole(role('dev', 'pod-reader', [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }]));
  idx.setBinding(roleBinding('dev', 'alice-edit', { kind: 'ClusterRole', name: 'edit' }, [{ kind: 'User', apiGroup: G, name: 'alice' }]));
  idx.setBinding(roleBinding('dev', 'readers', { kind: 'Role', name: 'pod-reader' }, [{ kind: 'Group', apiGroup: G, name: 'qa' }]));
  idx.setBinding(roleBinding('dev', 'ci', { kind: 'ClusterRole', name: 'view' }, [{ kind: 'ServiceAccount', name: 'ci' }]));
  idx.setBinding(clusterRoleBinding('auditors', 'view', [{ kind: 'Group', apiGroup: G, name: 'auditors' }]));
  idx.setBinding(roleBinding('dev', 'dangling', { kind: 'Role', name: 'missing' }, [{ kind: 'User', apiGroup: G, name: 'bob' }]));
  return idx;
}

describe('RbacIndex.authorize', () => {
  const admin: RbacUser = { name: 'admin', groups: ['system:masters'] };
  const alice: RbacUser = { name: 'alice', groups: ['system:authenticated'] };
  const qa: RbacUser = { name: 'carol', groups: ['qa'] };
  const ci: RbacUser = { name: 'system:serviceaccount:dev:ci', groups: ['system:serviceaccounts'] };
  const auditor: RbacUser = { name: 'dan', groups: ['auditors'] };
  const bob: RbacUser = { name: 'bob', groups: [] };
  const cases: { name: string; user: RbacUser; request: RbacRequest; want: string | false }[] = [
    {
      name: 'masters hold cluster-admin',
      user: admin,
      request: { verb: 'delete', group: 'apps', resource: 'deployments', namespace: 'x', name: 'y' },
      want: 'ClusterRoleBinding "cluster-admin"',
    },
    { name: 'masters on a non-resource path', user: admin, request: { verb: 'get', path: '/metrics' }, want: 'ClusterRoleBinding "cluster-admin"' },
    {
      name: 'edit in its namespace: create a deployment',
      user: alice,
      request: { verb: 'create', group: 'apps', resource: 'deployments', namespace: 'dev' },
      want: 'RoleBinding "alice-edit"',
    },
    {
      name: 'edit in its namespace: read a secret',
      user: alice,
      request: { verb: 'get', group: '', resource: 'secrets', namespace: 'dev', name: 's' },
      want: 'RoleBinding "alice-edit"',
    },
    {
      name: 'edit in its namespace: exec',
      user: alice,
      request: { verb: 'create', group: '', resource: 'pods', subresource: 'exec', namespace: 'dev', name: 'p' },
      want: 'RoleBinding "alice-edit"',
    },
    { name: 'edit is not admin: no rolebindings', user: alice, request: { verb: 'create', group: G, resource: 'rolebindings', namespace: 'dev' }, want: false },
    { name: 'edit elsewhere: nothing', user: alice, request: { verb: 'list', group: '', resource: 'pods', namespace: 'prod' }, want: false },
    { name: 'edit does not reach cluster-scoped kinds', user: alice, request: { verb: 'list', group: '', resource: 'nodes' }, want: false },
    { name: 'a group bound to a Role', user: qa, request: { verb: 'list', group: '', resource: 'pods', namespace: 'dev' }, want: 'RoleBinding "readers"' },
    { name: 'the Role grants only what it lists', user: qa, request: { verb: 'watch', group: '', resource: 'pods', namespace: 'dev' }, want: false },
    {
      name: "a ServiceAccount subject in the binding's namespace",
      user: ci,
      request: { verb: 'get', group: 'apps', resource: 'deployments', namespace: 'dev', name: 'w' },
      want: 'RoleBinding "ci"',
    },
    { name: 'view reads no secrets', user: ci, request: { verb: 'get', group: '', resource: 'secrets', namespace: 'dev', name: 's' }, want: false },
    { name: 'view writes nothing', user: ci, request: { verb: 'delete', group: '', resource: 'pods', namespace: 'dev', name: 'p' }, want: false },
    {
      name: 'a ClusterRoleBinding applies in every namespace',
      user: auditor,
      request: { verb: 'list', group: '', resource: 'pods', namespace: 'prod' },
      want: 'ClusterRoleBinding "auditors"',
    },
    { name: 'and across namespaces', user: auditor, request: { verb: 'list', group: '', resource: 'pods' }, want: 'ClusterRoleBinding "auditors"' },
    {
      name: 'a binding to a role that does not exist grants nothing',
      user: bob,
      request: { verb: 'get', group: '', resource: 'pods', namespace: 'dev', name: 'p' },
      want: false,
    },
    { name: 'RoleBindings never grant non-resource paths', user: alice, request: { verb: 'get', path: '/metrics' }, want: false },
  ];
  const idx = index();
  for (const c of cases) {
    it(c.name, () => {
      const d = idx.authorize(c.user, c.request);
      if (c.want === false) assert.deepEqual(d, { allowed: false });
      else {
        assert.equal(d.allowed, true);
        assert.match((d as { reason: string }).reason, new RegExp(`^RBAC: allowed by ${c.want.replace(/[()]/g, '\\$&')}`));
      }
    });
  }

  it('forgets a deleted binding and files an updated one under its new subjects', () => {
    const idx2 = index();
    const req: RbacRequest = { verb: 'list', group: '', resource: 'pods', namespace: 'dev' };
    idx2.setBinding(roleBinding('dev', 'readers', { kind: 'Role', name: 'pod-reader' }, [{ kind: 'User', apiGroup: G, name: 'erin' }]));
    assert.equal(idx2.authorize(qa, req).allowed, false);
    assert.equal(idx2.authorize({ name: 'erin', groups: [] }, req).allowed, true);
    idx2.deleteBinding({ kind: 'RoleBinding', metadata: { namespace: 'dev', name: 'readers' } });
    assert.equal(idx2.authorize({ name: 'erin', groups: [] }, req).allowed, false);
  });

  it('holds a namespace admin to what admin grants: a Role beyond it is an escalation', () => {
    const idx2 = index();
    idx2.setBinding(roleBinding('dev', 'frank-admin', { kind: 'ClusterRole', name: 'admin' }, [{ kind: 'User', apiGroup: G, name: 'frank' }]));
    const held = idx2.rulesFor({ name: 'frank', groups: [] }, 'dev');
    assert.deepEqual(uncoveredRules(held, [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'delete'] }]), []);
    assert.equal(uncoveredRules(held, [{ apiGroups: [''], resources: ['nodes'], verbs: ['get'] }]).length, 1);
  });
});

describe('default roles', () => {
  it('aggregate view into edit into admin, and keep Secrets out of view', () => {
    const roles = defaultClusterRoles();
    const byName = (n: string) => roles.find((r) => r.metadata.name === n) as ClusterRole;
    const view = aggregatedRules(byName('view'), roles)!;
    const edit = aggregatedRules(byName('edit'), roles)!;
    const admin = aggregatedRules(byName('admin'), roles)!;
    assert.deepEqual(uncoveredRules(edit, view), []);
    assert.deepEqual(uncoveredRules(admin, edit), []);
    assert.ok(uncoveredRules(view, edit).length > 0);
    assert.ok(!view.some((r) => r.resources?.includes('secrets')));
    assert.equal(aggregatedRules(byName('cluster-admin'), roles), undefined);
  });
});
