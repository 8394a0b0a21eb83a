// limit and continue on lists: pages from one snapshot while objects change, remainingItemCount, bad limits and tokens, expired tokens.
import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { CachedStore } from '../../core/store/cached-store.js';
import { MemoryStore } from '../../core/store/memory-store.js';
import { TokenAuthenticator, ADMIN_USER } from './auth.js';
import { EXPIRED_CONTINUE_MESSAGE } from './object-service.js';
import { createApiApp, ensureSystemNamespaces, type ApiApp } from './server.js';

const TOKEN = 'test-token';

interface ListAnswer {
  metadata: { resourceVersion: string; continue?: string; remainingItemCount?: number };
  items: { metadata: { name: string; namespace: string; resourceVersion: string; labels?: Record<string, string> } }[];
  code?: number;
  reason?: string;
  message?: string;
}

function pod(name: string, labels: Record<string, string> = {}) {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels }, spec: { containers: [{ name: 'main', image: 'busybox:1.36' }] } };
}

describe('lists in chunks (limit and continue)', () => {
  let store: CachedStore;
  let api: ApiApp;
  const call = async (method: string, path: string, body?: unknown): Promise<{ status: number; body: ListAnswer }> => {
    const res = await api.app.request(path, {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as ListAnswer };
  };
  const names = (list: ListAnswer) => list.items.map((i) => i.metadata.name);
  const create = async (namespace: string, name: string, labels: Record<string, string> = {}) => {
    const res = await call('POST', `/api/v1/namespaces/${namespace}/pods`, pod(name, labels));
    assert.equal(res.status, 201, JSON.stringify(res.body));
  };
  /** Every page of `path` (which carries its own query), following metadata.continue. */
  const all = async (path: string, from?: string) => {
    const pages: ListAnswer[] = [];
    let token: string | undefined = from;
    do {
      const res = await call('GET', `${path}${token ? `&continue=${encodeURIComponent(token)}` : ''}`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      pages.push(res.body);
      token = res.body.metadata.continue;
    } while (token);
    return pages;
  };

  beforeEach(async () => {
    store = await CachedStore.open(new MemoryStore());
    const authenticator = new TokenAuthenticator();
    authenticator.add(TOKEN, ADMIN_USER);
    api = createApiApp({ store, authenticator });
    await ensureSystemNamespaces(api.service);
    for (const name of ['p1', 'p2', 'p3', 'p4', 'p5']) await create('default', name, { tier: name === 'p2' || name === 'p5' ? 'db' : 'web' });
  });
  afterEach(async () => {
    await store.close();
  });

  it('returns at most limit items, with continue and remainingItemCount until the last page', async () => {
    const pages = await all('/api/v1/namespaces/default/pods?limit=2');
    assert.deepEqual(pages.map(names), [['p1', 'p2'], ['p3', 'p4'], ['p5']]);
    assert.deepEqual(
      pages.map((p) => p.metadata.remainingItemCount),
      [3, 1, undefined],
    );
    assert.equal(pages[2]!.metadata.continue, undefined);
    assert.ok(
      pages.every((p) => p.metadata.resourceVersion === pages[0]!.metadata.resourceVersion),
      'every page is read at the revision of the first',
    );
    const token = JSON.parse(Buffer.from(pages[0]!.metadata.continue!, 'base64url').toString());
    assert.deepEqual(token, { v: 'meta.k8s.io/v1', rv: Number(pages[0]!.metadata.resourceVersion), start: 'p2\u0000' });
  });

  it('lists whole for limit=0 or no limit, and across namespaces in pages', async () => {
    assert.deepEqual(names((await call('GET', '/api/v1/namespaces/default/pods?limit=0')).body), ['p1', 'p2', 'p3', 'p4', 'p5']);
    assert.equal((await call('GET', '/api/v1/namespaces/default/pods?limit=0')).body.metadata.continue, undefined);
    await create('kube-system', 'k1');
    const pages = await all('/api/v1/pods?limit=4');
    assert.deepEqual(pages.map(names), [
      ['p1', 'p2', 'p3', 'p4'],
      ['p5', 'k1'],
    ]);
  });

  it('pages with a label selector carry no remainingItemCount and still find every match', async () => {
    const pages = await all('/api/v1/namespaces/default/pods?limit=1&labelSelector=tier%3Ddb');
    assert.deepEqual(pages.flatMap(names), ['p2', 'p5']);
    assert.ok(pages.every((p) => p.metadata.remainingItemCount === undefined));
  });

  it('serves later pages from the snapshot of the first while objects change', async () => {
    const first = (await call('GET', '/api/v1/namespaces/default/pods?limit=2')).body;
    await create('default', 'p3a');
    await call('DELETE', '/api/v1/namespaces/default/pods/p4', { gracePeriodSeconds: 0 });
    await call('PATCH', '/api/v1/namespaces/default/pods/p5', { metadata: { labels: { changed: 'yes' } } });
    const rest = await all('/api/v1/namespaces/default/pods?limit=2', first.metadata.continue);
    assert.deepEqual(rest.flatMap(names), ['p3', 'p4', 'p5']);
    assert.ok(rest.every((p) => p.metadata.resourceVersion === first.metadata.resourceVersion));
    const p5 = rest.flatMap((p) => p.items).find((i) => i.metadata.name === 'p5')!;
    assert.equal(p5.metadata.labels?.changed, undefined, 'p5 as it was at the first page');
    assert.ok(Number(p5.metadata.resourceVersion) <= Number(first.metadata.resourceVersion));
    assert.deepEqual(names((await call('GET', '/api/v1/namespaces/default/pods')).body), ['p1', 'p2', 'p3', 'p3a', 'p5']);
  });

  it('answers 400 BadRequest for a bad limit, a malformed token, and a token with a resourceVersion', async () => {
    for (const limit of ['-1', 'abc', '1.5', '2x']) {
      const res = await call('GET', `/api/v1/namespaces/default/pods?limit=${limit}`);
      assert.equal(res.status, 400, limit);
      assert.equal(res.body.reason, 'BadRequest');
    }
    for (const token of ['garbage!', Buffer.from('{"v":"meta.k8s.io/v1","rv":0,"start":"a"}').toString('base64url'), 'eyJ2Ijo']) {
      const res = await call('GET', `/api/v1/namespaces/default/pods?limit=2&continue=${encodeURIComponent(token)}`);
      assert.equal(res.status, 400, token);
      assert.equal(res.body.reason, 'BadRequest');
      assert.match(res.body.message!, /^invalid continue token: /);
    }
    const first = (await call('GET', '/api/v1/namespaces/default/pods?limit=2')).body;
    const res = await call(
      'GET',
      `/api/v1/namespaces/default/pods?limit=2&continue=${first.metadata.continue}&resourceVersion=${first.metadata.resourceVersion}`,
    );
    assert.equal(res.status, 400);
    assert.equal(res.body.message, 'specifying resource version is not allowed when using continue');
  });

  it('answers 410 Expired once the revision of the first page is compacted, with a token that goes on inconsistently', async () => {
    const first = (await call('GET', '/api/v1/namespaces/default/pods?limit=2')).body;
    await call('PATCH', '/api/v1/namespaces/default/pods/p3', { metadata: { labels: { changed: 'yes' } } });
    await store.compact(await store.currentRevision());
    const res = await call('GET', `/api/v1/namespaces/default/pods?limit=2&continue=${first.metadata.continue}`);
    assert.equal(res.status, 410);
    assert.equal(res.body.reason, 'Expired');
    assert.equal(res.body.message, EXPIRED_CONTINUE_MESSAGE);
    const inconsistent = res.body.metadata.continue;
    assert.ok(inconsistent, 'the Status carries a continue token');
    const rest = (await call('GET', `/api/v1/namespaces/default/pods?limit=2&continue=${inconsistent}`)).body;
    assert.deepEqual(names(rest), ['p3', 'p4']);
    assert.equal(rest.items[0]!.metadata.labels?.changed, 'yes', 'the inconsistent continuation reads the present');
  });
});
