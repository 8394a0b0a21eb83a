// A TLS listener with our limits: HTTPS is served as before, plain HTTP gets a 400 that says to use HTTPS, silence is closed.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import https from 'node:https';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { issueServerCert, loadOrCreateCa } from '../pki/pki.js';
import { waitFor } from '../wait-for.js';
import { applyListenerLimits, listenerServerOptions, type ListenerLimits } from './listener-limits.js';

const LIMITS: ListenerLimits = { maxConnections: 20, headersTimeoutMs: 500, requestTimeoutMs: 5000, keepAliveTimeoutMs: 5000 };

describe('a TLS listener', () => {
  let dir: string;
  let ca: string;
  let server: https.Server;
  let port: number;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'minik8s-plain-http-'));
    const authority = await loadOrCreateCa({ dir });
    const cert = await issueServerCert(authority, { commonName: 'test', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] });
    ca = authority.certPem;
    server = https.createServer({ ...listenerServerOptions(LIMITS), cert: cert.certPem, key: cert.keyPem }, (_req, res) => res.end('ok'));
    applyListenerLimits(server, LIMITS);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves HTTPS', async () => {
    const body = await new Promise<string>((resolve, reject) => {
      https
        .get({ host: '127.0.0.1', port, path: '/', ca, agent: false }, (res) => {
          let text = '';
          res.on('data', (c) => {
            text += c;
          });
          res.on('end', () => resolve(`${res.statusCode} ${text}`));
        })
        .on('error', reject);
    });
    assert.equal(body, '200 ok');
  });

  it('answers a plain HTTP request with 400 and the reason, as kube-apiserver does', async () => {
    const res = await fetch(`http://127.0.0.1:${port}/api`);
    assert.equal(res.status, 400);
    assert.equal(await res.text(), 'Client sent an HTTP request to an HTTPS server.\n');
  });

  it('frees the place of a plain-HTTP client that never closes its side, as a flood of half requests would hold it', async () => {
    // allowHalfOpen: the client never sends its FIN, as a flooder that does not read would not.
    const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    let answer = '';
    let ended = false;
    socket.on('data', (chunk) => {
      answer += chunk;
    });
    socket.on('end', () => {
      ended = true;
    });
    socket.on('error', () => {});
    try {
      socket.write('GET /api HTTP/1.1\r\nHost: x\r\n');
      await waitFor(() => ended, { timeoutMs: 5000, description: 'the server to end the connection' });
      assert.match(answer, /^HTTP\/1\.0 400 Bad Request/);
      await waitFor(async () => (await new Promise<number>((resolve) => server.getConnections((_e, n) => resolve(n)))) === 0, {
        timeoutMs: 5000,
        description: 'the server to hold no connection',
      });
    } finally {
      socket.destroy();
    }
  });

  it('closes a connection that sends nothing soon after the header timeout', async () => {
    const started = Date.now();
    let closedAt: number | undefined;
    const socket = connect(port, '127.0.0.1');
    socket.on('close', () => {
      closedAt = Date.now();
    });
    socket.on('error', () => {});
    await waitFor(() => closedAt !== undefined, { timeoutMs: 5000, description: 'the silent connection to be closed' });
    assert.ok(closedAt! - started < LIMITS.headersTimeoutMs + 2000, `closed after ${closedAt! - started} ms`);
  });
});
