// fieldValidation on writes, as kube-apiserver reads it: Strict (our default) refuses unknown fields, Warn drops each with a Warning header, Ignore drops them silently.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { CachedStore } from '../../core/store/cached-store.js';
import { MemoryStore } from '../../core/store/memory-store.js';
import { ADMIN_USER, TokenAuthenticator } from './auth.js';
import { startApiServer } from './server.js';

describe('fieldValidation', () => {
  const signal = new AbortController();
  let url: string;
  let closed: Promise<void>;
  before(async () => {
    const authenticator = new TokenAuthenticator();
    authenticator.add('admin-token', ADMIN_USER);
    const api = await startApiServer({ store: await CachedStore.open(new MemoryStore()), authenticator, address: '127.0.0.1', port: 0, signal: signal.signal });
    url = api.url;
    closed = api.closed;
  });
  after(async () => {
    signal.abort();
    await closed;
  });

  const pod = (name: string) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, bogusMeta: 1 },
    spec: { bogus: true, containers: [{ name: 'c', image: 'busybox', colour: 'red' }] },
  });
  const create = (name: string, query = '') =>
    fetch(`${url}/api/v1/namespaces/default/pods${query}`, {
      method: 'POST',
      headers: { authorization: 'Bearer admin-token', 'content-type': 'application/json' },
      body: JSON.stringify(pod(name)),
    });
  const stored = async (name: string) =>
    (await (await fetch(`${url}/api/v1/namespaces/default/pods/${name}`, { headers: { authorization: 'Bearer admin-token' } })).json()) as {
      metadata: Record<string, unknown>;
      spec: Record<string, unknown> & { containers: Record<string, unknown>[] };
    };

  it('refuses unknown fields by default and under Strict, writing nothing', async () => {
    for (const query of ['', '?fieldValidation=Strict']) {
      const res = await create('strict', query);
      assert.equal(res.status, 422);
      const status = (await res.json()) as { message: string };
      assert.match(status.message, /unknown field "spec\.bogus"/);
      assert.match(status.message, /unknown field "spec\.containers\[0\]\.colour"/);
    }
    const res = await fetch(`${url}/api/v1/namespaces/default/pods/strict`, { headers: { authorization: 'Bearer admin-token' } });
    assert.equal(res.status, 404);
  });

  it('under Warn creates without the unknown fields and warns of each', async () => {
    const res = await create('warned', '?fieldValidation=Warn');
    assert.equal(res.status, 201);
    const warnings = res.headers.get('warning') ?? '';
    for (const field of ['metadata.bogusMeta', 'spec.bogus', 'spec.containers[0].colour'])
      assert.ok(warnings.includes(`299 - "unknown field \\"${field}\\""`), warnings);
    const pod = await stored('warned');
    assert.equal(pod.spec.bogus, undefined);
    assert.equal(pod.metadata.bogusMeta, undefined);
    assert.equal(pod.spec.containers[0]!.colour, undefined);
    assert.equal(pod.spec.containers[0]!.image, 'busybox');
  });

  it('under Ignore creates without them and says nothing; a patch is judged the same way', async () => {
    const res = await create('ignored', '?fieldValidation=Ignore');
    assert.equal(res.status, 201);
    assert.equal(res.headers.get('warning'), null);
    const patch = (query: string) =>
      fetch(`${url}/api/v1/namespaces/default/pods/ignored${query}`, {
        method: 'PATCH',
        headers: { authorization: 'Bearer admin-token', 'content-type': 'application/merge-patch+json' },
        body: JSON.stringify({ metadata: { labels: { a: 'b' } }, spec: { extra: 1 } }),
      });
    assert.equal((await patch('')).status, 422);
    const warned = await patch('?fieldValidation=Warn');
    assert.equal(warned.status, 200);
    assert.match(warned.headers.get('warning') ?? '', /unknown field \\"spec\.extra\\"/);
    const pod = await stored('ignored');
    assert.equal(pod.spec.extra, undefined);
    assert.deepEqual(pod.metadata.labels, { a: 'b' });
  });

  it('answers an unknown directive with 400', async () => {
    const res = await create('bad', '?fieldValidation=Loose');
    assert.equal(res.status, 400);
    assert.match(((await res.json()) as { message: string }).message, /fieldValidation: Unsupported value: "Loose"/);
  });
});
