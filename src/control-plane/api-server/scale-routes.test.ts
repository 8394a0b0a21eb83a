// The scale subresource through the API app on a memory store: Scale reads, PUT and PATCH of replicas, conflicts, bad input, discovery.
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryStore } from '../../core/store/memory-store.js';
import { ADMIN_USER, TokenAuthenticator } from './auth.js';
import { registerScaleRoutes } from './scale-routes.js';
import { createApiApp, ensureSystemNamespaces, type ApiApp } from './server.js';

const ADMIN = 'admin-token';
const RS = '/apis/apps/v1/namespaces/default/replicasets';

describe('replicasets/scale', () => {
  let api: ApiApp;
  const call = async (method: string, path: string, body?: unknown, contentType = 'application/json') => {
    const res = await api.app.request(path, {
      method,
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': contentType },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };

  before(async () => {
    const authenticator = new TokenAuthenticator();
    authenticator.add(ADMIN, ADMIN_USER);
    api = createApiApp({ store: new MemoryStore(), authenticator, routes: [(app, { service }) => registerScaleRoutes(app, { service })] });
    await ensureSystemNamespaces(api.service);
    const res = await call('POST', RS, {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name: 'web' },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
      },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
  });

  it('GET answers an autoscaling/v1 Scale with the selector as a string', async () => {
    const res = await call('GET', `${RS}/web/scale`);
    assert.equal(res.status, 200);
    assert.equal(res.body.apiVersion, 'autoscaling/v1');
    assert.equal(res.body.kind, 'Scale');
    assert.equal(res.body.metadata.name, 'web');
    assert.deepEqual(res.body.spec, { replicas: 2 });
    assert.deepEqual(res.body.status, { replicas: 0, selector: 'app=web' });
  });

  it('PUT sets spec.replicas; a stale resourceVersion is a 409', async () => {
    const current = (await call('GET', `${RS}/web/scale`)).body;
    const res = await call('PUT', `${RS}/web/scale`, { ...current, spec: { replicas: 4 } });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.spec.replicas, 4);
    assert.equal((await call('GET', `${RS}/web`)).body.spec.replicas, 4);
    assert.equal((await call('PUT', `${RS}/web/scale`, { ...current, spec: { replicas: 5 } })).status, 409);
  });

  it('PATCH (merge) sets spec.replicas and leaves the rest of the object alone', async () => {
    const res = await call('PATCH', `${RS}/web/scale`, { spec: { replicas: 1 } }, 'application/merge-patch+json');
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const rs = (await call('GET', `${RS}/web`)).body;
    assert.equal(rs.spec.replicas, 1);
    assert.deepEqual(rs.spec.selector, { matchLabels: { app: 'web' } });
  });

  it('bad input: negative or non-integer replicas 422, other methods 405, missing object 404', async () => {
    assert.equal((await call('PATCH', `${RS}/web/scale`, { spec: { replicas: -1 } }, 'application/merge-patch+json')).status, 422);
    assert.equal((await call('PATCH', `${RS}/web/scale`, { spec: { replicas: 'x' } }, 'application/merge-patch+json')).status, 422);
    assert.equal((await call('DELETE', `${RS}/web/scale`)).status, 405);
    assert.equal((await call('GET', `${RS}/nope/scale`)).status, 404);
  });

  it('discovery lists replicasets/scale', async () => {
    const res = await call('GET', '/apis/apps/v1');
    const scale = res.body.resources.find((r: { name: string }) => r.name === 'replicasets/scale');
    assert.deepEqual(scale, {
      name: 'replicasets/scale',
      singularName: '',
      namespaced: true,
      group: 'autoscaling',
      version: 'v1',
      kind: 'Scale',
      verbs: ['get', 'patch', 'update'],
    });
  });
});
