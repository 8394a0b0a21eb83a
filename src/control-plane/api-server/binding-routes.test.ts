// The binding subresource through the API app on a memory store: compare-and-swap, 409 on a second binding, 404, bad bodies, who may bind.
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { podKind, type Pod } from '../../core/api/pod.js';
import { ConflictError } from '../../core/errors.js';
import { MemoryStore } from '../../core/store/memory-store.js';
import { ADMIN_USER, TokenAuthenticator } from './auth.js';
import { registerBindingRoutes } from './binding-routes.js';
import { bindPod } from './pod-binding.js';
import { createApiApp, ensureSystemNamespaces, type ApiApp } from './server.js';

const ADMIN = 'admin-token';
const NODE = 'node-token';
const PODS = '/api/v1/namespaces/default/pods';

describe('pods/binding', () => {
  let api: ApiApp;
  let store: MemoryStore;

  const call = async (method: string, path: string, body?: unknown, token = ADMIN) => {
    const res = await api.app.request(path, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  const binding = (pod: string, node: string, extra: Record<string, unknown> = {}) => ({
    apiVersion: 'v1',
    kind: 'Binding',
    metadata: { name: pod },
    target: { kind: 'Node', name: node },
    ...extra,
  });
  const makePod = async (name: string) => {
    const res = await call('POST', PODS, { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'busybox:1.35' }] } });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body as Pod;
  };

  before(async () => {
    store = new MemoryStore();
    const authenticator = new TokenAuthenticator();
    authenticator.add(ADMIN, ADMIN_USER);
    authenticator.add(NODE, { name: 'system:node:n1', groups: ['system:nodes'] });
    api = createApiApp({ store, authenticator, routes: [(app, { service }) => registerBindingRoutes(app, { service })] });
    await ensureSystemNamespaces(api.service);
  });

  it('binds: 201 Success, spec.nodeName and PodScheduled=True in one write', async () => {
    const created = await makePod('web');
    const res = await call('POST', `${PODS}/web/binding`, binding('web', 'n1'));
    assert.equal(res.status, 201);
    assert.deepEqual(res.body, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });
    const pod = (await call('GET', `${PODS}/web`)).body as Pod;
    assert.equal(pod.spec.nodeName, 'n1');
    const cond = pod.status?.conditions?.find((c) => c.type === 'PodScheduled');
    assert.equal(cond?.status, 'True');
    assert.ok(cond?.lastTransitionTime);
    assert.equal(Number(pod.metadata.resourceVersion), Number(created.metadata.resourceVersion) + 1, 'one store write');
  });

  it('keeps spec.nodeName out of reach of updates: a patch or a put that sets or changes it is a 422 and writes nothing', async () => {
    const created = await makePod('pinned');
    const patch = async (nodeName: string) => {
      const res = await api.app.request(`${PODS}/pinned`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/merge-patch+json' },
        body: JSON.stringify({ spec: { nodeName } }),
      });
      return { status: res.status, body: (await res.json()) as { reason?: string; message?: string; details?: { causes?: { field: string }[] } } };
    };
    const unbound = await patch('n2');
    assert.equal(unbound.status, 422);
    assert.equal(unbound.body.reason, 'Invalid');
    assert.equal(unbound.body.details?.causes?.[0]?.field, 'spec.nodeName');
    assert.match(unbound.body.message ?? '', /^Pod "pinned" is invalid: spec\.nodeName: Forbidden: field is immutable/);
    assert.equal((await call('GET', `${PODS}/pinned`)).body.metadata.resourceVersion, created.metadata.resourceVersion, 'nothing written');

    assert.equal((await call('POST', `${PODS}/pinned/binding`, binding('pinned', 'n1'))).status, 201);
    assert.equal((await patch('n2')).status, 422);
    const bound = (await call('GET', `${PODS}/pinned`)).body as Pod;
    const put = await call('PUT', `${PODS}/pinned`, { ...bound, spec: { ...bound.spec, nodeName: 'n3' } });
    assert.equal(put.status, 422);
    assert.equal(((await call('GET', `${PODS}/pinned`)).body as Pod).spec.nodeName, 'n1');
    // Updates that leave the node alone still go through.
    const relabel = await call('PUT', `${PODS}/pinned`, { ...bound, metadata: { ...bound.metadata, labels: { app: 'x' } } });
    assert.equal(relabel.status, 200, JSON.stringify(relabel.body));
  });

  it('refuses a second binding with 409, naming the node the pod has', async () => {
    await makePod('twice');
    assert.equal((await call('POST', `${PODS}/twice/binding`, binding('twice', 'n1'))).status, 201);
    const res = await call('POST', `${PODS}/twice/binding`, binding('twice', 'n2'));
    assert.equal(res.status, 409);
    assert.equal(res.body.kind, 'Status');
    assert.equal(res.body.reason, 'Conflict');
    assert.equal(res.body.message, 'pod twice is already assigned to node "n1"');
    assert.equal(((await call('GET', `${PODS}/twice`)).body as Pod).spec.nodeName, 'n1');
  });

  it('binds each pod once when many bind at the same time', async () => {
    await makePod('race');
    const answers = await Promise.all(['n1', 'n2', 'n3', 'n4', 'n5'].map((n) => call('POST', `${PODS}/race/binding`, binding('race', n))));
    assert.deepEqual(answers.map((a) => a.status).sort(), [201, 409, 409, 409, 409]);
  });

  it('also takes POST .../bindings with the pod named in the body', async () => {
    await makePod('older');
    assert.equal((await call('POST', '/api/v1/namespaces/default/bindings', binding('older', 'n2'))).status, 201);
    assert.equal(((await call('GET', `${PODS}/older`)).body as Pod).spec.nodeName, 'n2');
  });

  it('answers 404 for a pod that does not exist', async () => {
    const res = await call('POST', `${PODS}/ghost/binding`, binding('ghost', 'n1'));
    assert.equal(res.status, 404);
    assert.equal(res.body.message, 'pods "ghost" not found');
  });

  it('refuses bad bodies with 400 or 422 and a Status', async () => {
    await makePod('bad');
    const cases: [unknown, number, RegExp][] = [
      ['{not json', 400, /not valid JSON/],
      [{ apiVersion: 'v1', kind: 'Pod', target: { name: 'n1' } }, 400, /does not match the expected kind \(Binding\)/],
      [{ apiVersion: 'v2', kind: 'Binding', target: { name: 'n1' } }, 400, /API version/],
      [{ kind: 'Binding', metadata: { name: 'bad' } }, 422, /target: Required value/],
      [{ kind: 'Binding', target: { name: 'Not_A_Node' } }, 422, /target\.name/],
      [{ kind: 'Binding', target: { kind: 'Service', name: 'n1' } }, 422, /target\.kind: Unsupported value: "Service"/],
      [binding('other', 'n1'), 400, /does not match the name on the URL/],
    ];
    for (const [body, status, message] of cases) {
      const res = await call('POST', `${PODS}/bad/binding`, body);
      assert.equal(res.status, status, JSON.stringify(res.body));
      assert.equal(res.body.kind, 'Status');
      assert.match(res.body.message, message);
    }
    assert.equal(((await call('GET', `${PODS}/bad`)).body as Pod).spec.nodeName, undefined, 'nothing was bound');
  });

  it('binds only the incarnation named by metadata.uid', async () => {
    await makePod('again');
    const res = await call('POST', `${PODS}/again/binding`, binding('again', 'n1', { metadata: { name: 'again', uid: 'not-its-uid' } }));
    assert.equal(res.status, 409);
    assert.match(res.body.message, /UID in the binding/);
  });

  it('refuses a pod being deleted', async () => {
    const pod = await makePod('leaving');
    // A pod with a finalizer stays, marked, after its deletion.
    await api.service.patch(podKind, 'default', 'leaving', { metadata: { finalizers: ['test/hold'] } });
    await api.service.delete(podKind, 'default', 'leaving');
    const res = await call('POST', `${PODS}/leaving/binding`, binding('leaving', 'n1'));
    assert.equal(res.status, 409);
    assert.match(res.body.message, /being deleted/);
    await api.service.patch(podKind, 'default', 'leaving', { metadata: { finalizers: null } });
    assert.ok(pod.metadata.uid);
  });

  it('answers 405 to other methods', async () => {
    await makePod('verbs');
    assert.equal((await call('GET', `${PODS}/verbs/binding`)).status, 405);
    assert.equal((await call('PUT', `${PODS}/verbs/binding`, binding('verbs', 'n1'))).status, 405);
  });

  it('refuses nodes with 403: a kubelet may not bind pods, not even to itself', async () => {
    await makePod('mine');
    const res = await call('POST', `${PODS}/mine/binding`, binding('mine', 'n1'), NODE);
    assert.equal(res.status, 403);
    assert.match(res.body.message, /pods "mine" is forbidden: User "system:node:n1" cannot create resource "pods\/binding"/);
    assert.equal((await call('POST', '/api/v1/namespaces/default/bindings', binding('mine', 'n1'), NODE)).status, 403);
    assert.equal(((await call('GET', `${PODS}/mine`)).body as Pod).spec.nodeName, undefined);
  });
});

describe('bindPod', () => {
  it('writes against the copy the caller saw, and reads again only when that copy is stale', async () => {
    const store = new MemoryStore();
    const api = createApiApp({ store, authenticator: new TokenAuthenticator() });
    await ensureSystemNamespaces(api.service);
    const seen = (await api.service.create(podKind, 'default', { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'x:1' }] } })) as Pod;
    // Someone writes the pod's status after the caller read it: the stale copy costs a retry, not a wrong write.
    await api.service.patch(podKind, 'default', 'p', { status: { message: 'hello' } }, { subresource: 'status' });
    const bound = await bindPod(store, { namespace: 'default', name: 'p', nodeName: 'n1', seen });
    assert.equal(bound.spec.nodeName, 'n1');
    const stored = (await api.service.get(podKind, 'default', 'p')) as Pod;
    assert.equal(stored.status?.message, 'hello', 'the other write is kept');
    assert.equal(stored.spec.nodeName, 'n1');
    await assert.rejects(
      bindPod(store, { namespace: 'default', name: 'p', nodeName: 'n2', seen }),
      (err: unknown) => err instanceof ConflictError && /already assigned to node "n1"/.test(err.message),
    );
  });
});
