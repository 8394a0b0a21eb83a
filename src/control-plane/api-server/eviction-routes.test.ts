// The eviction subresource through the API app on a memory store: graceful deletion, deleteOptions, 404, bad bodies, who may evict.
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../../core/api/pod.js';
import { MemoryStore } from '../../core/store/memory-store.js';
import { ADMIN_USER, TokenAuthenticator } from './auth.js';
import { registerEvictionRoutes } from './eviction-routes.js';
import { createApiApp, ensureSystemNamespaces, type ApiApp } from './server.js';

const ADMIN = 'admin-token';
const NODE = 'node-token';
const PODS = '/api/v1/namespaces/default/pods';

describe('pods/eviction', () => {
  let api: ApiApp;

  const call = async (method: string, path: string, body?: unknown, token = ADMIN) => {
    const res = await api.app.request(path, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  const eviction = (name: string, extra: Record<string, unknown> = {}) => ({
    apiVersion: 'policy/v1',
    kind: 'Eviction',
    metadata: { name, namespace: 'default' },
    ...extra,
  });
  const makePod = async (name: string, spec: Record<string, unknown> = {}) => {
    const res = await call('POST', PODS, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name },
      spec: { containers: [{ name: 'c', image: 'busybox:1.35' }], ...spec },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body as Pod;
  };
  const get = (name: string) => call('GET', `${PODS}/${name}`);

  before(async () => {
    const store = new MemoryStore();
    const authenticator = new TokenAuthenticator();
    authenticator.add(ADMIN, ADMIN_USER);
    authenticator.add(NODE, { name: 'system:node:n1', groups: ['system:nodes'] });
    api = createApiApp({ store, authenticator, routes: [(app, { service }) => registerEvictionRoutes(app, { service })] });
    await ensureSystemNamespaces(api.service);
  });

  it('a pod on a node is deleted gracefully: 201 Success, then Terminating with its own grace period', async () => {
    await makePod('bound', { nodeName: 'n1', terminationGracePeriodSeconds: 20 });
    const res = await call('POST', `${PODS}/bound/eviction`, eviction('bound'));
    assert.equal(res.status, 201);
    assert.deepEqual(res.body, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });
    const pod = (await get('bound')).body as Pod;
    assert.equal(pod.metadata.deletionGracePeriodSeconds, 20);
    assert.ok(pod.metadata.deletionTimestamp);
    // Evicting a pod that is already going is a success too.
    assert.equal((await call('POST', `${PODS}/bound/eviction`, eviction('bound'))).status, 201);
  });

  it('deleteOptions.gracePeriodSeconds 0 removes it at once; an unbound pod goes at once anyway', async () => {
    await makePod('now', { nodeName: 'n1' });
    assert.equal((await call('POST', `${PODS}/now/eviction`, eviction('now', { deleteOptions: { gracePeriodSeconds: 0 } }))).status, 201);
    assert.equal((await get('now')).status, 404);
    await makePod('pending');
    assert.equal(
      (await call('POST', `${PODS}/pending/eviction`, { apiVersion: 'policy/v1beta1', kind: 'Eviction', metadata: { name: 'pending' } })).status,
      201,
    );
    assert.equal((await get('pending')).status, 404);
  });

  it('a uid precondition that does not match is a 409', async () => {
    await makePod('guarded', { nodeName: 'n1' });
    const res = await call('POST', `${PODS}/guarded/eviction`, eviction('guarded', { deleteOptions: { preconditions: { uid: 'someone-else' } } }));
    assert.equal(res.status, 409);
    assert.equal((await get('guarded')).body.metadata.deletionTimestamp, undefined);
  });

  it("a missing pod is a 404 with Kubernetes' message", async () => {
    const res = await call('POST', `${PODS}/ghost/eviction`, eviction('ghost'));
    assert.equal(res.status, 404);
    assert.equal(res.body.message, 'pods "ghost" not found');
  });

  for (const [name, body, message] of [
    ['no body', '', /the request body is empty/],
    ["a name that is not the path's", eviction('other'), /name in URL does not match name in Eviction object/],
    ['another namespace', { ...eviction('x'), metadata: { name: 'x', namespace: 'kube-system' } }, /namespace of the provided object does not match/],
    ['another kind', { apiVersion: 'policy/v1', kind: 'Binding' }, /expected kind \(Eviction\)/],
    ['another apiVersion', { apiVersion: 'v1', kind: 'Eviction' }, /expected API version \(policy\/v1\)/],
    ['a negative grace period', eviction('x', { deleteOptions: { gracePeriodSeconds: -1 } }), /gracePeriodSeconds must be a non-negative integer/],
    ['deleteOptions that are not an object', eviction('x', { deleteOptions: [] }), /deleteOptions must be an object/],
  ] as const) {
    it(`400 for ${name}`, async () => {
      const res = await call('POST', `${PODS}/x/eviction`, body);
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.match(res.body.message, message);
    });
  }

  it('only POST', async () => {
    assert.equal((await call('GET', `${PODS}/x/eviction`)).status, 405);
  });

  it('nodes may not evict, not even their own pods', async () => {
    await makePod('mine', { nodeName: 'n1' });
    const res = await call('POST', `${PODS}/mine/eviction`, eviction('mine'), NODE);
    assert.equal(res.status, 403);
    assert.match(
      res.body.message,
      /^pods "mine" is forbidden: User "system:node:n1" cannot create resource "pods\/eviction" in API group "" in the namespace "default"/,
    );
    assert.equal((await get('mine')).body.metadata.deletionTimestamp, undefined);
  });
});
