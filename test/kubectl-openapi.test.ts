// Stock kubectl against a real TLS master's OpenAPI: explain, apply and create with validation on (the default), unknown fields refused, and minik8s explain.
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { deploymentKind } from '../src/core/api/deployment.js';
import { ApiClient } from '../src/core/client/api-client.js';
import { BINARY, startMaster, type MasterProcess } from './helpers/master.js';

const KUBECTL_VERSION = spawnSync('kubectl', ['version', '--client', '-o', 'json'], { encoding: 'utf8' });

type Run = { code: number; stdout: string; stderr: string };

function run(file: string, args: string[], env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolve) => {
    execFile(file, args, { env, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

const kubectl = (master: MasterProcess, args: string[]) => run('kubectl', ['--kubeconfig', master.kubeconfig!, ...args], { ...process.env, HOME: master.home });
const minik8s = (master: MasterProcess, args: string[]) => run(process.execPath, [BINARY, ...args], master.env);

const deployment = (replicas: number, port: number) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: openapi-web
spec:
  replicas: ${replicas}
  selector:
    matchLabels: {app: openapi-web}
  template:
    metadata:
      labels: {app: openapi-web}
    spec:
      containers:
      - name: web
        image: busybox
        command: [sleep, "3600"]
        ports:
        - containerPort: ${port}
`;

describe('kubectl and the OpenAPI documents', { skip: KUBECTL_VERSION.status !== 0 ? 'kubectl is not on PATH' : false }, () => {
  let master: MasterProcess;
  let dir: string;
  before(async () => {
    console.log(`# kubectl ${JSON.parse(KUBECTL_VERSION.stdout).clientVersion.gitVersion}`);
    dir = mkdtempSync(join(tmpdir(), 'minik8s-openapi-'));
    master = await startMaster({ tls: true, registry: false });
  });
  after(async () => {
    await master?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('kubectl explain pod.spec.containers prints the fields with types and descriptions', async () => {
    const r = await kubectl(master, ['explain', 'pod.spec.containers']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^KIND: {7}Pod\nVERSION: {4}v1\n/);
    assert.match(r.stdout, /FIELD: containers <\[\]Container>/);
    assert.match(r.stdout, /\n {2}image\t<string> -required-\n {4}The container image to run\./);
    assert.match(r.stdout, /\n {2}ports\t<\[\]ContainerPort>\n/);
  });

  test('kubectl explain deployment.spec --recursive prints the tree of fields', async () => {
    const r = await kubectl(master, ['explain', 'deployment.spec', '--recursive']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^GROUP: {6}apps\nKIND: {7}Deployment\nVERSION: {4}v1\n/);
    assert.match(r.stdout, /\n {2}template\t<PodTemplateSpec> -required-\n/);
    assert.match(r.stdout, /\n {6}containers\t<\[\]Container> -required-\n/);
  });

  test('kubectl apply works with validation on, twice (the second a strategic merge), and keeps the container list', async () => {
    const file = join(dir, 'deployment.yaml');
    writeFileSync(file, deployment(1, 80));
    const first = await kubectl(master, ['apply', '-f', file]);
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /deployment\.apps\/openapi-web created/);
    writeFileSync(file, deployment(2, 8080));
    const second = await kubectl(master, ['apply', '-f', file]);
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stdout, /deployment\.apps\/openapi-web configured/);
    const admin = new ApiClient({ server: master.url, token: master.token, tls: { ca: master.ca! } });
    try {
      const stored = (await admin.get(deploymentKind, { name: 'openapi-web', namespace: 'default' })) as unknown as {
        spec: { replicas: number; template: { spec: { containers: { name: string; command: string[]; ports: { containerPort: number }[] }[] } } };
      };
      assert.equal(stored.spec.replicas, 2);
      assert.deepEqual(
        stored.spec.template.spec.containers.map((c) => [c.name, c.command, c.ports.map((p) => p.containerPort)]),
        [['web', ['sleep', '3600'], [8080]]],
      );
    } finally {
      admin.close();
    }
    const deleted = await kubectl(master, ['delete', '-f', file]);
    assert.equal(deleted.code, 0, deleted.stderr);
  });

  test('kubectl create with validation on creates; an unknown field is refused under --validate=strict, dropped with a warning under warn, silently under false', async () => {
    const good = join(dir, 'good.yaml');
    writeFileSync(good, 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: openapi-created\n');
    const created = await kubectl(master, ['create', '-f', good]);
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stdout, /namespace\/openapi-created created/);
    await kubectl(master, ['delete', '-f', good, '--wait=false']);

    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: openapi-bad\nspec:\n  bogus: 1\n  containers:\n  - name: c\n    image: busybox\n');
    const refused = await kubectl(master, ['create', '--validate=strict', '-f', bad]);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /unknown field "spec\.bogus"/);
    const listed = await kubectl(master, ['get', 'pods', '-o', 'name']);
    assert.doesNotMatch(listed.stdout, /openapi-bad/);

    // --validate=warn (fieldValidation=Warn): created without the field, kubectl prints the server's warning.
    const warned = await kubectl(master, ['create', '--validate=warn', '-f', bad]);
    assert.equal(warned.code, 0, warned.stderr);
    assert.match(warned.stderr, /Warning: unknown field "spec\.bogus"/);
    const stored = await kubectl(master, ['get', 'pod', 'openapi-bad', '-o', 'jsonpath={.spec}']);
    assert.equal(stored.code, 0, stored.stderr);
    assert.doesNotMatch(stored.stdout, /bogus/);
    await kubectl(master, ['delete', 'pod', 'openapi-bad', '--grace-period=0', '--wait=false']);
    // --validate=false (fieldValidation=Ignore): created, nothing said.
    const loose = join(dir, 'loose.yaml');
    writeFileSync(loose, 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: openapi-loose\nspec:\n  bogus: 1\n  containers:\n  - name: c\n    image: busybox\n');
    const ignored = await kubectl(master, ['create', '--validate=false', '-f', loose]);
    assert.equal(ignored.code, 0, ignored.stderr);
    assert.match(ignored.stdout, /pod\/openapi-loose created/);
    assert.doesNotMatch(ignored.stderr, /unknown field/);
  });

  test('minik8s explain prints what kubectl explain prints for the same field', async () => {
    const ours = await minik8s(master, ['explain', 'pod.spec.containers']);
    assert.equal(ours.code, 0, ours.stderr);
    const theirs = await kubectl(master, ['explain', 'pod.spec.containers']);
    assert.equal(ours.stdout, theirs.stdout);
    const unknown = await minik8s(master, ['explain', 'pod.spec.nope']);
    assert.notEqual(unknown.code, 0);
    assert.match(unknown.stderr, /field "nope" does not exist/);
  });
});
