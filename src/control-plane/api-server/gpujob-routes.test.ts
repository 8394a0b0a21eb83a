// GpuJob subresources through the API app on a memory store, with a job's service account token and its Role: what the token may do (and when it stops), the submission with its SSH key, outputs up and down, and Secrets kept from nodes.
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { MemoryStore } from '../../core/store/memory-store.js';
import { ADMIN_USER, anyOf, TokenAuthenticator } from './auth.js';
import { GpuJobOutputs } from './gpujob-outputs.js';
import { registerGpuJobRoutes, type GpuJobSubmission } from './gpujob-routes.js';
import { generateKeyPairSync } from 'node:crypto';
import type { GpuJob } from '../../core/api/gpujob.js';
import { gpuJobKind } from '../../core/api/gpujob.js';
import { podKind } from '../../core/api/pod.js';
import { serviceAccountKind } from '../../core/api/serviceaccount.js';
import { NotFoundError } from '../../core/errors.js';
import { gpuJobAccessName, gpuJobRole, gpuJobRoleBinding, gpuJobServiceAccount } from '../reconcilers/gpujob-access.js';
import { RbacIndex } from '../rbac/rbac-authorizer.js';
import { ServiceAccountAuthenticator } from '../serviceaccounts/authenticator.js';
import { ServiceAccountTokens } from '../serviceaccounts/tokens.js';
import type { KindDefinition } from '../../core/api/kind.js';
import { createApiApp, ensureSystemNamespaces, type ApiApp } from './server.js';

const ADMIN = 'admin-token';
const NODE = 'node-token';
const JOBS = '/apis/minik8s.io/v1/namespaces/default/gpujobs';

/** The parts of the answers these tests read: a created job's uid, a submission, a Status's message (an output is its plain bytes). */
type Answer = GpuJobSubmission & { metadata: { uid: string }; message: string };

