// A real master's store and audit trail: Secrets encrypted in etcd yet served whole, and an audit log recording admins' writes and nodes' refusals.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Etcd3 } from 'etcd3';
import { managedEtcdClientOptions } from '../src/control-plane/etcd/etcd-pki.js';
import { startManagedEtcd, type ManagedEtcd } from '../src/control-plane/etcd/managed-etcd.js';
import { etcdPorts } from '../scripts/sim/free-resources.js';
import { parseEncryptionConfig, renderEncryptionConfig } from '../src/control-plane/master/encryption-config.js';
import { waitFor } from '../src/core/wait-for.js';
import { startMaster, type MasterProcess } from './helpers/master.js';

interface AuditEvent {
  verb: string;
  user: { username: string };
  objectRef?: { resource: string; namespace?: string; name?: string };
  responseStatus: { code: number };
}

describe('secure store and audit log', () => {
  let master: MasterProcess;
  let logDir: string;
  let auditPath: string;

  before(async () => {
    logDir = mkdtempSync(join(tmpdir(), 'minik8s-audit-'));
    auditPath = join(logDir, 'audit.log');
    master = await startMaster({ registry: false, extraArgs: ['--audit-log-path', auditPath] });
  });

  after(async () => {
    await master?.stop();
    rmSync(logDir, { recursive: true, force: true });
  });

  const api = (method: string, path: string, token: string, body?: unknown) =>
    fetch(`${master.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  const pki = (f: string) => readFileSync(join(master.dataDir, 'pki', f));
  /** An etcd client with the master's own client certificate: what reads the stored bytes here. */
  const masterEtcd = () => new Etcd3({ ...managedEtcdClientOptions(master.dataDir, master.etcdPort), dialTimeout: 3000 });

  it('keeps Secrets in etcd as k8s:enc:aesgcm:v1:key1: ciphertext, and the API still returns them', async () => {
    const password = 'correct-horse-battery-staple';
    const res = await api('POST', '/api/v1/namespaces/default/secrets', master.token, { metadata: { name: 'db' }, stringData: { password } });
    assert.equal(res.status, 201, await res.clone().text());

    const etcd = masterEtcd();
    try {
      const raw = await etcd.get('/registry/core/secrets/default/db').buffer();
      assert.ok(raw, 'the Secret is in etcd');
      assert.ok(raw.toString('latin1').startsWith('k8s:enc:aesgcm:v1:key1:'), raw.subarray(0, 40).toString('latin1'));
      for (const plain of [password, Buffer.from(password).toString('base64'), '"db"', 'Secret']) {
        assert.ok(!raw.includes(Buffer.from(plain)), `etcd holds ${plain} in the clear`);
      }
      // Other kinds stay plain JSON.
      const ns = await etcd.get('/registry/core/namespaces/default').string();
      assert.match(ns ?? '', /^\{/);
    } finally {
      etcd.close();
    }

    const got = (await (await api('GET', '/api/v1/namespaces/default/secrets/db', master.token)).json()) as { data: Record<string, string> };
    assert.equal(Buffer.from(got.data.password!, 'base64').toString(), password);
    const list = (await (await api('GET', '/api/v1/namespaces/default/secrets', master.token)).json()) as { items: { data: Record<string, string> }[] };
    assert.equal(Buffer.from(list.items[0]!.data.password!, 'base64').toString(), password);
    assert.equal(statSync(join(master.dataDir, 'pki', 'encryption-config.json')).mode & 0o777, 0o600);
  });

  it("refuses etcd clients without etcd's client certificate, for reads and writes, and the master keeps working", async () => {
    const attempts: [string, Etcd3][] = [
      // What any local user could do before: plain HTTP on loopback.
      ['plain', new Etcd3({ hosts: `http://127.0.0.1:${master.etcdPort}`, dialTimeout: 2000 })],
      // TLS, trusting etcd's CA, but with no certificate to show.
      [
        'no cert',
        new Etcd3({
          hosts: `https://127.0.0.1:${master.etcdPort}`,
          credentials: { rootCertificate: pki('etcd/ca.crt') },
          grpcOptions: { 'grpc.ssl_target_name_override': 'localhost' },
          dialTimeout: 2000,
        }),
      ],
    ];
    for (const [what, etcd] of attempts) {
      try {
        await assert.rejects(etcd.get('/registry/core/secrets/default/db').buffer(), `${what}: read`);
        await assert.rejects(etcd.put('/registry/minik8s.io/jointokens/planted').value('{}').exec(), `${what}: write`);
      } finally {
        etcd.close();
      }
    }
    const etcd = masterEtcd();
    try {
      assert.equal(await etcd.get('/registry/minik8s.io/jointokens/planted').string(), null, 'nothing was planted');
    } finally {
      etcd.close();
    }
    const res = await api('POST', '/api/v1/namespaces/default/secrets', master.token, { metadata: { name: 'after' }, stringData: { a: 'b' } });
    assert.equal(res.status, 201);
    assert.equal((await api('GET', '/api/v1/namespaces/default/secrets/after', master.token)).status, 200);
  });

  it('rotates keys: a new first key and a restart rewrite every Secret with it; the old key can then go', async () => {
    const configPath = join(master.dataDir, 'pki', 'encryption-config.json');
    const rawSecret = async () => {
      const etcd = masterEtcd();
      try {
        return (await etcd.get('/registry/core/secrets/default/db').buffer())?.toString('latin1') ?? '';
      } finally {
        etcd.close();
      }
    };
    const password = async () => {
      const res = await api('GET', '/api/v1/namespaces/default/secrets/db', master.token);
      assert.equal(res.status, 200);
      return Buffer.from(((await res.json()) as { data: { password: string } }).data.password, 'base64').toString();
    };
    assert.ok((await rawSecret()).startsWith('k8s:enc:aesgcm:v1:key1:'));
    const [key1] = parseEncryptionConfig(readFileSync(configPath, 'utf8'));
    const key2 = { name: 'key2', secret: randomBytes(32) };
    // 1. add the new key first, 2. restart: the master rewrites the Secrets with it.
    writeFileSync(configPath, renderEncryptionConfig([key2, key1!]));
    await master.kill();
    await master.restart();
    assert.ok((await rawSecret()).startsWith('k8s:enc:aesgcm:v1:key2:'));
    assert.match(master.output(), /secrets encryption: rewrote \d+ Secret\(s\) with key "key2"/);
    assert.equal(await password(), 'correct-horse-battery-staple');
    // 3. remove the old key and restart: everything still reads.
    writeFileSync(configPath, renderEncryptionConfig([key2]));
    await master.kill();
    await master.restart();
    assert.equal(await password(), 'correct-horse-battery-staple');
  });

  it("records an admin's create with 201 and a node's forbidden read with 403 (0600, JSON lines)", async () => {
    const created = await api('POST', '/api/v1/namespaces', master.token, { metadata: { name: 'audited' } });
    assert.equal(created.status, 201);
    const joined = await api('POST', '/apis/minik8s.io/v1/join', master.joinSecret, {
      apiVersion: 'minik8s.io/v1',
      kind: 'JoinRequest',
      nodeName: 'audit-n1',
      nodePassword: 'audit-node-password-0123456789',
    });
    assert.equal(joined.status, 200, await joined.clone().text());
    const nodeToken = ((await joined.json()) as { token: string }).token;
    const refused = await api('GET', '/api/v1/namespaces/default/secrets/db', nodeToken);
    assert.equal(refused.status, 403);

    const events = () =>
      readFileSync(auditPath, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as AuditEvent);
    await waitFor(() => events().some((e) => e.user.username === 'system:node:audit-n1'), {
      timeoutMs: 5000,
      description: "the node's request in the audit log",
    });
    const create = events().find((e) => e.verb === 'create' && e.objectRef?.resource === 'namespaces');
    assert.equal(create?.user.username, 'admin');
    assert.equal(create?.responseStatus.code, 201);
    const forbidden = events().find((e) => e.user.username === 'system:node:audit-n1' && e.objectRef?.resource === 'secrets');
    assert.equal(forbidden?.verb, 'get');
    assert.equal(forbidden?.objectRef?.name, 'db');
    assert.equal(forbidden?.responseStatus.code, 403);
    assert.equal(statSync(auditPath).mode & 0o777, 0o600);
    const text = readFileSync(auditPath, 'utf8');
    for (const secret of [master.token, nodeToken, master.joinSecret, 'correct-horse']) assert.ok(!text.includes(secret), 'the audit log holds a secret');
  });
});

