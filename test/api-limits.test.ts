// The API server over a real etcd: oversized objects refused with 413 without taking the API down, a stopped etcd answered with 503, and the CLI refusing `..` as a name.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ADMIN_USER, TokenAuthenticator } from '../src/control-plane/api-server/auth.js';
import { startApiServer, type RunningApiServer } from '../src/control-plane/api-server/server.js';
import { openStore } from '../src/control-plane/master/open-store.js';
import type { Status } from '../src/core/errors.js';
import type { Store } from '../src/core/store/store.js';
import { startEtcd, type TestEtcd } from './helpers/etcd.js';
import { BINARY } from './helpers/master.js';

const ADMIN = 'limits-admin';
const NODE = 'limits-node';

interface Answer {
  status: number;
  headers: Headers;
  body: Status & { metadata?: { name?: string; deletionTimestamp?: string } };
  ms: number;
}

describe('API limits over a real etcd', () => {
  let etcd: TestEtcd;
  let store: Store;
  let server: RunningApiServer;
  const ac = new AbortController();
  const home = mkdtempSync(join(tmpdir(), 'minik8s-limits-home-'));

  async function call(method: string, path: string, body?: unknown, token = ADMIN): Promise<Answer> {
    const started = Date.now();
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined, ms: Date.now() - started };
  }

  const pod = (name: string, command: string) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: { containers: [{ name: 'c', image: 'busybox', command: ['sh', '-c', command] }] },
  });

  before(async () => {
    etcd = await startEtcd();
    // As the master opens it: the etcd store behind the watch cache.
    store = await openStore({ endpoints: [etcd.endpoint] });
    const authenticator = new TokenAuthenticator();
    authenticator.add(ADMIN, ADMIN_USER);
    authenticator.add(NODE, { name: 'system:node:n1', groups: ['system:nodes'] });
    server = await startApiServer({ store, authenticator, address: '127.0.0.1', port: 0, signal: ac.signal });
    assert.equal((await call('POST', '/api/v1/namespaces', { metadata: { name: 'victim' } })).status, 201);
  });

  after(async () => {
    ac.abort();
    await server?.closed;
    await store?.close();
    await etcd?.stop();
    rmSync(home, { recursive: true, force: true });
  });

  it('refuses a pod with a 2 MiB command with 413, and the very next requests are served at once', async () => {
    // Three in a row: each used to count as an etcd failure, and three open the client's circuit breaker.
    for (let i = 0; i < 3; i++) {
      const res = await call('POST', '/api/v1/namespaces/victim/pods', pod(`big-${i}`, 'x'.repeat(2 * 1024 * 1024)));
      assert.equal(res.status, 413);
      assert.equal(res.body.reason, 'RequestEntityTooLarge');
      assert.match(res.body.message, /^Request entity too large: /);
    }
    const get = await call('GET', '/api/v1/namespaces/victim');
    assert.equal(get.status, 200);
    assert.ok(get.ms < 1000, `the next GET took ${get.ms} ms`);
    const create = await call('POST', '/api/v1/namespaces/victim/pods', pod('small', 'true'));
    assert.equal(create.status, 201);
    assert.ok(create.ms < 1000, `the next create took ${create.ms} ms`);
  });

  it('refuses objects of 1.5 to 2 MiB with 413, not 500 "request is too large"', async () => {
    for (const size of [1.5 * 1024 * 1024, 1.75 * 1024 * 1024, 2 * 1024 * 1024 - 4096]) {
      const res = await call('POST', '/api/v1/namespaces/victim/pods', pod(`mid-${size}`, 'y'.repeat(size)));
      assert.equal(res.status, 413, `${size} bytes`);
      assert.equal(res.body.reason, 'RequestEntityTooLarge');
    }
  });

  it("refuses a node's Event with a 2 MiB message and keeps serving", async () => {
    const event = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'flood' },
      involvedObject: { kind: 'Pod', namespace: 'victim', name: 'small' },
      reason: 'Flood',
      message: 'm'.repeat(2 * 1024 * 1024),
    };
    const res = await call('POST', '/api/v1/namespaces/victim/events', event, NODE);
    assert.equal(res.status, 413);
    assert.equal(res.body.reason, 'RequestEntityTooLarge');
    const next = await call('GET', '/api/v1/namespaces/victim/pods/small', undefined, NODE);
    assert.equal(next.status, 200);
    assert.ok(next.ms < 1000, `the next GET took ${next.ms} ms`);
  });

  it('the CLI refuses `delete pod ..` and the namespace is left alone', async () => {
    const env = { ...process.env, HOME: home, MINIK8S_SERVER: server.url, MINIK8S_TOKEN: ADMIN };
    const cli = (name: string) =>
      promisify(execFile)(process.execPath, [BINARY, 'delete', 'pod', name, '-n', 'victim'], { env }).then(
        (r) => ({ code: 0, ...r }),
        (err: { code: number; stdout: string; stderr: string }) => err,
      );
    for (const name of ['..', '.']) {
      const run = await cli(name);
      assert.notEqual(run.code, 0, name);
      assert.equal(run.stderr, `error: invalid resource name "${name}": [may not be '${name}']\n`);
    }
    // Typed encoded, it is a literal name with a '%', which the server refuses as a name.
    const encoded = await cli('%2e%2e');
    assert.notEqual(encoded.code, 0);
    assert.equal(encoded.stderr, `Error from server (BadRequest): invalid resource name "%2e%2e": [may not contain '%']\n`);
    const ns = await call('GET', '/api/v1/namespaces/victim');
    assert.equal(ns.status, 200);
    assert.equal(ns.body.metadata?.deletionTimestamp, undefined, 'the namespace is not being deleted');
  });

  // Last: it stops etcd.
  it('answers 503 ServiceUnavailable with Retry-After while etcd is down, never 500', async () => {
    await etcd.stop();
    for (const [method, path, body] of [
      ['GET', '/api/v1/namespaces/victim/pods/small'],
      ['POST', '/api/v1/namespaces/victim/pods', pod('after', 'true')],
      ['DELETE', '/api/v1/namespaces/victim/pods/small'],
    ] as const) {
      const res = await call(method, path, body);
      assert.equal(res.status, 503, `${method} ${path}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.reason, 'ServiceUnavailable');
      assert.ok(Number(res.headers.get('retry-after')) >= 1, 'Retry-After');
    }
  });
});
