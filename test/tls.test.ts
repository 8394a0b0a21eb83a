// The API over TLS with the cluster CA: HTTPS by default, x509 client certs, admin.kubeconfig for the CLI and stock kubectl, pinned joins.
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { namespaceKind } from '../src/core/api/namespace.js';
import { ApiClient } from '../src/core/client/api-client.js';
import { waitFor } from '../src/core/wait-for.js';
import { loadClientConfig } from '../src/core/client-config.js';
import { parsePinnedJoinToken, pinnedJoinToken } from '../src/core/pki/join-token-pin.js';
import { issueServerCert, loadOrCreateCa } from '../src/core/pki/pki.js';
import { obtainNodeCredential } from '../src/node/agent/node-credential.js';
import { startFakeWorker } from './helpers/fake-worker.js';
import { BINARY, httpsGet, type MasterProcess, startMaster } from './helpers/master.js';

const run = promisify(execFile);

describe('the API over TLS', () => {
  let master: MasterProcess;
  before(async () => {
    master = await startMaster({ tls: true, registry: false });
  });
  after(async () => {
    await master?.stop();
  });

  test('serves HTTPS with a certificate the cluster CA signed, for loopback and the service names', async () => {
    assert.match(master.url, /^https:/);
    assert.equal((await httpsGet(`${master.url}/healthz`, master.ca!)).status, 200);
    // The same port refuses to be read without TLS verification against the CA: Node's own roots do not vouch for it.
    await assert.rejects(httpsGet(`${master.url}/healthz`, ''), /self[- ]signed|unable to verify|certificate/i);
    assert.equal((await httpsGet(`${master.url}/cacerts`, master.ca!)).body, master.ca);
    assert.equal(statSync(join(master.dataDir, 'pki', 'ca.key')).mode & 0o777, 0o600);
    assert.equal(statSync(join(master.dataDir, 'admin.kubeconfig')).mode & 0o777, 0o600);
  });

  test('authenticates the admin client certificate, the bearer token, and refuses a request with neither', async () => {
    const fromFile = loadClientConfig({ kubeconfig: master.kubeconfig, env: {} });
    assert.ok(fromFile.cert && fromFile.key && fromFile.ca);
    const byCert = new ApiClient({ server: master.url, tls: { ca: fromFile.ca, cert: fromFile.cert, key: fromFile.key } });
    const byToken = new ApiClient({ server: master.url, token: master.token, tls: { ca: fromFile.ca } });
    const nobody = new ApiClient({ server: master.url, tls: { ca: fromFile.ca } });
    try {
      assert.ok(Array.isArray(((await byCert.request('GET', '/api/v1/namespaces')) as { items: unknown[] }).items));
      assert.ok(Array.isArray(((await byToken.request('GET', '/api/v1/namespaces')) as { items: unknown[] }).items));
      await assert.rejects(nobody.request('GET', '/api/v1/namespaces'), { name: 'UnauthorizedError' });
    } finally {
      byCert.close();
      byToken.close();
      nobody.close();
    }
  });

  test('a client certificate from another CA authenticates no one', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'minik8s-tls-other-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const other = await loadOrCreateCa({ dir });
    const { issueClientCert } = await import('../src/core/pki/pki.js');
    const forged = await issueClientCert(other, { user: 'admin', groups: ['system:masters'] });
    const client = new ApiClient({ server: master.url, tls: { ca: master.ca, cert: forged.certPem, key: forged.keyPem } });
    try {
      await assert.rejects(client.request('GET', '/api/v1/namespaces'), { name: 'UnauthorizedError' });
    } finally {
      client.close();
    }
  });

  test('the CLI reads admin.kubeconfig through KUBECONFIG and --kubeconfig; `minik8s kubeconfig` prints it', async () => {
    const env = { ...process.env, HOME: master.home, KUBECONFIG: master.kubeconfig!, MINIK8S_SERVER: '', MINIK8S_TOKEN: '' };
    delete (env as Record<string, string | undefined>).MINIK8S_SERVER;
    delete (env as Record<string, string | undefined>).MINIK8S_TOKEN;
    const viaEnv = await run(process.execPath, [BINARY, 'get', 'namespaces'], { env });
    assert.match(viaEnv.stdout, /kube-system/);
    const viaFlag = await run(process.execPath, [BINARY, 'get', 'namespaces', '--kubeconfig', master.kubeconfig!], {
      env: { ...env, KUBECONFIG: '' },
    });
    assert.match(viaFlag.stdout, /kube-system/);
    const printed = await run(process.execPath, [BINARY, 'kubeconfig', '--data-dir', master.dataDir], { env });
    assert.match(printed.stdout, /certificate-authority-data: /);
    assert.match(printed.stdout, /server: https:\/\/127\.0\.0\.1:/);
  });

  test('the default join token pins the CA, and a fake worker joins over TLS with it', async () => {
    const parts = parsePinnedJoinToken(master.joinToken);
    assert.equal(parts.caHash?.length, 64);
    const worker = await startFakeWorker({ master, args: ['--provider=fake', '--name', 'tls-node'], readyNodes: 1, namePrefix: 'tls-node' });
    try {
      // The kubelet got a serving certificate for its name at the join; the master scrapes it over TLS with its own client certificate.
      await waitFor(
        async () => {
          const res = await httpsGet(`${master.url}/apis/metrics.k8s.io/v1beta1/nodes`, master.ca!, { authorization: `Bearer ${master.token}` });
          return res.status === 200 && res.body.includes('"tls-node"');
        },
        { timeoutMs: 20_000, description: 'node metrics of tls-node scraped over TLS' },
      );
    } finally {
      await worker.stop();
    }
  });

  test('stock kubectl gets nodes and pods with admin.kubeconfig', async (t) => {
    if (spawnSync('kubectl', ['version', '--client'], { stdio: 'ignore' }).status !== 0) {
      t.skip('kubectl is not on PATH');
      return;
    }
    const env = { ...process.env, HOME: master.home };
    const nodes = await run('kubectl', ['--kubeconfig', master.kubeconfig!, 'get', 'nodes'], { env });
    assert.match(nodes.stdout, /tls-node/);
    const pods = await run('kubectl', ['--kubeconfig', master.kubeconfig!, 'get', 'pods', '-A'], { env });
    assert.doesNotMatch(pods.stderr, /error/i);
    const ns = await run('kubectl', ['--kubeconfig', master.kubeconfig!, 'get', 'namespaces'], { env });
    assert.match(ns.stdout, /kube-system/);
  });

  test('stock kubectl lists in chunks (limit and continue) and sees every object', async (t) => {
    if (spawnSync('kubectl', ['version', '--client'], { stdio: 'ignore' }).status !== 0) {
      t.skip('kubectl is not on PATH');
      return;
    }
    const env = { ...process.env, HOME: master.home };
    const kubectl = (...args: string[]) => run('kubectl', ['--kubeconfig', master.kubeconfig!, ...args], { env });
    const names = Array.from({ length: 5 }, (_, i) => `chunk-${process.pid}-${i}`);
    // Made through the API (kubectl's create sends protobuf, which this server does not read yet).
    const admin = new ApiClient({ server: master.url, token: master.token, tls: { ca: master.ca! } });
    for (const name of names) await admin.create(namespaceKind, { metadata: { name } });
    try {
      // -v=6 logs each request's URL: the pages are asked for with limit=2, then continue=TOKEN.
      const listed = await kubectl('get', 'namespaces', '--chunk-size=2', '-o', 'name', '-v=6');
      for (const name of names) assert.match(listed.stdout, new RegExp(`^namespace/${name}$`, 'm'));
      assert.match(listed.stdout, /^namespace\/kube-system$/m);
      assert.match(listed.stderr, /GET https:\/\/\S+\/api\/v1\/namespaces\?limit=2 200/);
      assert.match(listed.stderr, /GET https:\/\/\S+\/api\/v1\/namespaces\?continue=\S+&limit=2 200/);
    } finally {
      for (const name of names) await admin.delete(namespaceKind, { name }).catch(() => {});
    }
  });
});

