// Join, join tokens, token review and authorization through the API app (app.request) on a memory store, wired as the master wires them.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryStore } from '../../core/store/memory-store.js';
import { JoinTokenStore } from '../master/join-tokens.js';
import { NodeCredentials } from '../master/node-credentials.js';
import { NodeRegistrar } from '../master/node-join.js';
import { PodCIDRAllocator } from '../master/pod-cidr.js';
import { ADMIN_USER, anyOf, TokenAuthenticator } from './auth.js';
import { parseCreateJoinToken, registerJoinRoutes } from './join-routes.js';
import { createApiApp, ensureSystemNamespaces, type ApiApp } from './server.js';
import { registerTokenReviewRoutes } from './token-review-routes.js';

const ADMIN = 'admin-token';
const JOIN = '/apis/minik8s.io/v1/join';
const TOKENS = '/apis/minik8s.io/v1/jointokens';
const REVIEWS = '/apis/authentication.k8s.io/v1/tokenreviews';

describe('join and node authorization through the API', () => {
  const stop = new AbortController();
  let api: ApiApp;
  let store: MemoryStore;
  let joinToken: string;
  let running: Promise<void>;

  const call = async (method: string, path: string, token: string, body?: unknown, contentType = 'application/json') => {
    const res = await api.app.request(path, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': contentType },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  // Each name's machine has one node password, as a worker keeps it in its data dir.
  const join = (nodeName: unknown, token = joinToken, nodePassword = `password-of-node-${String(nodeName)}`) =>
    call('POST', JOIN, token, { apiVersion: 'minik8s.io/v1', kind: 'JoinRequest', nodeName, nodePassword });

  before(async () => {
    store = new MemoryStore();
    const admins = new TokenAuthenticator();
    admins.add(ADMIN, ADMIN_USER);
    const credentials = new NodeCredentials({ store });
    running = credentials.start(stop.signal);
    await credentials.whenSynced();
    const tokens = new JoinTokenStore({ store });
    const authenticator = anyOf(admins, credentials, tokens);
    let registrar!: NodeRegistrar;
    api = createApiApp({
      store,
      authenticator,
      routes: [
        (app) => registerJoinRoutes(app, { join: (n, d) => registrar.join(n, d), tokens, registryPort: 5123, clusterCIDR: '10.200.0.0/16' }),
        (app) => registerTokenReviewRoutes(app, { authenticator }),
      ],
    });
    registrar = new NodeRegistrar({ service: api.service, allocator: new PodCIDRAllocator({ store, clusterCIDR: '10.200.0.0/16' }), credentials });
    await ensureSystemNamespaces(api.service);
    joinToken = (await tokens.create()).token;
  });
  after(async () => {
    stop.abort();
    await running;
  });

  it('joins with a join token: a JoinResponse with credential, pod CIDR, registry port and cluster CIDR', async () => {
    const res = await join('n1');
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.kind, 'JoinResponse');
    assert.equal(res.body.apiVersion, 'minik8s.io/v1');
    assert.equal(res.body.nodeName, 'n1');
    assert.match(res.body.token, /^[0-9a-f]{64}$/);
    assert.equal(res.body.podCIDR, '10.200.0.0/24');
    assert.equal(res.body.registryPort, 5123);
    assert.equal(res.body.clusterCIDR, '10.200.0.0/16');
    const node = await call('GET', '/api/v1/nodes/n1', res.body.token);
    assert.equal(node.status, 200);
    assert.deepEqual(node.body.spec.podCIDRs, ['10.200.0.0/24']);
  });

  it('refuses bad and malformed joins with Status and writes nothing', async () => {
    const cases: [unknown, number, string?][] = [
      [{ apiVersion: 'minik8s.io/v1', kind: 'JoinRequest', nodeName: 'Bad_Name' }, 422],
      [{ apiVersion: 'minik8s.io/v1', kind: 'JoinRequest' }, 422],
      [{ apiVersion: 'minik8s.io/v1', kind: 'JoinRequest', nodeName: 'n9' }, 422],
      [{ nodeName: 'n9', nodePassword: 'short' }, 422],
      [{ nodeName: 'n9', nodePassword: 'password-of-node-n9', labels: ['a'] }, 422],
      [{ nodeName: 'n9', nodePassword: 'password-of-node-n9', taints: {} }, 422],
      [{ nodeName: 7 }, 422],
      [{ nodeName: 'n9', extra: true }, 400],
      [{ apiVersion: 'v1', kind: 'JoinRequest', nodeName: 'n9' }, 400],
      [{ kind: 'Pod', nodeName: 'n9' }, 400],
      ['{', 400],
      ['[]', 400],
      ['', 400],
      [{ nodeName: 'n9' }, 415, 'text/plain'],
    ];
    for (const [body, status, contentType] of cases) {
      const before = await store.currentRevision();
      const res = await call('POST', JOIN, joinToken, body, contentType);
      assert.equal(res.status, status, JSON.stringify(body));
      assert.equal(res.body.kind, 'Status');
      assert.equal(await store.currentRevision(), before, `nothing written for ${JSON.stringify(body)}`);
    }
    assert.equal((await call('GET', JOIN, ADMIN)).status, 405);
  });

  it('binds a node name to its node password: a join token cannot take over a joined node', async () => {
    const real = (await join('bound')).body.token as string;
    const intruder = await join('bound', joinToken, 'another-machine-password');
    assert.equal(intruder.status, 403);
    assert.equal(intruder.body.reason, 'Forbidden');
    assert.match(intruder.body.message, /^node "bound" has already joined with another node password: a join token cannot take over/);
    assert.equal(intruder.body.token, undefined);
    // The real node's credential keeps working, and it may join again with its own password.
    assert.equal((await call('GET', '/api/v1/nodes/bound', real)).status, 200);
    assert.equal((await join('bound')).status, 200);
  });

  it('answers 401 to unknown or revoked join tokens', async () => {
    assert.equal((await join('n9', 'abcdef.0123456789abcdef')).status, 401);
    const made = await call('POST', TOKENS, ADMIN, { ttlSeconds: 600 });
    assert.equal((await call('DELETE', `${TOKENS}/${made.body.metadata.name}`, ADMIN)).status, 200);
    const res = await join('n9', made.body.token);
    assert.equal(res.status, 401);
    assert.equal(res.body.reason, 'Unauthorized');
  });

  it('lets a join token do nothing but join', async () => {
    for (const [method, path] of [
      ['GET', '/api/v1/pods'],
      ['GET', '/api'],
      ['GET', TOKENS],
      ['POST', REVIEWS],
      ['GET', '/api/v1/nodes/n1'],
    ]) {
      const res = await call(method!, path!, joinToken, method === 'POST' ? { spec: { token: 'x' } } : undefined);
      assert.equal(res.status, 403, `${method} ${path}`);
      assert.match(res.body.message, /User "system:bootstrap:\w{6}" cannot/);
    }
  });

  it("lets a node write its own Node and its own pods' status, and nothing else", async () => {
    const n1 = (await join('n1')).body.token as string;
    const n2 = (await join('n2')).body.token as string;
    const status = { status: { conditions: [{ type: 'Ready', status: 'True' }] } };
    const merge = 'application/merge-patch+json';
    assert.equal((await call('PATCH', '/api/v1/nodes/n1/status', n1, status, merge)).status, 200);
    assert.equal((await call('PATCH', '/api/v1/nodes/n1', n1, { metadata: { labels: { a: 'b' } } }, merge)).status, 200);
    const other = await call('PATCH', '/api/v1/nodes/n2/status', n1, status, merge);
    assert.equal(other.status, 403);
    assert.equal(
      other.body.message,
      'nodes "n2" is forbidden: User "system:node:n1" cannot patch resource "nodes/status" in API group "" at the cluster scope: node "n1" may only change its own Node object',
    );
    assert.equal((await call('DELETE', '/api/v1/nodes/n1', n1)).status, 403);
    assert.equal((await call('POST', '/api/v1/nodes', n1, { metadata: { name: 'n3' } })).status, 403);
    // Its own name passes, and the route still reads the body the check had to read first.
    const own = await call('POST', '/api/v1/nodes', n1, { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } });
    assert.equal(own.status, 409, JSON.stringify(own.body));
    assert.match(own.body.message, /nodes "n1" already exists/);
    assert.equal((await call('POST', '/api/v1/nodes', n1, '{')).status, 403, 'a body without a name is judged as no name');

    const pod = (name: string, nodeName: string) => ({ metadata: { name }, spec: { nodeName, containers: [{ name: 'c', image: 'busybox' }] } });
    assert.equal((await call('POST', '/api/v1/namespaces/default/pods', ADMIN, pod('mine', 'n1'))).status, 201);
    assert.equal((await call('POST', '/api/v1/namespaces/default/pods', ADMIN, pod('theirs', 'n2'))).status, 201);
    const created = await call('POST', '/api/v1/namespaces/default/pods', n1, pod('sneaky', 'n1'));
    assert.equal(created.status, 403);
    assert.match(created.body.message, /^pods is forbidden: User "system:node:n1" cannot create resource "pods" in API group "" in the namespace "default"/);
    const podStatus = { status: { phase: 'Running' } };
    assert.equal((await call('PATCH', '/api/v1/namespaces/default/pods/mine/status', n1, podStatus, merge)).status, 200);
    assert.equal((await call('PATCH', '/api/v1/namespaces/default/pods/theirs/status', n1, podStatus, merge)).status, 403);
    assert.equal((await call('PATCH', '/api/v1/namespaces/default/pods/theirs/status', n2, podStatus, merge)).status, 200);
    assert.equal((await call('PATCH', '/api/v1/namespaces/default/pods/mine', n1, { metadata: { labels: { x: 'y' } } }, merge)).status, 403);
    assert.equal((await call('PATCH', '/api/v1/namespaces/default/pods/gone/status', n1, podStatus, merge)).status, 404);
    assert.equal((await call('DELETE', '/api/v1/namespaces/default/pods/theirs', n1)).status, 403);
    assert.equal((await call('DELETE', '/api/v1/namespaces/default/pods/mine', n1)).status, 200);
    assert.equal(
      (
        await call('POST', '/api/v1/namespaces/default/events', n1, {
          metadata: { name: 'e1' },
          involvedObject: { kind: 'Pod', name: 'mine', namespace: 'default' },
          reason: 'Started',
          message: 'ok',
          type: 'Normal',
        })
      ).status,
      201,
    );
    assert.equal((await call('GET', '/api/v1/pods', n1)).status, 200);
    assert.equal((await call('POST', '/api/v1/namespaces/default/services', n1, { metadata: { name: 's' }, spec: { ports: [{ port: 80 }] } })).status, 403);
    assert.equal((await call('GET', TOKENS, n1)).status, 403);
  });

  it('reviews tokens for admins and nodes', async () => {
    const n1 = (await join('n1')).body.token as string;
    const review = (token: unknown) => ({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } });
    const yes = await call('POST', REVIEWS, n1, review(n1));
    assert.equal(yes.status, 201);
    assert.deepEqual(yes.body.status, { authenticated: true, user: { username: 'system:node:n1', groups: ['system:nodes'] } });
    assert.deepEqual((await call('POST', REVIEWS, ADMIN, review(ADMIN))).body.status, {
      authenticated: true,
      user: { username: 'admin', groups: ['system:masters'] },
    });
    assert.deepEqual((await call('POST', REVIEWS, ADMIN, review('nope'))).body.status, { authenticated: false });
    assert.equal((await call('POST', REVIEWS, ADMIN, review(''))).status, 400);
    assert.equal((await call('POST', REVIEWS, ADMIN, { spec: {} })).status, 400);
    assert.equal((await call('POST', REVIEWS, ADMIN, { apiVersion: 'v1', spec: { token: 'x' } })).status, 400);
  });

  it('serves the join token API to admins: create once in clear, list and get without secrets, delete', async () => {
    const made = await call('POST', TOKENS, ADMIN, { apiVersion: 'minik8s.io/v1', kind: 'JoinToken', ttlSeconds: 3600, description: 'for n5' });
    assert.equal(made.status, 201);
    assert.match(made.body.token, /^[a-z0-9]{6}\.[a-z0-9]{16}$/);
    assert.equal(made.body.spec.description, 'for n5');
    const id = made.body.metadata.name as string;
    assert.equal(made.body.token.slice(0, 6), id);
    const listed = await call('GET', TOKENS, ADMIN);
    assert.equal(listed.body.kind, 'JoinTokenList');
    assert.ok(listed.body.items.some((t: { metadata: { name: string } }) => t.metadata.name === id));
    assert.equal(JSON.stringify(listed.body).includes(made.body.token.slice(7)), false, 'no secrets in lists');
    assert.equal((await call('GET', `${TOKENS}/${id}`, ADMIN)).body.spec.description, 'for n5');
    assert.equal((await join('n5', made.body.token)).status, 200);
    assert.equal((await call('DELETE', `${TOKENS}/${id}`, ADMIN)).status, 200);
    assert.equal((await call('GET', `${TOKENS}/${id}`, ADMIN)).status, 404);
    assert.equal((await call('POST', TOKENS, ADMIN, '')).status, 201, 'an empty body takes the defaults');
    for (const bad of [{ ttlSeconds: -1 }, { ttlSeconds: 1.5 }, { ttlSeconds: '1h' }, { description: 5 }, { description: 'a\nb' }]) {
      assert.equal((await call('POST', TOKENS, ADMIN, bad)).status, 422, JSON.stringify(bad));
    }
    assert.equal((await call('POST', TOKENS, ADMIN, { tll: 5 })).status, 400);
  });

  it('leaves public paths to everyone, whatever the method', async () => {
    assert.equal((await api.app.request('/healthz')).status, 200);
    assert.equal((await api.app.request('/version', { method: 'POST' })).status, 404);
  });

  it('parses token creation options', () => {
    assert.deepEqual(parseCreateJoinToken({}), {});
    assert.deepEqual(parseCreateJoinToken({ ttlSeconds: 0, description: '' }), { ttlSeconds: 0 });
  });
});
