// Stock kubectl against a real master over TLS with DATA_DIR/admin.kubeconfig: what its users type, asserted on what it prints and on what the server stored.
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { endpointsKind } from '../src/core/api/endpoints.js';
import { podKind } from '../src/core/api/pod.js';
import { serviceKind } from '../src/core/api/service.js';
import { waitFor } from '../src/core/wait-for.js';
import { ApiClient } from '../src/core/client/api-client.js';
import { BINARY, startMaster, type MasterProcess } from './helpers/master.js';

const KUBECTL_VERSION = spawnSync('kubectl', ['version', '--client', '-o', 'json'], { encoding: 'utf8' });

/** The minik8s CLI's exit code and output, against the same master. */
function minik8s(master: MasterProcess, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BINARY, ...args], { env: master.env, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

/** kubectl's exit code and output; never throws, so tests assert on what a user would see. */
function kubectl(master: MasterProcess, args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      'kubectl',
      ['--kubeconfig', master.kubeconfig!, ...args],
      { env: { ...process.env, HOME: master.home }, timeout: 60_000 },
      (err, stdout, stderr) => {
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
      },
    );
    if (input !== undefined) child.stdin!.end(input);
  });
}

describe('stock kubectl', { skip: KUBECTL_VERSION.status !== 0 ? 'kubectl is not on PATH' : false }, () => {
  let master: MasterProcess;
  let dir: string;
  before(async () => {
    const version = JSON.parse(KUBECTL_VERSION.stdout).clientVersion.gitVersion;
    console.log(`# kubectl ${version}`);
    dir = mkdtempSync(join(tmpdir(), 'minik8s-kubectl-'));
    master = await startMaster({ tls: true, registry: false });
  });
  after(async () => {
    await master?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('prints the kind in a validation error, as the API server names it: The Pod "bad" is invalid', async () => {
    const file = join(dir, 'bad-pod.yaml');
    writeFileSync(
      file,
      'apiVersion: v1\nkind: Pod\nmetadata:\n  name: bad\nspec:\n  containers:\n  - name: c\n    image: busybox\n  restartPolicy: Sometimes\n',
    );
    const r = await kubectl(master, ['create', '--validate=false', '-f', file]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /^The Pod "bad" is invalid: /m);
    const listed = await kubectl(master, ['get', 'pods', '-o', 'name']);
    assert.doesNotMatch(listed.stdout, /pod\/bad/);
  });

  test("get prints the server's Table columns, the same as minik8s get prints (pods, -o wide, nodes, services)", async () => {
    const admin = new ApiClient({ server: master.url, token: master.token, tls: { ca: master.ca! } });
    try {
      await admin.create(podKind, { metadata: { name: 'table-pod', namespace: 'default' }, spec: { containers: [{ name: 'c', image: 'busybox' }] } });
    } finally {
      admin.close();
    }
    for (const args of [
      ['get', 'pods'],
      ['get', 'pods', '-o', 'wide'],
      ['get', 'namespaces'],
      ['get', 'services', '-A'],
    ]) {
      const theirs = await kubectl(master, args);
      const ours = await minik8s(master, args);
      assert.equal(theirs.code, 0, theirs.stderr);
      assert.equal(ours.code, 0, ours.stderr);
      const header = (out: string) =>
        out
          .split('\n')[0]!
          .trim()
          .split(/\s{2,}/);
      assert.deepEqual(header(theirs.stdout), header(ours.stdout), args.join(' '));
      assert.doesNotMatch(theirs.stderr, /Falling back|hardcoded/i, args.join(' '));
    }
    const pods = await kubectl(master, ['get', 'pods']);
    assert.match(pods.stdout, /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE$/m);
    assert.match(pods.stdout, /^table-pod\s+0\/1\s+Pending\s+0\s+\S+$/m);
  });

  test('EndpointSlices mirror Endpoints: kubectl get endpointslices and describe svc show the addresses', async () => {
    const admin = new ApiClient({ server: master.url, token: master.token, tls: { ca: master.ca! } });
    try {
      // A Service without a selector and Endpoints of the user's own, as for an outside database.
      await admin.create(serviceKind, { metadata: { name: 'db', namespace: 'default' }, spec: { ports: [{ port: 5432 }] } });
      await admin.create(endpointsKind, {
        metadata: { name: 'db', namespace: 'default' },
        subsets: [{ addresses: [{ ip: '192.0.2.10' }], ports: [{ port: 5432, protocol: 'TCP' }] }],
      });
    } finally {
      admin.close();
    }
    const slices = await waitFor(
      async () => {
        const r = await kubectl(master, ['get', 'endpointslices', '-l', 'kubernetes.io/service-name=db']);
        return /192\.0\.2\.10/.test(r.stdout) ? r.stdout : undefined;
      },
      { timeoutMs: 30_000, description: "the db Service's EndpointSlice" },
    );
    assert.match(slices, /^NAME\s+ADDRESSTYPE\s+PORTS\s+ENDPOINTS\s+AGE$/m);
    assert.match(slices, /^db-[0-9a-f]{5}\s+IPv4\s+5432\s+192\.0\.2\.10\s+\S+$/m);
    const described = await kubectl(master, ['describe', 'service', 'db']);
    assert.equal(described.code, 0, described.stderr);
    assert.match(described.stdout, /^Endpoints:\s+192\.0\.2\.10:5432$/m);
  });

  test('typed creates send protobuf bodies and work: create namespace, secret generic, deployment, service clusterip; run', async () => {
    const created: [string[], string][] = [
      [['create', 'namespace', 'pb-ns'], 'namespace/pb-ns created'],
      [['create', 'secret', 'generic', 'pb-secret', '--from-literal=user=admin', '--from-literal=pass=s3cr3t'], 'secret/pb-secret created'],
      [['create', 'deployment', 'pb-deploy', '--image=busybox', '--replicas=2', '--port=80'], 'deployment.apps/pb-deploy created'],
      [['create', 'service', 'clusterip', 'pb-svc', '--tcp=80:8080'], 'service/pb-svc created'],
      [['run', 'pb-pod', '--image=busybox', '--env=A=B', '--labels=app=pb', '--', 'sleep', '100'], 'pod/pb-pod created'],
    ];
    for (const [args, line] of created) {
      const r = await kubectl(master, args);
      assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
      assert.equal(r.stdout.trim(), line);
    }
    const get = async (args: string[]) => {
      const r = await kubectl(master, ['get', ...args]);
      assert.equal(r.code, 0, r.stderr);
      return r.stdout;
    };
    assert.equal(await get(['namespace', 'pb-ns', '-o', 'jsonpath={.metadata.name}']), 'pb-ns');
    // Stored base64, as Kubernetes stores Secret data; read back as kubectl users do.
    assert.equal(await get(['secret', 'pb-secret', '-o', 'jsonpath={.data.pass}']), Buffer.from('s3cr3t').toString('base64'));
    assert.equal(await get(['secret', 'pb-secret', '-o', 'jsonpath={.data.user}']), Buffer.from('admin').toString('base64'));
    const deploy = JSON.parse(await get(['deployment', 'pb-deploy', '-o', 'json']));
    assert.equal(deploy.spec.replicas, 2);
    assert.deepEqual(deploy.spec.selector, { matchLabels: { app: 'pb-deploy' } });
    assert.equal(deploy.spec.template.spec.containers[0].image, 'busybox');
    assert.equal(deploy.spec.template.spec.containers[0].ports[0].containerPort, 80);
    const svc = JSON.parse(await get(['service', 'pb-svc', '-o', 'json']));
    assert.equal(svc.spec.type, 'ClusterIP');
    assert.deepEqual(svc.spec.selector, { app: 'pb-svc' });
    assert.deepEqual(
      svc.spec.ports.map((p: { name: string; port: number; targetPort: number; protocol: string }) => [p.name, p.port, p.targetPort, p.protocol]),
      [['80-8080', 80, 8080, 'TCP']],
    );
    assert.match(svc.spec.clusterIP, /^\d+\.\d+\.\d+\.\d+$/);
    const pod = JSON.parse(await get(['pod', 'pb-pod', '-o', 'json']));
    assert.deepEqual(pod.metadata.labels, { app: 'pb' });
    assert.deepEqual(pod.spec.containers[0].args, ['sleep', '100']);
    assert.deepEqual(pod.spec.containers[0].env, [{ name: 'A', value: 'B' }]);
  });

  test('auth can-i asks the server with a SelfSubjectAccessReview (sent as protobuf)', async () => {
    const r = await kubectl(master, ['auth', 'can-i', 'delete', 'nodes', '-v=8']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), 'yes');
    assert.match(r.stderr, /POST https:\/\/\S+\/apis\/authorization\.k8s\.io\/v1\/selfsubjectaccessreviews\n/);
    assert.match(r.stderr, /Content-Type: application\/vnd\.kubernetes\.protobuf/);
    assert.match(r.stderr, /Response Status: 201 Created/);
  });

  describe('ConfigMaps', () => {
    test('create configmap from literals and a file, get cm columns and data, immutable refused with the API wording', async () => {
      const file = join(dir, 'app.conf');
      writeFileSync(file, 'mode=fast\n');
      const created = await kubectl(master, ['create', 'configmap', 'kc-cm', '--from-literal=greeting=hi', `--from-file=${file}`]);
      assert.equal(created.code, 0, created.stderr);
      assert.equal(created.stdout, 'configmap/kc-cm created\n');
      const table = await kubectl(master, ['get', 'cm', 'kc-cm']);
      assert.match(table.stdout, /^NAME\s+DATA\s+AGE\nkc-cm\s+2\s+\S+\n$/);
      const data = await kubectl(master, ['get', 'configmap', 'kc-cm', '-o', 'jsonpath={.data.greeting} {.data.app\\.conf}']);
      assert.equal(data.stdout, 'hi mode=fast\n');
      const immutable = await kubectl(master, ['create', 'configmap', 'kc-fixed', '--from-literal=a=1']);
      assert.equal(immutable.code, 0, immutable.stderr);
      assert.equal((await kubectl(master, ['patch', 'cm', 'kc-fixed', '-p', '{"immutable":true}'])).code, 0);
      const refused = await kubectl(master, ['patch', 'cm', 'kc-fixed', '-p', '{"data":{"a":"2"}}']);
      assert.notEqual(refused.code, 0);
      assert.match(refused.stderr, /The ConfigMap "kc-fixed" is invalid: data: Forbidden: field is immutable when `immutable` is set/);
      const mine = await minik8s(master, ['get', 'configmap', 'kc-cm']);
      assert.match(mine.stdout, /^NAME\s+DATA\s+AGE\nkc-cm\s+2\s+\S+\n$/, 'minik8s get prints the same columns');
    });
  });

  describe('Jobs, CronJobs, DaemonSets and PodDisruptionBudgets', () => {
    test('create job and create cronjob (protobuf bodies) store what Kubernetes would, and get prints kubectl columns for all four kinds', async () => {
      const job = await kubectl(master, ['create', 'job', 'kc-job', '--image=busybox:1.35', '--', 'echo', 'hi']);
      assert.equal(job.code, 0, job.stderr);
      assert.equal(job.stdout, 'job.batch/kc-job created\n');
      const stored = JSON.parse((await kubectl(master, ['get', 'job', 'kc-job', '-o', 'json'])).stdout);
      assert.equal(stored.spec.backoffLimit, 6);
      assert.equal(stored.spec.completions, 1);
      assert.equal(stored.spec.template.spec.restartPolicy, 'Never');
      assert.equal(stored.spec.selector.matchLabels['batch.kubernetes.io/controller-uid'], stored.metadata.uid, 'the generated selector');
      assert.deepEqual(stored.spec.template.spec.containers[0].command, ['echo', 'hi']);

      const cron = await kubectl(master, ['create', 'cronjob', 'kc-cron', '--image=busybox:1.35', '--schedule=*/5 * * * *', '--', 'date']);
      assert.equal(cron.code, 0, cron.stderr);
      assert.equal(cron.stdout, 'cronjob.batch/kc-cron created\n');

      const manifest = join(dir, 'ds-pdb.yaml');
      writeFileSync(
        manifest,
        [
          'apiVersion: apps/v1',
          'kind: DaemonSet',
          'metadata: {name: kc-agent}',
          'spec:',
          '  selector: {matchLabels: {app: kc-agent}}',
          '  template:',
          '    metadata: {labels: {app: kc-agent}}',
          '    spec: {containers: [{name: agent, image: busybox:1.35}]}',
          '---',
          'apiVersion: policy/v1',
          'kind: PodDisruptionBudget',
          'metadata: {name: kc-pdb}',
          'spec: {minAvailable: 1, selector: {matchLabels: {app: kc-agent}}}',
          '',
        ].join('\n'),
      );
      const applied = await kubectl(master, ['apply', '-f', manifest]);
      assert.equal(applied.code, 0, applied.stderr);
      assert.equal(applied.stdout, 'daemonset.apps/kc-agent created\npoddisruptionbudget.policy/kc-pdb created\n');

      const header = async (args: string[]) =>
        (await kubectl(master, args)).stdout
          .split('\n')[0]!
          .trim()
          .split(/\s{2,}/);
      assert.deepEqual(await header(['get', 'jobs']), ['NAME', 'STATUS', 'COMPLETIONS', 'DURATION', 'AGE']);
      assert.deepEqual(await header(['get', 'cronjobs']), ['NAME', 'SCHEDULE', 'TIMEZONE', 'SUSPEND', 'ACTIVE', 'LAST SCHEDULE', 'AGE']);
      assert.deepEqual(await header(['get', 'ds']), ['NAME', 'DESIRED', 'CURRENT', 'READY', 'UP-TO-DATE', 'AVAILABLE', 'NODE SELECTOR', 'AGE']);
      assert.deepEqual(await header(['get', 'pdb']), ['NAME', 'MIN AVAILABLE', 'MAX UNAVAILABLE', 'ALLOWED DISRUPTIONS', 'AGE']);
      const rows = (await kubectl(master, ['get', 'cronjobs', 'kc-cron'])).stdout;
      assert.match(rows, /\nkc-cron\s+\*\/5 \* \* \* \*\s+<none>\s+False\s+0\s+<none>\s+\S+\n$/);
    });
  });
});
