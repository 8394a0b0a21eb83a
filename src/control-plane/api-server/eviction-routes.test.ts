// The eviction subresource through the API app on a memory store: graceful deletion, deleteOptions, 404, bad bodies, who may evict.
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { podDisruptionBudgetKind, type PodDisruptionBudget } from '../../core/api/poddisruptionbudget.js';
import { podKind, type Pod } from '../../core/api/pod.js';
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
  it('a PodDisruptionBudget: one disruption taken, then 429 with the budget as the cause; two budgets answer 500', async () => {
    const PDBS = '/apis/policy/v1/namespaces/default/poddisruptionbudgets';
    for (const name of ['guarded-1', 'guarded-2']) {
      await makePod(name, { nodeName: 'n1' });
      await api.service.patch(podKind, 'default', name, { metadata: { labels: { app: 'guarded' } } });
      await api.service.patch(
        podKind,
        'default',
        name,
        { status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } },
        { subresource: 'status' },
      );
    }
    const created = await call('POST', PDBS, {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'guard' },
      spec: { minAvailable: 1, selector: { matchLabels: { app: 'guarded' } } },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    // What the disruption controller would write: 2 healthy, 1 needed.
    await api.service.patch(
      podDisruptionBudgetKind,
      'default',
      'guard',
      { status: { observedGeneration: 1, currentHealthy: 2, desiredHealthy: 1, expectedPods: 2, disruptionsAllowed: 1 } },
      { subresource: 'status' },
    );

    assert.equal((await call('POST', `${PODS}/guarded-1/eviction`, eviction('guarded-1'))).status, 201);
    const budget = (await call('GET', `${PDBS}/guard`)).body as PodDisruptionBudget;
    assert.equal(budget.status?.disruptionsAllowed, 0);
    assert.ok(budget.status?.disruptedPods?.['guarded-1']);

    const refused = await call('POST', `${PODS}/guarded-2/eviction`, eviction('guarded-2'));
    assert.equal(refused.status, 429);
    assert.equal(refused.body.message, "Cannot evict pod as it would violate the pod's disruption budget.");
    assert.equal(refused.body.reason, 'TooManyRequests');
    assert.deepEqual(refused.body.details.causes, [
      { reason: 'DisruptionBudget', message: 'The disruption budget guard needs 1 healthy pods and has 2 currently' },
    ]);
    assert.equal((await get('guarded-2')).body.metadata.deletionTimestamp, undefined, 'a refused eviction deletes nothing');

    await call('POST', PDBS, {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'guard-2' },
      spec: { maxUnavailable: 1, selector: { matchLabels: { app: 'guarded' } } },
    });
    const two = await call('POST', `${PODS}/guarded-2/eviction`, eviction('guarded-2'));
    assert.equal(two.status, 500);
    assert.equal(two.body.message, 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.');
  });
});
