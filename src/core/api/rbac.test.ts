// RBAC kinds: names as path segments, rules that mix resources with URLs refused, roleRef immutable.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { clusterRoleBindingKind, clusterRoleKind, roleBindingKind } from './rbac.js';
import { validateObject } from './validate.js';

const G = 'rbac.authorization.k8s.io';

describe('RBAC kinds', () => {
  it('take names with colons, as the system roles have', () => {
    const r = validateObject(clusterRoleKind, { apiVersion: `${G}/v1`, kind: 'ClusterRole', metadata: { name: 'system:aggregate-to-view' }, rules: [] });
    assert.equal(r.metadata.name, 'system:aggregate-to-view');
  });

  it("refuse a name with '/' and a rule for both resources and URLs", () => {
    assert.throws(
      () =>
        validateObject(clusterRoleKind, {
          apiVersion: `${G}/v1`,
          kind: 'ClusterRole',
          metadata: { name: 'a/b' },
          rules: [{ apiGroups: [''], resources: ['pods'], nonResourceURLs: ['/x'], verbs: ['get'] }],
        }),
      (err: Error) =>
        /ClusterRole "a\/b" is invalid/.test(err.message) &&
        /may not contain '\/' or '%'/.test(err.message) &&
        /rules cannot apply to both regular resources and non-resource URLs/.test(err.message),
    );
  });

  it('refuse a change of roleRef', () => {
    const binding = (name: string) => ({
      apiVersion: `${G}/v1`,
      kind: 'RoleBinding',
      metadata: { name: 'b', namespace: 'dev' },
      subjects: [{ kind: 'User', apiGroup: G, name: 'alice' }],
      roleRef: { apiGroup: G, kind: 'ClusterRole', name },
    });
    const problems = roleBindingKind.validateUpdate!(binding('view') as never, binding('edit') as never);
    assert.deepEqual(
      problems.map((p) => [p.path.join('.'), p.detail]),
      [['roleRef', 'cannot change roleRef']],
    );
    assert.deepEqual(roleBindingKind.validateUpdate!(binding('view') as never, binding('view') as never), []);
  });

  it('bind ClusterRoleBindings only to ClusterRoles', () => {
    assert.throws(
      () =>
        validateObject(clusterRoleBindingKind, {
          apiVersion: `${G}/v1`,
          kind: 'ClusterRoleBinding',
          metadata: { name: 'x' },
          roleRef: { apiGroup: G, kind: 'Role', name: 'r' },
        }),
      /roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"|roleRef\.kind/,
    );
  });
});
