// Unit tests of the cluster CA: creation and reuse, file modes, issued certificates' contents, CSRs.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { connect } from 'node:tls';
import {
  caHash,
  certificateInfo,
  createCsr,
  issueClientCert,
  issueServerCert,
  loadOrCreateCa,
  loadOrIssueCert,
  serverProfile,
  signCsr,
  signedBy,
} from './pki.js';

function tempDir(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'minik8s-pki-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test('the CA is made once, with a 0600 key, and reused after', async (t) => {
  const dir = tempDir(t);
  const ca = await loadOrCreateCa({ dir: join(dir, 'pki') });
  assert.equal(statSync(join(dir, 'pki', 'ca.key')).mode & 0o777, 0o600);
  assert.equal(statSync(join(dir, 'pki', 'ca.crt')).mode & 0o777, 0o644);
  const again = await loadOrCreateCa({ dir: join(dir, 'pki') });
  assert.equal(again.certPem, ca.certPem);
  assert.equal(again.hash, ca.hash);
  const node = new X509Certificate(ca.certPem);
  assert.equal(node.ca, true);
  // The hash is sha256 over the DER, as `openssl x509 -outform der | sha256sum` prints it.
  assert.equal(ca.hash, node.fingerprint256.replaceAll(':', '').toLowerCase());
  assert.equal(caHash(ca.certPem), ca.hash);
});

test('a CA directory with a key but no certificate is refused rather than replaced', async (t) => {
  const dir = tempDir(t);
  await loadOrCreateCa({ dir });
  rmSync(join(dir, 'ca.crt'));
  await assert.rejects(loadOrCreateCa({ dir }), /incomplete cluster CA/);
});

test('server certificates carry DNS and IP SANs and verify against the CA', async (t) => {
  const ca = await loadOrCreateCa({ dir: tempDir(t) });
  const pair = await issueServerCert(ca, {
    commonName: 'kube-apiserver',
    dnsNames: ['localhost', 'kubernetes.default.svc'],
    ipAddresses: ['127.0.0.1', '10.96.0.1'],
  });
  const node = new X509Certificate(pair.certPem);
  assert.ok(node.verify(new X509Certificate(ca.certPem).publicKey));
  assert.equal(node.checkHost('kubernetes.default.svc'), 'kubernetes.default.svc');
  assert.equal(node.checkIP('10.96.0.1'), '10.96.0.1');
  assert.equal(node.checkHost('evil.example'), undefined);
  assert.ok(await signedBy(ca, pair.certPem));
  const other = await loadOrCreateCa({ dir: tempDir(t) });
  assert.equal(await signedBy(other, pair.certPem), false);
});

test('client certificates name the user in CN and the groups in O', async (t) => {
  const ca = await loadOrCreateCa({ dir: tempDir(t) });
  const pair = await issueClientCert(ca, { user: 'admin', groups: ['system:masters', 'devs'] });
  const info = certificateInfo(pair.certPem);
  assert.equal(info.commonName, 'admin');
  assert.deepEqual(info.organizations, ['system:masters', 'devs']);
});

test('loadOrIssueCert reuses a matching certificate and remakes it when the SANs change', async (t) => {
  const dir = tempDir(t);
  const ca = await loadOrCreateCa({ dir });
  const profile = serverProfile({ commonName: 'x', dnsNames: ['a'], ipAddresses: ['127.0.0.1'] });
  const first = await loadOrIssueCert(ca, { dir, name: 'apiserver', ...profile });
  assert.equal(first.issued, true);
  assert.equal(statSync(first.keyPath).mode & 0o777, 0o600);
  const same = await loadOrIssueCert(ca, { dir, name: 'apiserver', ...profile });
  assert.equal(same.issued, false);
  assert.equal(same.certPem, first.certPem);
  const moved = await loadOrIssueCert(ca, { dir, name: 'apiserver', ...profile, ipAddresses: ['10.0.0.2'] });
  assert.equal(moved.issued, true);
  assert.deepEqual(certificateInfo(readFileSync(moved.certPath, 'utf8')).ipAddresses, ['10.0.0.2']);
  // A certificate some other CA issued is replaced too.
  writeFileSync(moved.certPath, (await issueServerCert(await loadOrCreateCa({ dir: tempDir(t) }), profile)).certPem);
  assert.equal((await loadOrIssueCert(ca, { dir, name: 'apiserver', ...profile, ipAddresses: ['10.0.0.2'] })).issued, true);
});

test('signCsr issues what the signer decides, not what the request asks', async (t) => {
  const ca = await loadOrCreateCa({ dir: tempDir(t) });
  const { csrPem } = await createCsr({ commonName: 'n1', dnsNames: ['n2'] });
  const certPem = await signCsr(ca, csrPem, serverProfile({ commonName: 'system:node:n1', dnsNames: ['n1'] }));
  const info = certificateInfo(certPem);
  assert.equal(info.commonName, 'system:node:n1');
  assert.deepEqual(info.dnsNames, ['n1']);
  await assert.rejects(signCsr(ca, csrPem.replace(/A/, 'B'), serverProfile({ commonName: 'x' })));
});

test('Node TLS accepts the issued keys and certificates end to end', async (t) => {
  const ca = await loadOrCreateCa({ dir: tempDir(t) });
  const server = await issueServerCert(ca, { commonName: 's', ipAddresses: ['127.0.0.1'] });
  const client = await issueClientCert(ca, { user: 'alice', groups: ['g'] });
  const srv = createHttpsServer({ cert: server.certPem, key: server.keyPem, ca: ca.certPem, requestCert: true, rejectUnauthorized: true }, (req, res) => {
    const peer = (req.socket as import('node:tls').TLSSocket).getPeerCertificate();
    res.end(String(peer.subject.CN));
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  t.after(() => srv.close());
  const port = (srv.address() as { port: number }).port;
  const sock = connect({ host: '127.0.0.1', port, ca: ca.certPem, cert: client.certPem, key: client.keyPem });
  await new Promise<void>((resolve, reject) => {
    sock.once('secureConnect', resolve);
    sock.once('error', reject);
  });
  assert.equal(sock.authorized, true);
  sock.write('GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n');
  let body = '';
  for await (const chunk of sock) body += chunk;
  assert.match(body, /alice$/);
});
