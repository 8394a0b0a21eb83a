// SelfSubjectRulesReview's rules: what authorize() grants each kind of user, listed per namespace.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ADMIN_USER, type UserInfo } from './auth.js';
import { BOOTSTRAPPERS_GROUP, NODES_GROUP } from './authorization.js';
import { type ResourceRule, rulesReview } from './rules-review.js';

const n1: UserInfo = { name: 'system:node:n1', groups: [NODES_GROUP] };
const joiner: UserInfo = { name: 'system:bootstrap:abcdef', groups: [BOOTSTRAPPERS_GROUP] };

/** The verbs of the rule for one resource (and one name, when given). */
const verbsOf = (rules: ResourceRule[], group: string, resource: string, name?: string) =>
  rules.find((r) => r.apiGroups[0] === group && r.resources[0] === resource && r.resourceNames?.[0] === name)?.verbs;

describe('rulesReview', () => {
  it('gives admins the wildcard', () => {
    const s = rulesReview(ADMIN_USER, 'default');
    assert.deepEqual(s.resourceRules, [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }]);
    assert.deepEqual(s.nonResourceRules, [{ verbs: ['*'], nonResourceURLs: ['*'] }]);
    assert.equal(s.incomplete, false);
  });

  it("lists a node's reads, its own Node and, in kube-node-lease, its own Lease", () => {
    const s = rulesReview(n1, 'kube-node-lease');
    assert.deepEqual(verbsOf(s.resourceRules, '', 'pods'), ['get', 'list', 'watch']);
    assert.deepEqual(verbsOf(s.resourceRules, '', 'nodes', 'n1'), ['create', 'update', 'patch']);
    assert.deepEqual(verbsOf(s.resourceRules, '', 'nodes/status', 'n1'), ['update', 'patch']);
    assert.deepEqual(verbsOf(s.resourceRules, 'coordination.k8s.io', 'leases'), ['get', 'list', 'watch']);
    assert.deepEqual(verbsOf(s.resourceRules, 'coordination.k8s.io', 'leases', 'n1'), ['create', 'update', 'patch', 'delete']);
    assert.deepEqual(verbsOf(s.resourceRules, '', 'events'), ['get', 'list', 'watch', 'create', 'update', 'patch']);
    assert.equal(verbsOf(s.resourceRules, '', 'secrets'), undefined, 'Secrets depend on the pods bound to the node');
    assert.deepEqual(verbsOf(s.resourceRules, 'authorization.k8s.io', 'selfsubjectrulesreviews'), ['create']);
    assert.equal(s.incomplete, true);
    assert.match(s.evaluationError ?? '', /pods bound to a node/);
    assert.deepEqual(s.nonResourceRules[0], { verbs: ['get'], nonResourceURLs: ['*'] });
  });

  it("does not list a node's Lease writes in another namespace", () => {
    const s = rulesReview(n1, 'default');
    assert.equal(verbsOf(s.resourceRules, 'coordination.k8s.io', 'leases', 'n1'), undefined);
  });

  it('gives a join token the join alone', () => {
    const s = rulesReview(joiner, 'default');
    assert.deepEqual(s.resourceRules, [{ verbs: ['create'], apiGroups: ['minik8s.io'], resources: ['join'] }]);
    assert.deepEqual(
      s.nonResourceRules.map((r) => r.nonResourceURLs),
      [['/healthz', '/livez', '/readyz', '/version', '/version/']],
    );
  });
});