test('a join against a server whose CA differs from the pin sends no secret', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'minik8s-tls-pin-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const impostorCa = await loadOrCreateCa({ dir: join(dir, 'impostor') });
  const pinnedCa = await loadOrCreateCa({ dir: join(dir, 'real') });
  const cert = await issueServerCert(impostorCa, { commonName: 'impostor', ipAddresses: ['127.0.0.1'] });
  const seen: { method?: string; url?: string; authorization?: string; body: string }[] = [];
  const server = createHttpsServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => {
    let body = '';
    req.on('data', (d) => {
      body += d;
    });
    req.on('end', () => {
      seen.push({ method: req.method, url: req.url, authorization: req.headers.authorization, body });
      if (req.url === '/cacerts') res.end(impostorCa.certPem);
      else res.end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => server.close());
  const { port } = server.address() as { port: number };
  const secret = 'abcdef.0123456789abcdef';
  await assert.rejects(
    obtainNodeCredential({
      server: `https://127.0.0.1:${port}`,
      nodeName: 'n1',
      joinToken: pinnedJoinToken(pinnedCa.hash, secret),
      dataDir: join(dir, 'worker'),
      signal: new AbortController().signal,
      log: () => {},
    }),
    (err: Error) => err.name === 'StartupError' && /is not the one the join token pins/.test(err.message),
  );
  assert.deepEqual(
    seen.map((s) => `${s.method} ${s.url}`),
    ['GET /cacerts'],
  );
  assert.ok(seen.every((s) => s.authorization === undefined && !s.body.includes('0123456789abcdef')));
});

test('a bare join token is refused over https before anything is sent', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'minik8s-tls-bare-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  await assert.rejects(
    obtainNodeCredential({
      // Nothing listens here: the refusal must come before any connection.
      server: 'https://127.0.0.1:1',
      nodeName: 'n1',
      joinToken: 'abcdef.0123456789abcdef',
      dataDir: dir,
      signal: new AbortController().signal,
      log: () => {},
    }),
    /the join token has no CA hash/,
  );
});
