// Watch streams: a watcher that never reads, over plain HTTP and over HTTPS, stays under the per-watch bound and is ended (defect 10); watchers of one event share its bytes (defect 11).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as connectTls } from 'node:tls';
import type { Duplex } from 'node:stream';
import { issueServerCert, loadOrCreateCa } from '../../core/pki/pki.js';
import { CachedStore } from '../../core/store/cached-store.js';
import { MemoryStore } from '../../core/store/memory-store.js';
import { waitFor } from '../../core/wait-for.js';
import { ADMIN_USER, TokenAuthenticator } from './auth.js';
import { startApiServer } from './server.js';
import { watchStats } from './watch-stream.js';

describe('a watch whose client does not read', () => {
  let dir: string;
  let tls: { cert: string; key: string; ca: string };
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'minik8s-watch-stall-'));
    const ca = await loadOrCreateCa({ dir });
    const serving = await issueServerCert(ca, { commonName: 'kube-apiserver', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] });
    tls = { cert: serving.certPem, key: serving.keyPem, ca: ca.certPem };
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  async function nonReadingWatcher(overTls: boolean): Promise<void> {
    const authenticator = new TokenAuthenticator();
    authenticator.add('admin-token', ADMIN_USER);
    const signal = new AbortController();
    const bound = 64 * 1024;
    const api = await startApiServer({
      store: new MemoryStore(),
      authenticator,
      address: '127.0.0.1',
      port: 0,
      signal: signal.signal,
      watchBufferBytes: bound,
      slowWatcherTimeoutMs: 500,
      tls: overTls ? tls : undefined,
    });
    const closedBefore = watchStats.slowWatchersClosed;
    watchStats.maxBufferedBytes = 0;
    // A raw client that asks for a watch and then never reads a byte: the socket fills, then our queue.
    let socket: Duplex;
    if (overTls) {
      const s = connectTls({ port: api.port, host: '127.0.0.1', ca: tls.ca, servername: 'localhost' });
      await new Promise((resolve, reject) => s.once('secureConnect', resolve).once('error', reject));
      socket = s;
    } else {
      const s = connect(api.port, '127.0.0.1');
      await new Promise((resolve, reject) => s.once('connect', resolve).once('error', reject));
      socket = s;
    }
    socket.pause();
    socket.write('GET /api/v1/namespaces/default/secrets?watch=true HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer admin-token\r\n\r\n');
    // Its data is read only at the end, once the watch is over; a response that ended gracefully would leave the kept-alive connection open.
    socket.on('data', () => {});
    let closed = false;
    socket.on('close', () => {
      closed = true;
    });
    socket.on('error', () => {});
    // fetch has no CA option: the calls go through node:http(s), with the test CA over HTTPS.
    const request = (path: string, init: { method?: string; body?: string } = {}) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = (overTls ? httpsRequest : httpRequest)(
          `${api.url}${path}`,
          {
            method: init.method ?? 'GET',
            headers: { authorization: 'Bearer admin-token', 'content-type': 'application/json' },
            ...(overTls ? { ca: tls.ca } : {}),
          },
          (res) => {
            let body = '';
            res.setEncoding('utf8');
            res.on('data', (d: string) => {
              body += d;
            });
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
            res.on('error', reject);
          },
        );
        req.on('error', reject);
        req.end(init.body);
      });
    try {
      // 4 KiB objects, updated over and over: far more than the bound and the socket buffers hold.
      const data = { blob: 'x'.repeat(4096) };
      const post = (i: number) =>
        request('/api/v1/namespaces/default/secrets', {
          method: 'POST',
          body: JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: `c${i}` }, data }),
        });
      let i = 0;
      await waitFor(
        async () => {
          for (let n = 0; n < 50; n++) assert.equal((await post(i++)).status, 201);
          return watchStats.slowWatchersClosed > closedBefore;
        },
        { timeoutMs: 30_000, description: 'the non-reading watcher to be closed' },
      );
      // The events queued for it were at most the bound and one event beyond it.
      assert.ok(watchStats.maxBufferedBytes <= bound + 8192, `held ${watchStats.maxBufferedBytes} bytes`);
      assert.ok(i * 4096 > 4 * bound, `only ${i} writes`);
      // What it held is given back.
      await waitFor(() => watchStats.bufferedBytes === 0, { timeoutMs: 5000, description: 'the buffered bytes to be freed' });
      // The server let go of the connection (and what it held for it): the client, once it reads
      // what reached it, finds the connection closed (it re-lists and watches again).
      socket.resume();
      await waitFor(() => closed, { timeoutMs: 10_000, description: 'the connection to be closed' });
      const metrics = await request('/metrics');
      assert.match(metrics.body, /^apiserver_terminated_watchers_total [1-9]/m);
    } finally {
      socket.destroy();
      signal.abort();
      await api.closed;
    }
  }

  it('over plain HTTP: holds at most the bound (plus one event) and is closed after the slow-watcher timeout', async () => {
    await nonReadingWatcher(false);
  });

  it('over HTTPS: holds at most the bound (plus one event) and is closed after the slow-watcher timeout', async () => {
    await nonReadingWatcher(true);
  });
});