describe('external etcd over TLS', () => {
  it('reaches an --etcd-endpoints etcd that requires a client certificate with --etcd-cafile/--etcd-certfile/--etcd-keyfile', async () => {
    // An etcd of another data directory stands in for an external one: TLS with client-cert auth, its own CA.
    const etcdDir = mkdtempSync(join(tmpdir(), 'minik8s-ext-etcd-'));
    const stop = new AbortController();
    let master: MasterProcess | undefined;
    let etcd: ManagedEtcd | undefined;
    try {
      const port = await etcdPorts();
      etcd = await startManagedEtcd({ dataDir: etcdDir, clientPort: port, signal: stop.signal, log: () => {} });
      const pki = join(etcdDir, 'pki');
      master = await startMaster({
        registry: false,
        extraArgs: [
          '--etcd-endpoints',
          etcd.endpoints[0]!,
          '--etcd-cafile',
          join(pki, 'etcd', 'ca.crt'),
          '--etcd-certfile',
          join(pki, 'apiserver-etcd-client.crt'),
          '--etcd-keyfile',
          join(pki, 'apiserver-etcd-client.key'),
        ],
      });
      const res = await fetch(`${master.url}/api/v1/namespaces/default/secrets`, {
        method: 'POST',
        headers: { authorization: `Bearer ${master.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ metadata: { name: 'ext' }, stringData: { a: 'b' } }),
      });
      assert.equal(res.status, 201);
      const client = new Etcd3({ ...managedEtcdClientOptions(etcdDir, port), dialTimeout: 3000 });
      try {
        assert.match((await client.get('/registry/core/secrets/default/ext').string()) ?? '', /^k8s:enc:aesgcm:v1:key1:/);
      } finally {
        client.close();
      }
    } finally {
      await master?.stop();
      stop.abort();
      await etcd?.stopped;
      rmSync(etcdDir, { recursive: true, force: true });
    }
  });
});
