// The audit log: the event recorded for each kind of request, what it must never hold, and the rotating file's size limit, backups and mode.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryStore } from '../../core/store/memory-store.js';
import { auditRecord, backupName, RotatingFileSink, type AuditSink } from './audit-log.js';
import { ADMIN_USER, TokenAuthenticator } from './auth.js';
import { createApiApp, ensureSystemNamespaces } from './server.js';

const TOKEN = 'audit-test-token-0123456789';
const NODE_TOKEN = 'node-token-abcdef';

interface Event {
  auditID: string;
  stage: string;
  verb: string;
  requestURI: string;
  user: { username: string; groups: string[] };
  sourceIPs: string[];
  userAgent?: string;
  objectRef?: { resource: string; namespace?: string; name?: string; subresource?: string; apiGroup?: string };
  responseStatus: { code: number };
  requestReceivedTimestamp: string;
  stageTimestamp: string;
  annotations: Record<string, string>;
}

function memorySink(): AuditSink & { lines: string[] } {
  const lines: string[] = [];
  return { lines, write: (l) => lines.push(l), close: () => {} };
}

async function auditedApp() {
  const sink = memorySink();
  const authenticator = new TokenAuthenticator();
  authenticator.add(TOKEN, ADMIN_USER);
  authenticator.add(NODE_TOKEN, { name: 'system:node:n1', groups: ['system:nodes', 'system:authenticated'] });
  const api = createApiApp({ store: new MemoryStore(), authenticator, audit: sink });
  await ensureSystemNamespaces(api.service);
  const call = (method: string, path: string, token: string | undefined, body?: unknown) =>
    api.app.request(path, {
      method,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), 'content-type': 'application/json', 'user-agent': 'audit-test/1.0' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const events = () => sink.lines.map((l) => JSON.parse(l) as Event);
  return { call, events, sink };
}

describe('audit events', () => {
  it('records a create with who, what, where and the answer, in audit.k8s.io/v1 shape', async () => {
    const { call, events } = await auditedApp();
    const res = await call('POST', '/api/v1/namespaces/default/secrets', TOKEN, {
      metadata: { name: 's1' },
      stringData: { password: 'hunter2-very-secret' },
    });
    assert.equal(res.status, 201);
    assert.match(res.headers.get('audit-id') ?? '', /^[0-9a-f-]{36}$/);
    const [e] = events();
    assert.ok(e);
    assert.equal(e.auditID, res.headers.get('audit-id'));
    assert.equal(e.verb, 'create');
    assert.equal(e.stage, 'ResponseComplete');
    assert.deepEqual(e.user, { username: ADMIN_USER.name, groups: [...ADMIN_USER.groups] });
    assert.deepEqual(e.objectRef, { resource: 'secrets', namespace: 'default', apiVersion: 'v1' });
    assert.equal(e.responseStatus.code, 201);
    assert.equal(e.userAgent, 'audit-test/1.0');
    assert.ok(Number(e.annotations['minik8s.io/latency-ms']) >= 0);
    assert.ok(Date.parse(e.stageTimestamp) >= Date.parse(e.requestReceivedTimestamp));
  });

  it('never holds the request body, a Secret value or the bearer token', async () => {
    const { call, sink } = await auditedApp();
    await call('POST', '/api/v1/namespaces/default/secrets', TOKEN, { metadata: { name: 's1' }, stringData: { password: 'hunter2-very-secret' } });
    await call('GET', '/api/v1/namespaces/default/secrets/s1', TOKEN);
    await call('GET', '/api/v1/namespaces/default/pods?access_token=leaked-in-query', TOKEN);
    const all = sink.lines.join('\n');
    assert.equal(sink.lines.length, 3);
    for (const secret of ['hunter2', Buffer.from('hunter2-very-secret').toString('base64'), TOKEN, 'leaked-in-query']) {
      assert.ok(!all.includes(secret), `audit log holds ${secret}`);
    }
  });

  it("records a node's forbidden call with 403 and the node's identity", async () => {
    const { call, events } = await auditedApp();
    const res = await call('GET', '/api/v1/namespaces/default/secrets/s1', NODE_TOKEN);
    assert.equal(res.status, 403);
    const [e] = events();
    assert.equal(e?.verb, 'get');
    assert.equal(e?.user.username, 'system:node:n1');
    assert.deepEqual(e?.objectRef, { resource: 'secrets', namespace: 'default', name: 's1', apiVersion: 'v1' });
    assert.equal(e?.responseStatus.code, 403);
  });

  it('records a refused credential as system:anonymous with 401', async () => {
    const { call, events } = await auditedApp();
    assert.equal((await call('GET', '/api/v1/pods', 'wrong-token')).status, 401);
    const [e] = events();
    assert.equal(e?.user.username, 'system:anonymous');
    assert.equal(e?.verb, 'list');
    assert.equal(e?.responseStatus.code, 401);
  });

  it('records a watch when its stream starts, and leaves health probes out', async () => {
    const { call, events } = await auditedApp();
    assert.equal((await call('GET', '/healthz', undefined)).status, 200);
    const res = await call('GET', '/api/v1/namespaces/default/pods?watch=true', TOKEN);
    assert.equal(res.status, 200);
    // Recorded already, while the stream is still open.
    const [e] = events();
    assert.equal(events().length, 1);
    assert.equal(e?.verb, 'watch');
    assert.equal(e?.stage, 'ResponseStarted');
    await res.body?.cancel();
  });

  it('gives subresources and cluster-scoped objects their place, and non-resource paths the lower-case method', () => {
    const base = { auditID: 'x', code: 200, received: new Date(0), completed: new Date(5) };
    const status = auditRecord({ ...base, method: 'PATCH', uri: '/api/v1/nodes/n1/status', path: '/api/v1/nodes/n1/status' });
    assert.equal(status.verb, 'patch');
    assert.deepEqual(status.objectRef, { resource: 'nodes', name: 'n1', apiVersion: 'v1', subresource: 'status' });
    assert.equal((status.annotations as Record<string, string>)['minik8s.io/latency-ms'], '5');
    const apps = auditRecord({ ...base, method: 'DELETE', uri: '/apis/apps/v1/namespaces/a/deployments', path: '/apis/apps/v1/namespaces/a/deployments' });
    assert.equal(apps.verb, 'deletecollection');
    assert.deepEqual(apps.objectRef, { resource: 'deployments', namespace: 'a', apiGroup: 'apps', apiVersion: 'v1' });
    const version = auditRecord({ ...base, method: 'GET', uri: '/apis', path: '/apis' });
    assert.equal(version.verb, 'get');
    assert.equal(version.objectRef, undefined);
  });
});

describe('RotatingFileSink', () => {
  it('creates the log 0600, and narrows an existing one to 0600', () => {
    const dir = mkdtempSync(join(tmpdir(), 'minik8s-audit-'));
    try {
      const path = join(dir, 'audit.log');
      new RotatingFileSink({ path, maxBytes: 0, maxBackups: 0 }).close();
      assert.equal(statSync(path).mode & 0o777, 0o600);
      const other = join(dir, 'other.log');
      writeFileSync(other, '', { mode: 0o644 });
      new RotatingFileSink({ path: other, maxBytes: 0, maxBackups: 0 }).close();
      assert.equal(statSync(other).mode & 0o777, 0o600);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('rotates before a line would pass the size, keeps maxBackups newest, and loses no line', () => {
    const dir = mkdtempSync(join(tmpdir(), 'minik8s-audit-'));
    try {
      const path = join(dir, 'audit.log');
      let t = Date.parse('2026-01-02T03:04:05.000Z');
      const tick = () => {
        t += 1000;
        return new Date(t);
      };
      const sink = new RotatingFileSink({ path, maxBytes: 100, maxBackups: 2, now: tick });
      const line = (i: number) => `{"n":${i},"pad":"${'x'.repeat(30)}"}`; // 45 bytes with its newline
      for (let i = 0; i < 9; i++) sink.write(line(i));
      sink.close();
      const backups = sink.backups();
      assert.equal(backups.length, 2, 'older backups are removed');
      // Two lines per file: 9 lines -> 4 rotations; the newest two backups hold lines 4-7.
      assert.deepEqual(
        backups.map((b) => readFileSync(b, 'utf8')),
        [`${line(4)}\n${line(5)}\n`, `${line(6)}\n${line(7)}\n`],
      );
      assert.equal(readFileSync(path, 'utf8'), `${line(8)}\n`);
      for (const b of backups) assert.equal(statSync(b).mode & 0o777, 0o600);
      assert.match(backups[0]!, /audit-2026-01-02T03-04-\d\d\.000\.log$/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('names backups as kube-apiserver does', () => {
    assert.equal(backupName('/var/log/audit.log', new Date('2026-01-02T03:04:05.678Z')), '/var/log/audit-2026-01-02T03-04-05.678.log');
  });
});