describe('watchers of one event', () => {
  it('share one serialisation of it, whatever their number and selectors', async () => {
    const authenticator = new TokenAuthenticator();
    authenticator.add('admin-token', ADMIN_USER);
    const signal = new AbortController();
    const api = await startApiServer({ store: await CachedStore.open(new MemoryStore()), authenticator, address: '127.0.0.1', port: 0, signal: signal.signal });
    const watchers = 20;
    const streams: { lines: string[]; done: Promise<void> }[] = [];
    try {
      // Half watch every Secret, half only those labelled app=a: all of them see the one create as ADDED.
      for (let w = 0; w < watchers; w++) {
        const query = w % 2 === 0 ? 'watch=true' : 'watch=true&labelSelector=app%3Da';
        const res = await fetch(`${api.url}/api/v1/namespaces/default/secrets?${query}`, {
          headers: { authorization: 'Bearer admin-token' },
          signal: signal.signal,
        });
        assert.equal(res.status, 200);
        streams.push(collect(res));
      }
      const sentBefore = watchStats.eventsSent;
      const encodedBefore = watchStats.eventsEncoded;
      const created = await fetch(`${api.url}/api/v1/namespaces/default/secrets`, {
        method: 'POST',
        headers: { authorization: 'Bearer admin-token', 'content-type': 'application/json' },
        body: JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's1', labels: { app: 'a' } }, data: { k: 'dg==' } }),
      });
      assert.equal(created.status, 201);
      const object = (await created.json()) as { metadata: { resourceVersion: string } };
      await waitFor(() => streams.every((s) => s.lines.length === 1), { timeoutMs: 10_000, description: 'every watcher to get the event' });
      assert.equal(watchStats.eventsSent - sentBefore, watchers);
      assert.equal(watchStats.eventsEncoded - encodedBefore, 1);
      // The shared line is the event as each would have had it: the object with its resourceVersion.
      for (const s of streams) {
        const event = JSON.parse(s.lines[0]!) as { type: string; object: { metadata: { name: string; resourceVersion: string; labels: object } } };
        assert.equal(event.type, 'ADDED');
        assert.equal(event.object.metadata.name, 's1');
        assert.equal(event.object.metadata.resourceVersion, object.metadata.resourceVersion);
        assert.deepEqual(event.object.metadata.labels, { app: 'a' });
      }
      // A relabel the selector no longer matches: DELETED for the selecting half, MODIFIED for the rest; one encoding of each.
      const encodedBeforePatch = watchStats.eventsEncoded;
      const patched = await fetch(`${api.url}/api/v1/namespaces/default/secrets/s1`, {
        method: 'PATCH',
        headers: { authorization: 'Bearer admin-token', 'content-type': 'application/merge-patch+json' },
        body: JSON.stringify({ metadata: { labels: { app: 'b' } } }),
      });
      assert.equal(patched.status, 200);
      await waitFor(() => streams.every((s) => s.lines.length === 2), { timeoutMs: 10_000, description: 'every watcher to get the patch' });
      assert.equal(watchStats.eventsEncoded - encodedBeforePatch, 2);
      const types = streams.map((s) => (JSON.parse(s.lines[1]!) as { type: string }).type);
      assert.deepEqual(
        types,
        Array.from({ length: watchers }, (_, w) => (w % 2 === 0 ? 'MODIFIED' : 'DELETED')),
      );
    } finally {
      signal.abort();
      await Promise.all(streams.map((s) => s.done));
      await api.closed;
    }
  });
});

