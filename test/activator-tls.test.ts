// The activator of a master that serves HTTPS: function URLs are https, `minik8s invoke` and a client with the cluster CA get the function's answer, plain HTTP and clients without the CA get none.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Docker from 'dockerode';
import type { FunctionObject } from '../src/core/api/function.js';
import { httpsGet, BINARY, startMaster, type MasterProcess } from './helpers/master.js';
import { startWorker, type WorkerProcess } from './helpers/worker.js';

const docker = new Docker();
const dockerAvailable = await docker.ping().then(
  () => true,
  () => false,
);

const HANDLER = 'def handler(event, context):\n    return {"hello": event, "path": context.path}\n';

describe('functions through the activator over HTTPS (real master and worker)', { skip: dockerAvailable ? false : 'no Docker engine' }, () => {
  let master: MasterProcess;
  let worker: WorkerProcess;
  const dir = mkdtempSync(join(tmpdir(), 'minik8s-act-tls-'));

  const cli = (...args: string[]) =>
    new Promise<{ status: number; stdout: string; stderr: string }>((resolve) => {
      execFile(process.execPath, [BINARY, ...args], { env: master.env, encoding: 'utf8', timeout: 240_000 }, (err, stdout, stderr) => {
        resolve({ status: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      });
    });
  const ok = async (...args: string[]) => {
    const r = await cli(...args);
    assert.equal(r.status, 0, `minik8s ${args.join(' ')} exited ${r.status}:\n${r.stdout}\n${r.stderr}`);
    return r;
  };
  /** A GET of the API over https with the admin token; the body as the caller says it is. */
  const api = async <T>(path: string) =>
    JSON.parse((await httpsGet(`${master.url}${path}`, master.ca!, { authorization: `Bearer ${master.token}` })).body) as T;

  before(async () => {
    master = await startMaster({ tls: true, seedImages: true });
    worker = await startWorker({ server: master.url, joinToken: master.joinToken });
  });

  after(async () => {
    await worker?.destroy();
    const registryPort = master?.registryPort;
    await master?.stop();
    rmSync(dir, { recursive: true, force: true });
    if (registryPort !== undefined) {
      const prefix = `127.0.0.1:${registryPort}/functions/`;
      for (const image of await docker.listImages().catch(() => [])) {
        const refs = [...(image.RepoTags ?? []), ...(image.RepoDigests ?? [])];
        if (refs.some((r) => r.startsWith(prefix)))
          await docker
            .getImage(image.Id)
            .remove({ force: true })
            .catch(() => {});
      }
    }
  });

  it('reports https URLs for the activator and the function', async () => {
    assert.match(master.activatorUrl, /^https:\/\/127\.0\.0\.1:\d+$/);
    writeFileSync(join(dir, 'handler.py'), HANDLER);
    await ok('function', 'create', 'hello', '-f', join(dir, 'handler.py'));
    const fn = await api<FunctionObject>('/apis/minik8s.io/v1/namespaces/default/functions/hello');
    assert.equal(fn.status.url, `${master.activatorUrl}/function/hello`);
    assert.equal((await api<{ url: string }>('/apis/minik8s.io/v1/activator')).url, master.activatorUrl);
    // The registry is found the same way (image import pushes there), on its own free port.
    assert.equal((await api<{ port: number }>('/apis/minik8s.io/v1/registry')).port, master.registryPort);
  });

  it('`minik8s invoke` calls it over https, trusting the CA of admin.kubeconfig', async () => {
    const r = await ok('invoke', 'hello', '--data', '{"n": 1}', '--path', '/a');
    assert.deepEqual(JSON.parse(r.stdout), { hello: { n: 1 }, path: '/a' });
  });

  it('a client with the cluster CA gets the answer; without it, verification fails; plain HTTP gets a 400 saying to use HTTPS', async () => {
    const res = await httpsGet(`${master.activatorUrl}/function/hello/b`, master.ca!);
    assert.equal(res.status, 200, res.body);
    assert.equal((JSON.parse(res.body) as { path: string }).path, '/b');
    await assert.rejects(httpsGet(`${master.activatorUrl}/function/hello`, ''), /self[- ]signed|unable to verify|certificate/i);
    const plain = `http://127.0.0.1:${master.activatorPort}/function/hello`;
    // Plain HTTP gets no function answer: a 400 that says to use HTTPS, as kube-apiserver answers it.
    const refused = await fetch(plain, { method: 'POST', body: '{}' });
    assert.equal(refused.status, 400);
    assert.equal(await refused.text(), 'Client sent an HTTP request to an HTTPS server.\n');
    // The CLI told to use plain HTTP fails too, and says why.
    const r = await cli('invoke', 'hello', '--activator', `http://127.0.0.1:${master.activatorPort}`);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /HTTP 400\): Client sent an HTTP request to an HTTPS server/);
  });
});
