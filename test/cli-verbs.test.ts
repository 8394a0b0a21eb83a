// The minik8s CLI's kubectl verbs against a real TLS master: what each prints, its exit code, and what the server then holds.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { deploymentKind } from '../src/core/api/deployment.js';
import { namespaceKind } from '../src/core/api/namespace.js';
import { podKind } from '../src/core/api/pod.js';
import { secretKind } from '../src/core/api/secret.js';
import { ApiClient } from '../src/core/client/api-client.js';
import { BINARY, startMaster, type MasterProcess } from './helpers/master.js';

interface Pod {
  metadata: { labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: {
    restartPolicy?: string;
    containers: { name: string; image: string; command?: string[]; args?: string[]; env?: { name: string; value?: string }[] }[];
  };
}

describe('minik8s CLI verbs', () => {
  let master: MasterProcess;
  let admin: ApiClient;
  const ns = `cli-verbs-${process.pid}`;
  const cli = (...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> =>
    new Promise((resolve) => {
      execFile(process.execPath, [BINARY, '-n', ns, ...args], { env: master.env, timeout: 60_000 }, (err, stdout, stderr) => {
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
      });
    });
  const pod = async (name: string) => (await admin.get(podKind, { namespace: ns, name })) as unknown as Pod;

  before(async () => {
    master = await startMaster({ tls: true, registry: false });
    admin = new ApiClient({ server: master.url, token: master.token, tls: { ca: master.ca! } });
  });
  after(async () => {
    admin?.close();
    await master?.stop();
  });

  test('create namespace and secret generic, run', async () => {
    assert.deepEqual(await cli('create', 'namespace', ns), { code: 0, stdout: `namespace/${ns} created\n`, stderr: '' });
    assert.ok(await admin.get(namespaceKind, { name: ns }));
    const secret = await cli('create', 'secret', 'generic', 'creds', '--from-literal=user=admin', '--from-literal=pass=s3cr3t');
    assert.equal(secret.stdout, 'secret/creds created\n');
    const stored = (await admin.get(secretKind, { namespace: ns, name: 'creds' })) as unknown as { data: Record<string, string>; type: string };
    assert.equal(Buffer.from(stored.data.user!, 'base64').toString(), 'admin');
    assert.equal(stored.type, 'Opaque');

    assert.equal((await cli('run', 'sleeper', '--image=busybox', '--restart=Never', '--command', '--', 'sleep', '3600')).stdout, 'pod/sleeper created\n');
    const p = await pod('sleeper');
    assert.deepEqual(p.metadata.labels, { run: 'sleeper' });
    assert.equal(p.spec.restartPolicy, 'Never');
    assert.deepEqual(p.spec.containers[0]!.command, ['sleep', '3600']);
  });

  test('label and annotate: set, --overwrite, remove', async () => {
    assert.equal((await cli('label', 'pod', 'sleeper', 'tier=web')).stdout, 'pod/sleeper labeled\n');
    const clash = await cli('label', 'pod/sleeper', 'tier=db');
    assert.equal(clash.code, 1);
    assert.equal(clash.stderr, "error: 'tier' already has a value (web), and --overwrite is false\n");
    assert.equal((await cli('label', 'pod/sleeper', 'tier=db', '--overwrite')).stdout, 'pod/sleeper labeled\n');
    assert.equal((await pod('sleeper')).metadata.labels?.tier, 'db');
    assert.equal((await cli('label', 'pod/sleeper', 'tier-')).stdout, 'pod/sleeper unlabeled\n');
    assert.equal((await pod('sleeper')).metadata.labels?.tier, undefined);
    assert.equal((await cli('label', 'pods', '-l', 'run=sleeper', 'sel=yes')).stdout, 'pod/sleeper labeled\n');
    assert.equal((await cli('annotate', 'pod/sleeper', 'note=hello world')).stdout, 'pod/sleeper annotated\n');
    assert.equal((await pod('sleeper')).metadata.annotations?.note, 'hello world');
  });

  test('patch: strategic (default), merge, json, and no change', async () => {
    assert.equal((await cli('patch', 'pod', 'sleeper', '-p', '{"metadata":{"labels":{"p":"1"}}}')).stdout, 'pod/sleeper patched\n');
    assert.equal((await cli('patch', 'pod', 'sleeper', '-p', '{"metadata":{"labels":{"p":"1"}}}')).stdout, 'pod/sleeper patched (no change)\n');
    assert.equal((await cli('patch', 'pod/sleeper', '--type', 'merge', '-p', '{"metadata":{"labels":{"p":"2"}}}')).stdout, 'pod/sleeper patched\n');
    assert.equal((await cli('patch', 'pod/sleeper', '--type', 'json', '-p', '[{"op":"remove","path":"/metadata/labels/p"}]')).stdout, 'pod/sleeper patched\n');
    assert.equal((await pod('sleeper')).metadata.labels?.p, undefined);
  });

  test('set image and set env on a deployment', async () => {
    await admin.create(deploymentKind, {
      metadata: { name: 'web', namespace: ns },
      spec: {
        replicas: 0,
        selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'nginx', image: 'nginx:1.25' }] } },
      },
    });
    assert.equal((await cli('set', 'image', 'deployment/web', 'nginx=nginx:1.26')).stdout, 'deployment.apps/web image updated\n');
    const missing = await cli('set', 'image', 'deploy/web', 'nope=x');
    assert.equal(missing.stderr, 'error: unable to find container named "nope"\n');
    assert.equal((await cli('set', 'env', 'deployment/web', 'A=1', 'B=2')).stdout, 'deployment.apps/web env updated\n');
    assert.equal((await cli('set', 'env', 'deployment/web', 'A-')).stdout, 'deployment.apps/web env updated\n');
    assert.equal((await cli('set', 'env', 'deployment/web', '--list')).stdout, '# Deployment web, container nginx\nB=2\n');
    const d = (await admin.get(deploymentKind, { namespace: ns, name: 'web' })) as unknown as { spec: { template: Pod } };
    assert.equal(d.spec.template.spec.containers[0]!.image, 'nginx:1.26');
    assert.deepEqual(d.spec.template.spec.containers[0]!.env, [{ name: 'B', value: '2' }]);
  });

  test('get -o jsonpath and -o custom-columns', async () => {
    assert.equal((await cli('get', 'pods', '-o', 'jsonpath={.items[*].metadata.name}')).stdout, 'sleeper');
    assert.equal((await cli('get', 'pod', 'sleeper', '-o', 'jsonpath={.spec.containers[?(@.name=="sleeper")].image}')).stdout, 'busybox');
    assert.equal(
      (await cli('get', 'pods', '-o', 'jsonpath={range .items[*]}{.metadata.name}{"\\t"}{.spec.restartPolicy}{"\\n"}{end}')).stdout,
      'sleeper\tNever\n',
    );
    assert.equal(
      (await cli('get', 'pods', '-o', 'custom-columns=NAME:.metadata.name,IMAGE:.spec.containers[*].image,NODE:.spec.nodeName')).stdout,
      'NAME      IMAGE     NODE\nsleeper   busybox   <none>\n',
    );
  });

  test('wait: jsonpath met, condition timing out, delete', async () => {
    assert.deepEqual(await cli('wait', 'pod/sleeper', '--for=jsonpath={.spec.restartPolicy}=Never'), {
      code: 0,
      stdout: 'pod/sleeper condition met\n',
      stderr: '',
    });
    const late = await cli('wait', 'pod/sleeper', '--for=condition=Ready', '--timeout=1s');
    assert.equal(late.code, 1);
    assert.equal(late.stderr, 'error: timed out waiting for the condition on pods/sleeper\n');
    // Waits across a change: whether the label lands before or after its first look, it ends with 'condition met'.
    const waiting = cli('wait', 'pod/sleeper', '--for=jsonpath={.metadata.labels.go}=yes', '--timeout=60s');
    await admin.patch(podKind, { namespace: ns, name: 'sleeper' }, { metadata: { labels: { go: 'yes' } } });
    assert.deepEqual(await waiting, { code: 0, stdout: 'pod/sleeper condition met\n', stderr: '' });

    await admin.create(podKind, { metadata: { name: 'doomed', namespace: ns }, spec: { containers: [{ name: 'c', image: 'busybox' }] } });
    const present = await cli('wait', 'pod/doomed', '--for=delete', '--timeout=1s');
    assert.equal(present.stderr, 'error: timed out waiting for the condition on pods/doomed\n');
    await admin.delete(podKind, { namespace: ns, name: 'doomed' }, { gracePeriodSeconds: 0 });
    // Already gone: kubectl succeeds without a word.
    assert.deepEqual(await cli('wait', 'pod/doomed', '--for=delete', '--timeout=30s'), { code: 0, stdout: '', stderr: '' });
  });

  test('auth can-i, cluster-info, api-versions', async () => {
    assert.deepEqual(await cli('auth', 'can-i', 'create', 'pods'), { code: 0, stdout: 'yes\n', stderr: '' });
    const info = await cli('cluster-info');
    assert.match(info.stdout, new RegExp(`^Kubernetes control plane is running at ${master.url.replace(/\//g, '\\/')}\n`));
    const versions = (await cli('api-versions')).stdout.trim().split('\n');
    assert.ok(versions.includes('v1') && versions.includes('apps/v1'), versions.join(' '));
    assert.deepEqual(versions, [...versions].sort());
  });
});