/** Reads a watch's lines (BOOKMARKs left out) until the signal ends it. */
function collect(res: Response): { lines: string[]; done: Promise<void> } {
  const lines: string[] = [];
  const done = (async () => {
    const decoder = new TextDecoder();
    let text = '';
    try {
      for await (const chunk of res.body!) {
        text += decoder.decode(chunk as Uint8Array, { stream: true });
        const parts = text.split('\n');
        text = parts.pop()!;
        lines.push(...parts.filter((l) => !l.includes('"BOOKMARK"')));
      }
    } catch {
      /* aborted at the end */
    }
  })();
  return { lines, done };
}

describe("watches' initial lists", () => {
  it('encode each object once for all watchers, objects the cache loaded and objects written since alike', async () => {
    const inner = new MemoryStore();
    const secret = (name: string, app: string) => ({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, namespace: 'default', labels: { app } },
      data: { k: 'dg==' },
    });
    // Two objects there before the cache loads (its first list), two written through the API after.
    await inner.create('/registry/core/secrets/default/loaded-a', secret('loaded-a', 'a'));
    await inner.create('/registry/core/secrets/default/loaded-b', secret('loaded-b', 'b'));
    const authenticator = new TokenAuthenticator();
    authenticator.add('admin-token', ADMIN_USER);
    const signal = new AbortController();
    const api = await startApiServer({ store: await CachedStore.open(inner), authenticator, address: '127.0.0.1', port: 0, signal: signal.signal });
    const streams: { lines: string[]; done: Promise<void> }[] = [];
    try {
      for (const [name, app] of [
        ['written-a', 'a'],
        ['written-b', 'b'],
      ]) {
        const created = await fetch(`${api.url}/api/v1/namespaces/default/secrets`, {
          method: 'POST',
          headers: { authorization: 'Bearer admin-token', 'content-type': 'application/json' },
          body: JSON.stringify(secret(name!, app!)),
        });
        assert.equal(created.status, 201);
      }
      const encodedBefore = watchStats.eventsEncoded;
      const sentBefore = watchStats.eventsSent;
      // Ten watches from "now": half see every Secret, half only app=a.
      const watchers = 10;
      for (let w = 0; w < watchers; w++) {
        const query = w % 2 === 0 ? 'watch=true' : 'watch=true&labelSelector=app%3Da';
        const res = await fetch(`${api.url}/api/v1/namespaces/default/secrets?${query}`, {
          headers: { authorization: 'Bearer admin-token' },
          signal: signal.signal,
        });
        assert.equal(res.status, 200);
        streams.push(collect(res));
      }
      await waitFor(() => streams.every((s, w) => s.lines.length === (w % 2 === 0 ? 4 : 2)), {
        timeoutMs: 10_000,
        description: 'every watcher to get its initial list',
      });
      assert.equal(watchStats.eventsSent - sentBefore, (watchers / 2) * 4 + (watchers / 2) * 2);
      // Four objects, each encoded once however many watchers were sent it.
      assert.equal(watchStats.eventsEncoded - encodedBefore, 4);
      for (const [w, s] of streams.entries()) {
        const events = s.lines.map((l) => JSON.parse(l) as { type: string; object: { metadata: { name: string; resourceVersion?: string } } });
        assert.ok(events.every((e) => e.type === 'ADDED' && e.object.metadata.resourceVersion));
        const names = events.map((e) => e.object.metadata.name).sort();
        assert.deepEqual(names, w % 2 === 0 ? ['loaded-a', 'loaded-b', 'written-a', 'written-b'] : ['loaded-a', 'written-a']);
      }
    } finally {
      signal.abort();
      await Promise.all(streams.map((s) => s.done));
      await api.closed;
    }
  });
});
