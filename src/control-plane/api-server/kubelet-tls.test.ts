// Defect 1: the master calls kubelets with its own client certificate (never the admin token) and only when the kubelet's certificate names that node.
import assert from 'node:assert/strict';
import { createServer as createHttpsServer } from 'node:https';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { TLSSocket } from 'node:tls';
import { type ClusterCa, issueClientCert, issueServerCert, type KeyPairPem, loadOrCreateCa } from '../../core/pki/pki.js';
import { startKubeletServer } from '../../node/kubelet/kubelet-server.js';
import { FakeProvider } from '../../runtime/fake-provider.js';
import { callKubelet, type KubeletClientTls } from './node-proxy.js';

describe('calling kubelets over TLS', () => {
  let dir: string;
  let ca: ClusterCa;
  let client: KubeletClientTls;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'minik8s-kubelet-tls-'));
    ca = await loadOrCreateCa({ dir: join(dir, 'ca') });
    const pair = await issueClientCert(ca, { user: 'kube-apiserver-kubelet-client', groups: ['system:masters'] });
    client = { ca: ca.certPem, cert: pair.certPem, key: pair.keyPem };
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** A listener that records what reaches it: a node redirecting the master to an address it controls. */
  async function listener(t: { after(fn: () => void): void }, cert: KeyPairPem) {
    const seen: { authorization?: string; peerCN?: string }[] = [];
    const server = createHttpsServer({ cert: cert.certPem, key: cert.keyPem, ca: ca.certPem, requestCert: true, rejectUnauthorized: false }, (req, res) => {
      seen.push({ authorization: req.headers.authorization, peerCN: String((req.socket as TLSSocket).getPeerCertificate().subject?.CN) });
      res.end('{}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    t.after(() => server.close());
    return { port: (server.address() as { port: number }).port, seen };
  }

  const call = (nodeName: string, port: number) =>
    callKubelet({ nodeName, host: '127.0.0.1', port }, { method: 'GET', path: '/stats/summary', token: 'ADMIN-TOKEN', tls: client, dialTimeoutMs: 5000 });

  it('presents its client certificate and sends no token to the kubelet of the node named', async (t) => {
    const kubelet = await listener(t, await issueServerCert(ca, { commonName: 'system:node:n1', dnsNames: ['n1'] }));
    const res = await call('n1', kubelet.port);
    assert.equal(res.statusCode, 200);
    res.resume();
    assert.deepEqual(kubelet.seen, [{ authorization: undefined, peerCN: 'kube-apiserver-kubelet-client' }]);
  });

  it('refuses a kubelet whose certificate names another node, before sending anything', async (t) => {
    // n2 set its Node's address to n1's kubelet (or to a listener holding n1's certificate).
    const kubelet = await listener(t, await issueServerCert(ca, { commonName: 'system:node:n1', dnsNames: ['n1'] }));
    await assert.rejects(call('n2', kubelet.port), (err: Error & { code?: number }) => {
      assert.equal(err.code, 503);
      assert.match(err.message, /error dialing backend: .*n2/);
      return true;
    });
    assert.deepEqual(kubelet.seen, []);
  });

  it('refuses a self-signed kubelet (or one of another CA) for the right name', async (t) => {
    const other = await loadOrCreateCa({ dir: join(dir, 'other') });
    const kubelet = await listener(t, await issueServerCert(other, { commonName: 'system:node:n1', dnsNames: ['n1'] }));
    await assert.rejects(call('n1', kubelet.port), { code: 503 });
    assert.deepEqual(kubelet.seen, []);
  });

  it('a kubelet serving TLS accepts the master certificate and refuses calls with none', async (t) => {
    const serving = await issueServerCert(ca, { commonName: 'system:node:n1', dnsNames: ['n1'] });
    const abort = new AbortController();
    t.after(() => abort.abort());
    const kubelet = await startKubeletServer({
      provider: new FakeProvider(),
      findPod: () => undefined,
      authenticate: async () => undefined,
      nodeName: 'n1',
      address: '127.0.0.1',
      port: 0,
      signal: abort.signal,
      tls: { cert: serving.certPem, key: serving.keyPem, ca: ca.certPem },
    });
    const ok = await call('n1', kubelet.port);
    assert.equal(ok.statusCode, 200);
    ok.resume();
    const anonymous = await callKubelet(
      { nodeName: 'n1', host: '127.0.0.1', port: kubelet.port },
      { method: 'GET', path: '/stats/summary', token: 'x', tls: { ...client, cert: '', key: '' }, dialTimeoutMs: 5000 },
    );
    assert.equal(anonymous.statusCode, 401);
    anonymous.resume();
  });
});
