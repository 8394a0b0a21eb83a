// dryRun=All over HTTP: create, update, patch and delete validate and answer as the write would, and the store's revision does not move.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryStore } from '../../core/store/memory-store.js';
import { ADMIN_USER, TokenAuthenticator } from './auth.js';
import { parseDryRun } from './resource-routes.js';
import { startApiServer, type RunningApiServer } from './server.js';

const TOKEN = 'dry-run-admin';
const PODS = '/api/v1/namespaces/default/pods';
const SERVICES = '/api/v1/namespaces/default/services';
const pod = (name: string, image = 'busybox') => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image }] } });

/** What the tests read of an answer: an object, or a Status's message. */
interface Answer {
  message?: string;
  metadata: { name: string; labels?: Record<string, string>; [key: string]: unknown };
  spec: { restartPolicy?: string };
}

describe('dryRun=All', () => {
  const store = new MemoryStore();
  const ac = new AbortController();
  let server: RunningApiServer;
  const call = async (method: string, path: string, body?: unknown, contentType = 'application/json') => {
    const res = await fetch(`http://127.0.0.1:${server.port}${path}`, {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': contentType },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as Answer };
  };
  /** Runs `write` and asserts that nothing reached the store. */
  const nothingWritten = async <T>(write: () => Promise<T>): Promise<T> => {
    const before = await store.currentRevision();
    const result = await write();
    assert.equal(await store.currentRevision(), before, 'the store changed');
    return result;
  };

  before(async () => {
    const authenticator = new TokenAuthenticator();
    authenticator.add(TOKEN, ADMIN_USER);
    server = await startApiServer({ store, authenticator, address: '127.0.0.1', port: 0, signal: ac.signal });
    assert.equal((await call('POST', PODS, pod('kept'))).status, 201);
  });
  after(async () => {
    ac.abort();
    await server.closed;
  });

  it('creates nothing, answering 201 with the object as it would be (defaults, generated name)', async () => {
    const res = await nothingWritten(() => call('POST', `${PODS}?dryRun=All`, { ...pod(''), metadata: { generateName: 'try-' } }));
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.match(res.body.metadata.name, /^try-[a-z0-9]{5}$/);
    assert.equal(res.body.spec.restartPolicy, 'Always');
    assert.equal((await call('GET', `${PODS}/${res.body.metadata.name}`)).status, 404);
  });

  it('still refuses what the real write would: an invalid object is 422, a taken name 409', async () => {
    const invalid = await nothingWritten(() => call('POST', `${PODS}?dryRun=All`, { ...pod('bad'), spec: { containers: [] } }));
    assert.equal(invalid.status, 422);
    const taken = await nothingWritten(() => call('POST', `${PODS}?dryRun=All`, pod('kept')));
    assert.equal(taken.status, 409);
  });

  it('answers an update and a patch with the changed object, and leaves the stored one as it was', async () => {
    const stored = (await call('GET', `${PODS}/kept`)).body;
    const updated = await nothingWritten(() => call('PUT', `${PODS}/kept?dryRun=All`, { ...stored, metadata: { ...stored.metadata, labels: { tier: 'x' } } }));
    assert.equal(updated.status, 200, JSON.stringify(updated.body));
    assert.deepEqual(updated.body.metadata.labels, { tier: 'x' });
    const patched = await nothingWritten(() =>
      call('PATCH', `${PODS}/kept?dryRun=All`, { metadata: { labels: { tier: 'y' } } }, 'application/merge-patch+json'),
    );
    assert.deepEqual(patched.body.metadata.labels, { tier: 'y' });
    assert.equal((await call('GET', `${PODS}/kept`)).body.metadata.labels, undefined);
  });

  it('deletes nothing, by query or by DeleteOptions body', async () => {
    const byQuery = await nothingWritten(() => call('DELETE', `${PODS}/kept?dryRun=All`));
    assert.equal(byQuery.status, 200);
    assert.equal(byQuery.body.metadata.name, 'kept');
    const byBody = await nothingWritten(() => call('DELETE', `${PODS}/kept`, { kind: 'DeleteOptions', apiVersion: 'v1', dryRun: ['All'] }));
    assert.equal(byBody.status, 200);
    assert.equal((await call('GET', `${PODS}/kept`)).status, 200);
  });

  it('allocates no cluster IP for a Service', async () => {
    const svc = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' }, spec: { selector: { app: 'web' }, ports: [{ port: 80 }] } };
    const res = await nothingWritten(() => call('POST', `${SERVICES}?dryRun=All`, svc));
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal((await call('GET', `${SERVICES}/web`)).status, 404);
  });

  it('refuses a dryRun value other than All with a 400', async () => {
    const res = await nothingWritten(() => call('POST', `${PODS}?dryRun=Some`, pod('x')));
    assert.equal(res.status, 400);
    assert.equal(res.body.message, 'dryRun: Unsupported value: "Some": supported values: "All"');
    assert.equal(parseDryRun([]), false);
    assert.equal(parseDryRun(['All', 'All']), true);
  });
});
