// The OpenAPI routes through app.request(): the v3 index and documents, v2, ETag and hash caching, content negotiation, authentication.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryStore } from '../../core/store/memory-store.js';
import { ADMIN_USER, TokenAuthenticator } from './auth.js';
import { createApiApp } from './server.js';

const TOKEN = 'openapi-token';
const NODE_TOKEN = 'node-token';

function app() {
  const authenticator = new TokenAuthenticator();
  authenticator.add(TOKEN, ADMIN_USER);
  authenticator.add(NODE_TOKEN, { name: 'system:node:w1', groups: ['system:nodes', 'system:authenticated'] });
  return createApiApp({ store: new MemoryStore(), authenticator }).app;
}

const get = (a: ReturnType<typeof app>, path: string, headers: Record<string, string> = {}, token = TOKEN) =>
  a.request(path, { headers: { authorization: `Bearer ${token}`, ...headers } });

describe('OpenAPI routes', () => {
  it('serves the v3 index, and each group/version document at the URL the index gives', async () => {
    const a = app();
    const res = await get(a, '/openapi/v3');
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /application\/json/);
    const index = (await res.json()) as { paths: Record<string, { serverRelativeURL: string }> };
    const url = index.paths['apis/apps/v1']!.serverRelativeURL;
    assert.match(url, /^\/openapi\/v3\/apis\/apps\/v1\?hash=[0-9A-F]+$/);
    const doc = await get(a, url);
    assert.equal(doc.status, 200);
    assert.equal(doc.headers.get('cache-control'), 'public, immutable, max-age=31536000');
    const body = (await doc.json()) as { components: { schemas: Record<string, unknown> } };
    assert.ok(body.components.schemas['io.k8s.api.apps.v1.Deployment']);
  });

  it('answers 304 to a client holding the current ETag, and sends an old hash to the current one', async () => {
    const a = app();
    const first = await get(a, '/openapi/v3/api/v1');
    const etag = first.headers.get('etag')!;
    assert.match(etag, /^"[0-9A-F]+"$/);
    assert.equal(first.headers.get('cache-control'), 'no-cache, private');
    const again = await get(a, '/openapi/v3/api/v1', { 'if-none-match': etag });
    assert.equal(again.status, 304);
    const old = await get(a, '/openapi/v3/api/v1?hash=0123');
    assert.equal(old.status, 301);
    assert.equal(old.headers.get('location'), `/openapi/v3/api/v1?hash=${etag.slice(1, -1)}`);
  });

  it('serves swagger 2.0 at /openapi/v2, and 406 to a client that takes only protobuf', async () => {
    const a = app();
    const v2 = await get(a, '/openapi/v2', { accept: 'application/json' });
    assert.equal(v2.status, 200);
    assert.equal(((await v2.json()) as { swagger: string }).swagger, '2.0');
    const pb = await get(a, '/openapi/v2', { accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf' });
    assert.equal(pb.status, 406);
    assert.equal(((await pb.json()) as { reason: string }).reason, 'NotAcceptable');
    const either = await get(a, '/openapi/v3', { accept: 'application/com.github.proto-openapi.spec.v3@v1.0+protobuf, application/json' });
    assert.equal(either.status, 200);
  });

  it('answers 404 for an unknown group/version, 401 without credentials, and serves any authenticated user', async () => {
    const a = app();
    assert.equal((await get(a, '/openapi/v3/apis/nope/v1')).status, 404);
    assert.equal((await a.request('/openapi/v3')).status, 401);
    assert.equal((await get(a, '/openapi/v3', {}, NODE_TOKEN)).status, 200);
  });
});
