// Integration test of the master's TLS registry: /v2/ over HTTPS with the cluster CA only, plain HTTP refused, the engine's certs.d entry, and a push and pull through it by the host's Docker engine.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { loadOrCreateCa } from '../src/core/pki/pki.js';
import { registryCertsDir } from '../src/runtime/docker-registry-trust.js';
import { findExecutable } from '../src/control-plane/supervisor/supervised-process.js';
import { type MasterProcess, startMaster } from './helpers/master.js';

const run = promisify(execFile);
const docker = async (...args: string[]) => (await run('docker', args, { maxBuffer: 16 * 1024 * 1024, timeout: 120_000 })).stdout.trim();

async function dockerWorks(): Promise<boolean> {
  try {
    await docker('info', '--format', '{{.ID}}');
    return process.getuid?.() === 0 && findExecutable('docker-registry') !== undefined;
  } catch {
    return false;
  }
}

const skip = (await dockerWorks()) ? false : 'needs root, a Docker engine and docker-registry';

/** GET url over HTTPS trusting only `ca`: the status, or the TLS error's code. */
function getWithCa(url: string, ca: string): Promise<{ status?: number; error?: string }> {
  return new Promise((resolve) => {
    const req = request(url, { ca, timeout: 5_000 }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode }));
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
    req.end();
  });
}

describe('the master registry over TLS', { skip, timeout: 240_000 }, () => {
  let master: MasterProcess;
  let registry: string;
  let certsEntry: string;
  const work = mkdtempSync(join(tmpdir(), 'minik8s-registry-tls-'));
  const tag = `registry-tls-${process.pid}-${Date.now().toString(36)}`;
  const pushed: string[] = [];
  let stopped = false;

  before(async () => {
    master = await startMaster({ tls: true, registry: true });
    registry = `127.0.0.1:${master.registryPort}`;
    certsEntry = registryCertsDir(registry);
  });

  after(async () => {
    for (const ref of pushed) await docker('rmi', '--force', ref).catch(() => {});
    if (!stopped) await master?.stop();
    // Should the master have died without its cleanup, its certs.d entry for this test's port goes here.
    if (certsEntry) rmSync(certsEntry, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  });

  it('answers /v2/ over HTTPS to a client that trusts the cluster CA, with a certificate for the addresses', async () => {
    assert.ok(master.ca);
    assert.deepEqual(await getWithCa(`https://${registry}/v2/`, master.ca), { status: 200 });
    // curl as a person would check it: --cacert and nothing else.
    const { stdout } = await run('curl', [
      '-sS',
      '-o',
      '/dev/null',
      '-w',
      '%{http_code}',
      '--cacert',
      join(master.dataDir, 'pki', 'ca.crt'),
      `https://${registry}/v2/`,
    ]);
    assert.equal(stdout, '200');
  });

  it('refuses a client that trusts another CA, and plain HTTP', async () => {
    const other = await loadOrCreateCa({ dir: join(work, 'other-ca') });
    const wrong = await getWithCa(`https://${registry}/v2/`, other.certPem);
    assert.equal(wrong.status, undefined);
    assert.match(wrong.error ?? '', /SELF_SIGNED|UNABLE_TO_VERIFY|CERT/);
    const res = await fetch(`http://${registry}/v2/`, { signal: AbortSignal.timeout(5_000) });
    const body = await res.text();
    assert.equal(res.status, 400, 'an HTTP request to the HTTPS port');
    assert.match(body, /HTTP request to an HTTPS server/);
  });

  it("puts the cluster CA where this machine's engine reads it for the registry", () => {
    assert.equal(readFileSync(join(certsEntry, 'ca.crt'), 'utf8'), master.ca);
  });

  it("lets the host's Docker engine push an image and pull it back", async () => {
    // A one-file image of our own: no base image needed.
    const root = join(work, 'rootfs');
    mkdirSync(root);
    writeFileSync(join(root, 'hello.txt'), `${tag}\n`);
    await run('tar', ['-C', root, '-cf', join(work, 'rootfs.tar'), '.']);
    const ref = `${registry}/test/${tag}:1`;
    pushed.push(ref);
    await docker('import', join(work, 'rootfs.tar'), ref);
    await docker('push', ref);
    const manifest = await getWithCa(`https://${registry}/v2/test/${tag}/manifests/1`, master.ca!);
    assert.equal(manifest.status, 200, 'the registry holds what the engine pushed');
    await docker('rmi', ref);
    await docker('pull', ref);
    assert.match(await docker('image', 'inspect', '--format', '{{.Id}}', ref), /^sha256:/);
  });

  it('takes its certs.d entry away when it stops', async () => {
    stopped = true;
    await master.stop();
    assert.equal(existsSync(join(certsEntry, 'ca.crt')), false);
  });
});
