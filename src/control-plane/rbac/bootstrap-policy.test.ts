// Tests of the bootstrap policy's reconciliation: what an existing default role or binding gets back, and what is left alone.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defaultClusterRoleBindings, defaultClusterRoles } from './default-roles.js';
import { reconcileBinding, reconcileClusterRole } from './bootstrap-policy.js';

const wantedRole = (name: string) => defaultClusterRoles().find((r) => r.metadata.name === name)!;
const wantedBinding = (name: string) => defaultClusterRoleBindings().find((b) => b.metadata.name === name)!;

describe('reconcileClusterRole', () => {
  it('an unchanged default needs nothing (a restart writes nothing)', () => {
    for (const role of defaultClusterRoles()) assert.equal(reconcileClusterRole(role, role), undefined, role.metadata.name);
  });
  it('a rule removed from an autoupdate role comes back; added ones stay', () => {
    const wanted = wantedRole('system:basic-user');
    const extra = { apiGroups: ['x'], resources: ['y'], verbs: ['get'] };
    const fixed = reconcileClusterRole({ ...wanted, rules: [extra] }, wanted);
    assert.deepEqual(fixed?.rules, [extra, ...wanted.rules!]);
  });
  it('an admin who turned autoupdate off keeps the role as it is', () => {
    const wanted = wantedRole('system:discovery');
    assert.equal(
      reconcileClusterRole(
        { ...wanted, metadata: { ...wanted.metadata, annotations: { 'rbac.authorization.kubernetes.io/autoupdate': 'false' } }, rules: [] },
        wanted,
      ),
      undefined,
    );
  });
  it("an aggregated role's rules are the aggregation controller's, not bootstrap's", () => {
    const wanted = wantedRole('view');
    assert.equal(reconcileClusterRole({ ...wanted, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] }, wanted), undefined);
  });
});

describe('reconcileBinding', () => {
  it('a removed subject comes back, others stay', () => {
    const wanted = wantedBinding('system:public-info-viewer');
    const fixed = reconcileBinding({ ...wanted, subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'x' }] }, wanted);
    assert.deepEqual(
      fixed?.subjects?.map((s) => s.name),
      ['x', 'system:authenticated', 'system:unauthenticated'],
    );
    assert.equal(reconcileBinding(wanted, wanted), undefined);
  });
});
