// SelfSubjectAccessReview over HTTP: each user asks about itself and gets the answer its own requests would get.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryStore } from '../../core/store/memory-store.js';
import { registerAccessReviewRoutes, reviewAttributes, SELF_ACCESS_REVIEW_PATH, SELF_RULES_REVIEW_PATH } from './access-review-routes.js';
import { ADMIN_USER, TokenAuthenticator, type UserInfo } from './auth.js';
import { BOOTSTRAPPERS_GROUP, NODES_GROUP } from './authorization.js';
import { startApiServer, type RunningApiServer } from './server.js';

const ADMIN = 'review-admin';
const NODE = 'review-node';
const JOINER = 'review-joiner';

describe('SelfSubjectAccessReview', () => {
  const ac = new AbortController();
  let server: RunningApiServer;
  const review = async (token: string, spec: unknown) => {
    const res = await fetch(`http://127.0.0.1:${server.port}${SELF_ACCESS_REVIEW_PATH}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec }),
    });
    return { status: res.status, body: (await res.json()) as { kind?: string; message?: string; status?: { allowed: boolean; reason?: string } } };
  };

  before(async () => {
    const authenticator = new TokenAuthenticator();
    authenticator.add(ADMIN, ADMIN_USER);
    authenticator.add(NODE, { name: 'system:node:n1', groups: [NODES_GROUP] } as UserInfo);
    authenticator.add(JOINER, { name: 'system:bootstrap:abcdef', groups: [BOOTSTRAPPERS_GROUP] } as UserInfo);
    server = await startApiServer({
      store: new MemoryStore(),
      authenticator,
      address: '127.0.0.1',
      port: 0,
      signal: ac.signal,
      routes: [(app) => registerAccessReviewRoutes(app)],
    });
  });
  after(async () => {
    ac.abort();
    await server.closed;
  });

  it('answers 201 with allowed for what the caller may do', async () => {
    const admin = await review(ADMIN, { resourceAttributes: { verb: 'delete', resource: 'nodes' } });
    assert.equal(admin.status, 201);
    assert.equal(admin.body.kind, 'SelfSubjectAccessReview');
    assert.deepEqual(admin.body.status, { allowed: true });
    const nodeReads = await review(NODE, { resourceAttributes: { verb: 'list', resource: 'pods', namespace: 'default' } });
    assert.deepEqual(nodeReads.body.status, { allowed: true });
  });

  it('answers a SelfSubjectRulesReview with the rules of the namespace asked about', async () => {
    const res = await fetch(`http://127.0.0.1:${server.port}${SELF_RULES_REVIEW_PATH}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${NODE}`, 'content-type': 'application/json' },
      body: JSON.stringify({ apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectRulesReview', spec: { namespace: 'kube-node-lease' } }),
    });
    assert.equal(res.status, 201);
    const body = (await res.json()) as {
      kind: string;
      spec: unknown;
      status: { incomplete: boolean; resourceRules: { resources: string[]; resourceNames?: string[] }[] };
    };
    assert.equal(body.kind, 'SelfSubjectRulesReview');
    assert.deepEqual(body.spec, { namespace: 'kube-node-lease' });
    assert.equal(body.status.incomplete, true);
    assert.ok(body.status.resourceRules.some((r) => r.resources[0] === 'leases' && r.resourceNames?.[0] === 'n1'));
    const joiner = await fetch(`http://127.0.0.1:${server.port}${SELF_RULES_REVIEW_PATH}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${JOINER}`, 'content-type': 'application/json' },
      body: JSON.stringify({ spec: {} }),
    });
    assert.equal(joiner.status, 403);
  });

  it('answers allowed false with the reason the request itself would get', async () => {
    const res = await review(NODE, { resourceAttributes: { verb: 'delete', resource: 'nodes', name: 'n2' } });
    assert.equal(res.status, 201);
    assert.deepEqual(res.body.status, { allowed: false, reason: 'a node may not delete Node objects' });
    const logs = await review(NODE, { resourceAttributes: { verb: 'get', resource: 'pods', subresource: 'log', namespace: 'default', name: 'web' } });
    assert.equal(logs.body.status?.allowed, false);
  });

  it('is not open to join tokens, and refuses a spec with neither or both attribute kinds', async () => {
    assert.equal((await review(JOINER, { resourceAttributes: { verb: 'get', resource: 'pods' } })).status, 403);
    const neither = await review(ADMIN, {});
    assert.equal(neither.status, 400);
    assert.match(String(neither.body.message), /exactly one of nonResourceAttributes or resourceAttributes must be specified/);
    assert.equal((await review(ADMIN, { resourceAttributes: { verb: 'get' }, nonResourceAttributes: { path: '/healthz', verb: 'get' } })).status, 400);
  });

  it('reads non-resource attributes', () => {
    assert.deepEqual(reviewAttributes({ nonResourceAttributes: { path: '/version', verb: 'get' } }), { verb: 'get', path: '/version' });
  });
});
