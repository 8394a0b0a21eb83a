// Table tests of RBAC rule matching and of the escalation check (which grants a set of rules does not cover).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { PolicyRule } from '../../core/api/rbac.js';
import { describeGrant, type RuleRequest, ruleAllows, uncoveredRules } from './policy-rule.js';

describe('ruleAllows', () => {
  const podsRead: PolicyRule = { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch'] };
  const cases: { name: string; rule: PolicyRule; request: RuleRequest; want: boolean }[] = [
    { name: 'verb, group and resource listed', rule: podsRead, request: { verb: 'list', group: '', resource: 'pods' }, want: true },
    { name: 'a verb not listed', rule: podsRead, request: { verb: 'delete', group: '', resource: 'pods', name: 'a' }, want: false },
    { name: 'another group', rule: podsRead, request: { verb: 'get', group: 'apps', resource: 'pods' }, want: false },
    {
      name: 'a subresource is not its resource',
      rule: podsRead,
      request: { verb: 'get', group: '', resource: 'pods', subresource: 'log', name: 'a' },
      want: false,
    },
    {
      name: 'resource/subresource listed',
      rule: { apiGroups: [''], resources: ['pods/log'], verbs: ['get'] },
      request: { verb: 'get', group: '', resource: 'pods', subresource: 'log', name: 'a' },
      want: true,
    },
    {
      name: "a star before a subresource: any resource's scale",
      rule: { apiGroups: ['*'], resources: ['*/scale'], verbs: ['update'] },
      request: { verb: 'update', group: 'apps', resource: 'deployments', subresource: 'scale', name: 'web' },
      want: true,
    },
    {
      name: 'a star before a subresource is not the resource itself',
      rule: { apiGroups: ['*'], resources: ['*/scale'], verbs: ['update'] },
      request: { verb: 'update', group: 'apps', resource: 'deployments', name: 'web' },
      want: false,
    },
    {
      name: 'stars everywhere',
      rule: { apiGroups: ['*'], resources: ['*'], verbs: ['*'] },
      request: { verb: 'escalate', group: 'x.io', resource: 'y', subresource: 'z' },
      want: true,
    },
    {
      name: 'resourceNames allow that name',
      rule: { apiGroups: [''], resources: ['secrets'], resourceNames: ['db'], verbs: ['get'] },
      request: { verb: 'get', group: '', resource: 'secrets', name: 'db' },
      want: true,
    },
    {
      name: 'resourceNames refuse another name',
      rule: { apiGroups: [''], resources: ['secrets'], resourceNames: ['db'], verbs: ['get'] },
      request: { verb: 'get', group: '', resource: 'secrets', name: 'other' },
      want: false,
    },
    {
      name: 'resourceNames never allow a list (no name)',
      rule: { apiGroups: [''], resources: ['secrets'], resourceNames: ['db'], verbs: ['list'] },
      request: { verb: 'list', group: '', resource: 'secrets' },
      want: false,
    },
    { name: 'a non-resource URL', rule: { nonResourceURLs: ['/healthz'], verbs: ['get'] }, request: { verb: 'get', path: '/healthz' }, want: true },
    { name: 'a non-resource prefix', rule: { nonResourceURLs: ['/apis/*'], verbs: ['get'] }, request: { verb: 'get', path: '/apis/apps/v1' }, want: true },
    {
      name: 'a non-resource URL of another path',
      rule: { nonResourceURLs: ['/healthz'], verbs: ['get'] },
      request: { verb: 'get', path: '/metrics' },
      want: false,
    },
    {
      name: 'a resource rule never allows a path',
      rule: { apiGroups: ['*'], resources: ['*'], verbs: ['*'] },
      request: { verb: 'get', path: '/metrics' },
      want: false,
    },
  ];
  for (const c of cases) {
    it(c.name, () => assert.equal(ruleAllows(c.rule, c.request), c.want));
  }
});

describe('uncoveredRules', () => {
  const cases: { name: string; held: PolicyRule[]; wanted: PolicyRule[]; uncovered: string[] }[] = [
    {
      name: 'a subset is covered',
      held: [{ apiGroups: [''], resources: ['pods', 'services'], verbs: ['get', 'list'] }],
      wanted: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }],
      uncovered: [],
    },
    {
      name: 'a verb more is not',
      held: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }],
      wanted: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'delete'] }],
      uncovered: ['{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}'],
    },
    {
      name: 'stars held cover anything',
      held: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }],
      wanted: [{ apiGroups: ['apps'], resources: ['deployments', 'deployments/scale'], verbs: ['*'] }],
      uncovered: [],
    },
    {
      name: 'every verb named does not cover a star asked for',
      held: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'] }],
      wanted: [{ apiGroups: [''], resources: ['pods'], verbs: ['*'] }],
      uncovered: ['{APIGroups:[""], Resources:["pods"], Verbs:["*"]}'],
    },
    {
      name: 'a named secret is covered by all secrets, not the other way',
      held: [{ apiGroups: [''], resources: ['secrets'], resourceNames: ['db'], verbs: ['get'] }],
      wanted: [
        { apiGroups: [''], resources: ['secrets'], resourceNames: ['db'], verbs: ['get'] },
        { apiGroups: [''], resources: ['secrets'], verbs: ['get'] },
      ],
      uncovered: ['{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}'],
    },
    {
      name: 'rules spread over several held rules',
      held: [
        { apiGroups: [''], resources: ['pods'], verbs: ['get'] },
        { apiGroups: [''], resources: ['pods'], verbs: ['list'] },
      ],
      wanted: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }],
      uncovered: [],
    },
    {
      name: 'non-resource URLs by prefix',
      held: [{ nonResourceURLs: ['/logs/*'], verbs: ['get'] }],
      wanted: [{ nonResourceURLs: ['/logs/a', '/metrics'], verbs: ['get'] }],
      uncovered: ['{NonResourceURLs:["/metrics"], Verbs:["get"]}'],
    },
  ];
  for (const c of cases) {
    it(c.name, () => assert.deepEqual(uncoveredRules(c.held, c.wanted).map(describeGrant), c.uncovered));
  }
});
