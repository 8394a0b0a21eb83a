// Server-side apply with stock kubectl against a real TLS master: conflicts between managers, --force-conflicts, server dry run, fields dropped from the manifest, managedFields shown; client-side apply keeps working beside it.
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { BINARY, startMaster, type MasterProcess } from './helpers/master.js';

const KUBECTL_VERSION = spawnSync('kubectl', ['version', '--client', '-o', 'json'], { encoding: 'utf8' });
const NS = 'kubectl-ssa';
/** kubectl's client-side validation downloads /openapi, which is not served yet: this suite is about apply, not validation. */
const NO_VALIDATE = ['--validate=false'];

type Result = { code: number; stdout: string; stderr: string };

function run(file: string, args: string[], env: NodeJS.ProcessEnv): Promise<Result> {
  return new Promise((resolve) => {
    execFile(file, args, { env, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

function deployment(options: { replicas: number; labels: Record<string, string>; image?: string }): string {
  const labels = Object.entries(options.labels).map(([k, v]) => `    ${k}: ${v}\n`);
  return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: ${NS}
  labels:
${labels.join('')}spec:
  replicas: ${options.replicas}
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: app
        image: ${options.image ?? 'nginx'}
`;
}

describe('kubectl apply --server-side', { skip: KUBECTL_VERSION.status !== 0 ? 'kubectl is not on PATH' : false }, () => {
  let master: MasterProcess;
  let dir: string;
  const kubectl = (args: string[]) => run('kubectl', ['--kubeconfig', master.kubeconfig!, '-n', NS, ...args], { ...process.env, HOME: master.home });
  const minik8s = (args: string[]) => run(process.execPath, [BINARY, ...args], master.env);
  const manifest = (name: string, text: string) => {
    const file = join(dir, name);
    writeFileSync(file, text);
    return file;
  };
  const stored = async () => {
    const r = await kubectl(['get', 'deployment', 'web', '-o', 'json', '--show-managed-fields']);
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout) as {
      metadata: { labels?: Record<string, string>; managedFields?: { manager: string; operation: string }[] };
      spec: { replicas: number; template: { spec: { containers: { image: string }[] } } };
    };
  };

  before(async () => {
    console.log(`# kubectl ${JSON.parse(KUBECTL_VERSION.stdout).clientVersion.gitVersion}`);
    dir = mkdtempSync(join(tmpdir(), 'minik8s-kubectl-ssa-'));
    master = await startMaster({ tls: true, registry: false });
    const ns = await kubectl(['create', 'namespace', NS]);
    assert.equal(ns.code, 0, ns.stderr);
  });
  after(async () => {
    if (master) await kubectl(['delete', 'namespace', NS, '--wait=false']);
    await master?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('a client-side apply, then another manager applying a different .spec.replicas: 409 naming the field and kubectl-client-side-apply', async () => {
    const created = await kubectl(['apply', ...NO_VALIDATE, '-f', manifest('v1.yaml', deployment({ replicas: 1, labels: { team: 'a' } }))]);
    assert.equal(created.code, 0, created.stderr);
    assert.equal(created.stdout.trim(), 'deployment.apps/web created');
    const conflict = await kubectl([
      'apply',
      ...NO_VALIDATE,
      '--server-side',
      '--field-manager=ops',
      '-f',
      manifest('v2.yaml', deployment({ replicas: 3, labels: { team: 'a' } })),
    ]);
    assert.notEqual(conflict.code, 0);
    assert.match(conflict.stderr, /Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using apps\/v1: \.spec\.replicas/);
    assert.equal((await stored()).spec.replicas, 1);
  });

  test('--force-conflicts takes .spec.replicas over', async () => {
    const r = await kubectl(['apply', ...NO_VALIDATE, '--server-side', '--field-manager=ops', '--force-conflicts', '-f', join(dir, 'v2.yaml')]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), 'deployment.apps/web serverside-applied');
    const obj = await stored();
    assert.equal(obj.spec.replicas, 3);
    assert.ok(obj.metadata.managedFields?.some((e) => e.manager === 'ops' && e.operation === 'Apply'));
  });

  test('--dry-run=server answers as the apply would and writes nothing', async () => {
    const r = await kubectl([
      'apply',
      ...NO_VALIDATE,
      '--server-side',
      '--field-manager=ops',
      '--dry-run=server',
      '-f',
      manifest('v3.yaml', deployment({ replicas: 7, labels: { team: 'a' } })),
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), 'deployment.apps/web serverside-applied (server dry run)');
    assert.equal((await stored()).spec.replicas, 3);
  });

  test('a field the manager applied and then leaves out of the manifest disappears', async () => {
    const withTier = await kubectl([
      'apply',
      ...NO_VALIDATE,
      '--server-side',
      '--field-manager=ops',
      '-f',
      manifest('v4.yaml', deployment({ replicas: 3, labels: { team: 'a', tier: 'web' } })),
    ]);
    assert.equal(withTier.code, 0, withTier.stderr);
    assert.deepEqual((await stored()).metadata.labels, { team: 'a', tier: 'web' });
    const without = await kubectl(['apply', ...NO_VALIDATE, '--server-side', '--field-manager=ops', '-f', join(dir, 'v2.yaml')]);
    assert.equal(without.code, 0, without.stderr);
    // team stays: the manifest still sets it.
    assert.deepEqual((await stored()).metadata.labels, { team: 'a' });
  });

  test('get -o yaml --show-managed-fields shows the managers in FieldsV1; without the flag kubectl hides them', async () => {
    const shown = await kubectl(['get', 'deployment', 'web', '-o', 'yaml', '--show-managed-fields']);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /^ {2}managedFields:$/m);
    assert.match(shown.stdout, /^ {2}- apiVersion: apps\/v1\n {4}fieldsType: FieldsV1\n {4}fieldsV1:\n/m);
    assert.match(shown.stdout, /manager: ops\n {4}operation: Apply/);
    // The deployment controller's status writes are its Updates of the status subresource.
    assert.match(shown.stdout, /manager: deployment-controller\n {4}operation: Update\n {4}subresource: status/);
    // kubectl moved what its client-side apply owned to the server-side manager (a JSON patch of managedFields after the first apply).
    assert.doesNotMatch(shown.stdout, /manager: kubectl-client-side-apply/);
    assert.match(shown.stdout, /f:replicas: \{\}/);
    assert.match(shown.stdout, /k:\{"name":"app"\}:/);
    const hidden = await kubectl(['get', 'deployment', 'web', '-o', 'yaml']);
    assert.doesNotMatch(hidden.stdout, /managedFields/);
  });

  test('client-side apply keeps working on the same object, and kubectl apply --server-side with its default manager on a new one', async () => {
    const r = await kubectl(['apply', ...NO_VALIDATE, '-f', manifest('v5.yaml', deployment({ replicas: 3, labels: { team: 'a' }, image: 'nginx:1.27' }))]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), 'deployment.apps/web configured');
    assert.equal((await stored()).spec.template.spec.containers[0]!.image, 'nginx:1.27');
    const other = manifest('other.yaml', deployment({ replicas: 2, labels: { team: 'b' } }).replace('name: web\n', 'name: other\n'));
    const applied = await kubectl(['apply', ...NO_VALIDATE, '--server-side', '-f', other]);
    assert.equal(applied.code, 0, applied.stderr);
    assert.equal(applied.stdout.trim(), 'deployment.apps/other serverside-applied');
    const got = await kubectl([
      'get',
      'deployment',
      'other',
      '-o',
      'jsonpath={.metadata.managedFields[0].manager} {.metadata.managedFields[0].operation}',
      '--show-managed-fields',
    ]);
    assert.equal(got.stdout, 'kubectl Apply');
  });

  test('minik8s apply --server-side --field-manager, with --force-conflicts', async () => {
    const file = manifest('v6.yaml', deployment({ replicas: 4, labels: { team: 'a' }, image: 'nginx:1.27' }));
    const refused = await minik8s(['apply', '--server-side', '--field-manager', 'cli', '-f', file]);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /Apply failed with 1 conflict: conflict with "ops": \.spec\.replicas/);
    const forced = await minik8s(['apply', '--server-side', '--field-manager', 'cli', '--force-conflicts', '-f', file]);
    assert.equal(forced.code, 0, forced.stderr);
    assert.equal(forced.stdout.trim(), 'deployment.apps/web serverside-applied');
    assert.equal((await stored()).spec.replicas, 4);
  });
});