describe('GpuJob subresources', () => {
  let api: ApiApp;
  let dir: string;
  const tokens = new ServiceAccountTokens({ privateKey: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey });
  const rbac = new RbacIndex();
  const lookup = (def: KindDefinition) => async (namespace: string, name: string) => {
    try {
      return await api.service.get(def, namespace, name);
    } catch (err) {
      if (err instanceof NotFoundError) return undefined;
      throw err;
    }
  };

  const call = async (method: string, path: string, body?: unknown, token = ADMIN, contentType = 'application/json') => {
    const res = await api.app.request(path, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': contentType },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // Outputs are plain bytes.
    }
    return { status: res.status, body: parsed as Answer };
  };
  const makeJob = async (name: string, cluster = 'hpc') => {
    const res = await call('POST', JOBS, {
      apiVersion: 'minik8s.io/v1',
      kind: 'GpuJob',
      metadata: { name },
      spec: { cluster, program: { files: { 'hello.c': 'int main(){return 0;}\n' } }, slurm: { gres: 'gpu:1' } },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    // What the GpuJob controller makes for each job: its account, Role and binding, and a token bound to the job.
    const job = res.body as unknown as GpuJob;
    const sa = await api.service.create(serviceAccountKind, 'default', gpuJobServiceAccount(job) as never);
    rbac.setRole(gpuJobRole(job));
    rbac.setBinding(gpuJobRoleBinding(job));
    const { token } = await tokens.issue({
      namespace: 'default',
      serviceAccount: { name: gpuJobAccessName(job), uid: sa.metadata.uid! },
      gpujob: { name, uid: job.metadata.uid! },
    });
    return { body: res.body, token, job };
  };
  const patchStatus = (name: string, status: unknown, token: string) =>
    call('PATCH', `${JOBS}/${name}/status`, { status }, token, 'application/merge-patch+json');

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gpujob-outputs-'));
    const admins = new TokenAuthenticator();
    admins.add(ADMIN, ADMIN_USER);
    admins.add(NODE, { name: 'system:node:n1', groups: ['system:nodes'] });
    const outputs = new GpuJobOutputs({ dir, maxBytes: 1024 });
    api = createApiApp({
      store: new MemoryStore(),
      authenticator: anyOf(
        admins,
        new ServiceAccountAuthenticator({ tokens, serviceAccount: lookup(serviceAccountKind), pod: lookup(podKind), gpuJob: lookup(gpuJobKind) }),
      ),
      rbac,
      routes: [(app, { service }) => registerGpuJobRoutes(app, { service, outputs })],
    });
    await ensureSystemNamespaces(api.service);
    for (const body of [
      {
        apiVersion: 'minik8s.io/v1',
        kind: 'SlurmCluster',
        metadata: { name: 'hpc' },
        spec: { mode: 'local', local: { slurmConf: '/srv/slurm/slurm.conf', workDir: '/srv/jobs' } },
      },
      {
        apiVersion: 'minik8s.io/v1',
        kind: 'SlurmCluster',
        metadata: { name: 'login' },
        spec: { mode: 'ssh', ssh: { host: 'login.example', user: 'stu', secretName: 'hpc-key' } },
      },
    ])
      assert.equal((await call('POST', '/apis/minik8s.io/v1/namespaces/default/slurmclusters', body)).status, 201);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("gives the job's token its submission: files, the rendered batch script, the job directory and the cluster", async () => {
    const { body, token } = await makeJob('hello');
    const res = await call('GET', `${JOBS}/hello/submission`, undefined, token);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const s: GpuJobSubmission = res.body;
    const uid8 = body.metadata.uid.replace(/-/g, '').slice(0, 8);
    assert.equal(s.mode, 'local');
    assert.deepEqual(s.local, { slurmConf: '/srv/slurm/slurm.conf' });
    assert.equal(s.jobDirectory, `/srv/jobs/default_hello_${uid8}`);
    assert.equal(s.jobName, `minik8s-default-hello-${uid8}`);
    assert.deepEqual(s.files, { 'hello.c': 'int main(){return 0;}\n' });
    assert.match(s.batchScript, /#SBATCH --gres=gpu:1\n\nset -e\ncc -O2 -o hello hello\.c\n\.\/hello\n$/);
  });

  it('lets the token report status and upload outputs for its job, and nothing else', async () => {
    const { token } = await makeJob('mine');
    await makeJob('theirs');
    assert.equal((await patchStatus('mine', { jobId: '7', slurmState: 'RUNNING' }, token)).status, 200);
    assert.equal((await call('PUT', `${JOBS}/mine/output/result.out`, 'hello from slurm\n', token, 'application/octet-stream')).status, 200);
    const refusals: [string, string, unknown?][] = [
      ['PATCH', `${JOBS}/theirs/status`, { status: { jobId: '8' } }],
      ['GET', `${JOBS}/theirs/submission`],
      ['PUT', `${JOBS}/mine`, { apiVersion: 'minik8s.io/v1', kind: 'GpuJob', metadata: { name: 'mine' } }],
      ['DELETE', `${JOBS}/mine`],
      ['GET', '/api/v1/namespaces/default/pods'],
      ['GET', '/api/v1/namespaces/default/secrets/hpc-key'],
    ];
    for (const [method, path, body] of refusals) {
      const res = await call(method, path, body, token, 'application/merge-patch+json');
      assert.equal(res.status, 403, `${method} ${path}: ${JSON.stringify(res.body)}`);
    }
    const theirs = await call('PATCH', `${JOBS}/theirs/status`, { status: { jobId: '8' } }, token, 'application/merge-patch+json');
    assert.match(
      theirs.body.message,
      /^gpujobs\.minik8s\.io "theirs" is forbidden: User "system:serviceaccount:default:gpujob-[0-9a-f-]+" cannot patch resource "gpujobs\/status" in API group "minik8s\.io" in the namespace "default"$/,
    );
    const res = await call('GET', `${JOBS}/mine/output/result.out`);
    assert.equal(res.body, 'hello from slurm\n');
  });

  it('stops working once its binding goes (the job finished) and once the job object is gone, also for a job applied again under the same name', async () => {
    const { token, job } = await makeJob('done');
    assert.equal((await patchStatus('done', { jobId: '9' }, token)).status, 200);
    // The controller deletes the binding when the job has finished.
    rbac.deleteBinding(gpuJobRoleBinding(job));
    const late = await patchStatus('done', { jobId: '9' }, token);
    assert.equal(late.status, 403);
    assert.match(late.body.message, /cannot patch resource "gpujobs\/status"/);

    const first = await makeJob('again');
    assert.equal((await patchStatus('again', { jobId: '10' }, first.token)).status, 200);
    assert.equal((await call('DELETE', `${JOBS}/again`)).status, 200);
    await makeJob('again');
    const stale = await patchStatus('again', { jobId: '10' }, first.token);
    assert.equal(stale.status, 401, 'a token bound to the deleted job authenticates no more');
  });

  it("hands an ssh-mode submitter the key from the cluster's Secret, and says when there is none", async () => {
    const { token } = await makeJob('remote', 'login');
    const missing = await call('GET', `${JOBS}/remote/submission`, undefined, token);
    assert.equal(missing.status, 404);
    assert.match(missing.body.message, /secret "hpc-key" not found: SlurmCluster "login" takes its SSH private key from it/);
    await call('POST', '/api/v1/namespaces/default/secrets', {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'hpc-key' },
      type: 'kubernetes.io/ssh-auth',
      stringData: { 'ssh-privatekey': '-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n-----END OPENSSH PRIVATE KEY-----\n' },
    });
    const res = await call('GET', `${JOBS}/remote/submission`, undefined, token);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body.ssh, {
      host: 'login.example',
      port: 22,
      user: 'stu',
      privateKey: '-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n-----END OPENSSH PRIVATE KEY-----\n',
    });
    assert.equal(res.body.jobDirectory.startsWith('minik8s-jobs/default_remote_'), true);

    // A node, which reads every GpuJob, does not read the key through the submission (defect 3).
    const byNode = await call('GET', `${JOBS}/remote/submission`, undefined, NODE);
    assert.equal(byNode.status, 403);
    assert.match(
      byNode.body.message,
      /^gpujobs\.minik8s\.io "remote" is forbidden: User "system:node:n1" cannot get resource "gpujobs\/submission" .*only the job's own service account reads it$/,
    );
    assert.doesNotMatch(JSON.stringify(byNode.body), /PRIVATE KEY/);
    assert.equal((await call('GET', '/api/v1/namespaces/default/secrets/hpc-key', undefined, NODE)).status, 403);
  });

  it('keeps Secrets from nodes, which otherwise read everything, but for those their own pods use', async () => {
    const res = await call('GET', '/api/v1/namespaces/default/secrets', undefined, NODE);
    assert.equal(res.status, 403);
    assert.match(res.body.message, /a node may only read Secrets that pods bound to it use/);
    assert.equal((await call('GET', JOBS, undefined, NODE)).status, 200);
    await call('POST', '/api/v1/namespaces/default/secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'pod-token' }, stringData: { token: 't' } });
    const pod = (name: string, nodeName: string) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name },
      spec: { nodeName, containers: [{ name: 'c', image: 'busybox', env: [{ name: 'T', valueFrom: { secretKeyRef: { name: 'pod-token', key: 'token' } } }] }] },
    });
    assert.equal((await call('POST', '/api/v1/namespaces/default/pods', pod('elsewhere', 'n2'))).status, 201);
    assert.equal((await call('GET', '/api/v1/namespaces/default/secrets/pod-token', undefined, NODE)).status, 403, "another node's pod uses it");
    assert.equal((await call('POST', '/api/v1/namespaces/default/pods', pod('here', 'n1'))).status, 201);
    const own = await call('GET', '/api/v1/namespaces/default/secrets/pod-token', undefined, NODE);
    assert.equal(own.status, 200, JSON.stringify(own.body));
  });

  it('answers 404 for an output not stored yet or not a job output, and 413 for one over the limit', async () => {
    const { token } = await makeJob('outs');
    const none = await call('GET', `${JOBS}/outs/output/error.err`);
    assert.equal(none.status, 404);
    assert.match(none.body.message, /gpujob "outs" has no error\.err yet: it is stored when the job ends \(phase Pending\)/);
    assert.equal((await call('GET', `${JOBS}/outs/output/passwd`)).status, 404);
    const big = await call('PUT', `${JOBS}/outs/output/error.err`, 'x'.repeat(2048), token, 'application/octet-stream');
    assert.equal(big.status, 413);
    assert.equal((await call('GET', `${JOBS}/outs/output/error.err`)).status, 404, 'nothing kept of a refused upload');
  });
});
