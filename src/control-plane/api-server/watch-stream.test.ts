// A watcher that never reads, over plain HTTP and over HTTPS: the memory held for it stays under the per-watch bound, and the watch is ended (defect 10).
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
    // The response is chunked on a kept-alive connection: its end is the last chunk, not the socket's.
    let tail = '';
    socket.on('data', (d: Buffer) => {
      tail = (tail + d.toString('latin1')).slice(-16);
    });
    const ended = () => tail.endsWith('\r\n0\r\n\r\n');
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
      // The client, once it reads, finds its stream ended (it re-lists and watches again).
      socket.resume();
      await waitFor(ended, { timeoutMs: 10_000, description: 'the stream to end' });
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
