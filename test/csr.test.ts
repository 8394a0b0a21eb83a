// CertificateSigningRequests with stock kubectl against a real TLS master: openssl makes a key and request, kubectl files it, approves (or denies) it, and the issued certificate logs in with kubectl.
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { waitFor } from '../src/core/wait-for.js';
import { startMaster, type MasterProcess } from './helpers/master.js';

const KUBECTL = spawnSync('kubectl', ['version', '--client', '-o', 'json'], { encoding: 'utf8' });
const OPENSSL = spawnSync('openssl', ['version'], { encoding: 'utf8' });
const skip = KUBECTL.status !== 0 ? 'kubectl is not on PATH' : OPENSSL.status !== 0 ? 'openssl is not on PATH' : false;

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { env, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

describe('CertificateSigningRequests with stock kubectl', { skip }, () => {
  let master: MasterProcess;
  let dir: string;
  const kubectl = (args: string[], kubeconfig = master.kubeconfig!) =>
    run('kubectl', ['--kubeconfig', kubeconfig, ...args], { ...process.env, HOME: master.home });
  /** A key and a PKCS#10 request for it, as a user makes them with openssl. */
  const request = (name: string, subject: string) => {
    const key = join(dir, `${name}.key`);
    const csr = join(dir, `${name}.csr`);
    const r = spawnSync(
      'openssl',
      ['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key, '-out', csr, '-subj', subject],
      {
        encoding: 'utf8',
      },
    );
    assert.equal(r.status, 0, r.stderr);
    const manifest = join(dir, `${name}.yaml`);
    writeFileSync(
      manifest,
      JSON.stringify({
        apiVersion: 'certificates.k8s.io/v1',
        kind: 'CertificateSigningRequest',
        metadata: { name },
        // A username in the body is the client's claim, which the server replaces with who asked.
        spec: {
          request: readFileSync(csr).toString('base64'),
          signerName: 'kubernetes.io/kube-apiserver-client',
          expirationSeconds: 3600,
          usages: ['client auth'],
          username: 'someone-else',
        },
      }),
    );
    return { key, manifest };
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'minik8s-csr-'));
    master = await startMaster({ tls: true, registry: false });
  });
  after(async () => {
    await master?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('create, approve, fetch the certificate, and log in with it', async () => {
    const { key, manifest } = request('alice', '/CN=alice/O=devs');
    const created = await kubectl(['create', '-f', manifest]);
    assert.equal(created.code, 0, created.stderr);
    assert.equal(created.stdout.trim(), 'certificatesigningrequest.certificates.k8s.io/alice created');

    const pending = await kubectl(['get', 'csr', 'alice']);
    assert.equal(pending.code, 0, pending.stderr);
    const [header, row] = pending.stdout.trim().split('\n');
    assert.deepEqual(header!.split(/\s+/), ['NAME', 'AGE', 'SIGNERNAME', 'REQUESTOR', 'REQUESTEDDURATION', 'CONDITION']);
    const cells = row!.split(/\s+/);
    assert.deepEqual([cells[0], cells[2], cells[4], cells[5]], ['alice', 'kubernetes.io/kube-apiserver-client', '60m', 'Pending']);
    assert.notEqual(cells[3], 'someone-else', 'the requestor is who asked');

    const approved = await kubectl(['certificate', 'approve', 'alice']);
    assert.equal(approved.code, 0, approved.stderr);
    assert.equal(approved.stdout.trim(), 'certificatesigningrequest.certificates.k8s.io/alice approved');
    const certB64 = await waitFor(
      async () => {
        const r = await kubectl(['get', 'csr', 'alice', '-o', 'jsonpath={.status.certificate}']);
        return r.stdout.trim() || undefined;
      },
      { timeoutMs: 20_000, description: 'the signer to issue the certificate' },
    );
    const issued = await kubectl(['get', 'csr', 'alice', '--no-headers']);
    assert.match(issued.stdout, /\sApproved,Issued\s*$/);

    const cert = join(dir, 'alice.crt');
    writeFileSync(cert, Buffer.from(certB64, 'base64'));
    const text = spawnSync('openssl', ['x509', '-noout', '-subject', '-in', cert], { encoding: 'utf8' });
    assert.match(text.stdout, /CN\s*=\s*alice/);
    assert.match(text.stdout, /O\s*=\s*devs/);

    // A kubeconfig for alice: the admin's cluster, her certificate and key.
    const config = join(dir, 'alice.kubeconfig');
    copyFileSync(master.kubeconfig!, config);
    for (const args of [
      ['config', 'set-credentials', 'alice', `--client-certificate=${cert}`, `--client-key=${key}`, '--embed-certs'],
      ['config', 'set-context', '--current', '--user=alice'],
    ]) {
      const r = await kubectl(args, config);
      assert.equal(r.code, 0, r.stderr);
    }
    const refused = await kubectl(['get', 'pods', '-n', 'default'], config);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "default"/);
  });

  test('deny: no certificate, and kubectl will not approve it afterwards', async () => {
    const { manifest } = request('mallory', '/CN=mallory/O=system:masters');
    assert.equal((await kubectl(['create', '-f', manifest])).code, 0);
    const denied = await kubectl(['certificate', 'deny', 'mallory']);
    assert.equal(denied.code, 0, denied.stderr);
    assert.equal(denied.stdout.trim(), 'certificatesigningrequest.certificates.k8s.io/mallory denied');
    const row = await kubectl(['get', 'csr', 'mallory', '--no-headers']);
    assert.match(row.stdout, /\sDenied\s*$/);
    const flip = await kubectl(['certificate', 'approve', 'mallory']);
    assert.notEqual(flip.code, 0);
    assert.match(flip.stderr, /is already Denied/);
    const cert = await kubectl(['get', 'csr', 'mallory', '-o', 'jsonpath={.status.certificate}']);
    assert.equal(cert.stdout, '');
  });
});
