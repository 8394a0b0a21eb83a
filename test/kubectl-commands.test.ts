// The kubectl compatibility suite: the everyday commands of issue 16, run with the kubectl on PATH against a TLS master and a real worker, asserted on what kubectl prints and on the stored objects.
import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { podKind, type Pod } from '../src/core/api/pod.js';
import { ApiClient } from '../src/core/client/api-client.js';
import { waitFor } from '../src/core/wait-for.js';
import { freePort, startMaster, type MasterProcess } from './helpers/master.js';
import { startWorker, type WorkerProcess } from './helpers/worker.js';

const VERSION = spawnSync('kubectl', ['version', '--client', '-o', 'json'], { encoding: 'utf8' });
const NS = `kubectl-${process.pid}`;
const IMAGE = 'busybox:1.35';

type Run = { code: number; stdout: string; stderr: string };

/** A long-running kubectl (port-forward, get -w, logs -f): its output so far, and a stop that ends it. */
interface Running {
  output(): string;
  stop(): void;
}

describe('kubectl commands', { skip: VERSION.status !== 0 ? 'kubectl is not on PATH' : false }, () => {
  let master: MasterProcess;
  let worker: WorkerProcess;
  let admin: ApiClient;
  let dir: string;
  const env = () => ({ ...process.env, HOME: master.home });
  const kubectl = (args: string[], options: { input?: string; env?: NodeJS.ProcessEnv } = {}): Promise<Run> =>
    new Promise((resolve) => {
      const child = execFile(
        'kubectl',
        ['--kubeconfig', master.kubeconfig!, '-n', NS, ...args],
        { env: { ...env(), ...options.env }, timeout: 60_000 },
        (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
      );
      child.stdin!.end(options.input);
    });
  /** kubectl that must succeed: its stdout. */
  const ok = async (args: string[], options: { input?: string; env?: NodeJS.ProcessEnv } = {}): Promise<string> => {
    const r = await kubectl(args, options);
    assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  const background = (args: string[], extraEnv: NodeJS.ProcessEnv = {}): Running => {
    const child: ChildProcess = spawn('kubectl', ['--kubeconfig', master.kubeconfig!, '-n', NS, ...args], { env: { ...env(), ...extraEnv } });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr!.on('data', (d: Buffer) => {
      out += d.toString();
    });
    return { output: () => out, stop: () => child.kill() };
  };
  const stored = async (kind: string, name: string) => JSON.parse(await ok(['get', kind, name, '-o', 'json']));
  const manifest = (name: string, text: string) => {
    const file = join(dir, name);
    writeFileSync(file, text);
    return file;
  };
  const waitRunning = (name: string) =>
    waitFor(
      async () => {
        const p = (await admin.get(podKind, { namespace: NS, name })) as Pod;
        return p.status?.containerStatuses?.[0]?.state?.running ? p : undefined;
      },
      { timeoutMs: 90_000, description: `pod ${name} to run` },
    );

  before(
    async () => {
      dir = mkdtempSync(join(tmpdir(), 'minik8s-kubectl-commands-'));
      master = await startMaster({ tls: true, seedImages: true });
      worker = await startWorker({ server: master.url, joinToken: master.joinToken });
      admin = new ApiClient({ server: master.url, token: master.token, tls: { ca: master.ca! } });
      await admin.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } });
      // A web server with a small page and a 1 MiB file, for port-forward.
      await admin.create(podKind, {
        metadata: { name: 'web', namespace: NS, labels: { app: 'web' } },
        spec: {
          nodeName: worker.nodeName,
          containers: [
            {
              name: 'c',
              image: IMAGE,
              command: [
                'sh',
                '-c',
                'mkdir -p /www && echo hello-through-forward > /www/index.html && head -c 1048576 /dev/urandom > /www/big && md5sum /www/big | cut -d" " -f1 > /www/big.md5 && httpd -p 8080 -h /www && exec sleep 3600',
              ],
            },
          ],
        },
      });
      await waitRunning('web');
    },
    { timeout: 180_000 },
  );
  after(async () => {
    await admin?.request('DELETE', `/api/v1/namespaces/${NS}`).catch(() => undefined);
    admin?.close();
    await worker?.destroy();
    await master?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('version: the kubectl that ran, and the server version it reads', async (t) => {
    t.diagnostic(`kubectl ${JSON.parse(VERSION.stdout).clientVersion.gitVersion}`);
    const v = JSON.parse(await ok(['version', '-o', 'json']));
    assert.match(v.clientVersion.gitVersion, /^v1\.\d+/);
    assert.match(v.serverVersion.gitVersion, /^v\d+\.\d+\.\d+/);
    t.diagnostic(`server ${v.serverVersion.gitVersion}`);
  });

  for (const [how, extraEnv] of [
    ['SPDY tunnelled in a WebSocket (the default)', {}],
    ['plain SPDY (KUBECTL_PORT_FORWARD_WEBSOCKETS=false)', { KUBECTL_PORT_FORWARD_WEBSOCKETS: 'false' }],
  ] as const) {
    test(`port-forward over ${how}: curl a page and a 1 MiB file through it`, async () => {
      const local = await freePort();
      const pf = background(['port-forward', 'pod/web', `${local}:8080`], extraEnv);
      try {
        await waitFor(() => pf.output().includes(`Forwarding from 127.0.0.1:${local} -> 8080`), {
          timeoutMs: 20_000,
          description: 'kubectl port-forward to listen',
        });
        const page = spawnSync('curl', ['-sS', '--max-time', '20', `http://127.0.0.1:${local}/index.html`], { encoding: 'utf8' });
        assert.equal(page.status, 0, page.stderr + pf.output());
        assert.equal(page.stdout, 'hello-through-forward\n');
        const md5 = spawnSync('curl', ['-sS', '--max-time', '20', `http://127.0.0.1:${local}/big.md5`], { encoding: 'utf8' }).stdout.trim();
        const big = spawnSync('sh', ['-c', `curl -sS --max-time 30 http://127.0.0.1:${local}/big | md5sum`], { encoding: 'utf8' });
        assert.equal(big.status, 0, big.stderr);
        assert.equal(big.stdout.split(' ')[0], md5);
        assert.match(md5, /^[0-9a-f]{32}$/);
        assert.doesNotMatch(pf.output(), /error|lost connection/i);
      } finally {
        pf.stop();
      }
    });
  }
  test('discovery and config: cluster-info, api-versions, api-resources, config view, auth can-i (--list)', async () => {
    assert.match(await ok(['cluster-info']), /Kubernetes control plane\S* is running at \S*https:\/\/127\.0\.0\.1:\d+/);
    const versions = (await ok(['api-versions'])).trim().split('\n');
    for (const v of ['v1', 'apps/v1', 'coordination.k8s.io/v1', 'discovery.k8s.io/v1', 'authorization.k8s.io/v1']) assert.ok(versions.includes(v), v);
    const resources = await ok(['api-resources']);
    assert.match(resources, /^NAME\s+SHORTNAMES\s+APIVERSION\s+NAMESPACED\s+KIND$/m);
    assert.match(resources, /^pods\s+po\s+v1\s+true\s+Pod$/m);
    assert.match(resources, /^deployments\s+deploy\s+apps\/v1\s+true\s+Deployment$/m);
    // config view hides the credentials (DATA+OMITTED / REDACTED), as kubectl does; --raw shows them.
    const view = await ok(['config', 'view']);
    assert.match(view, /server: https:\/\/127\.0\.0\.1:\d+/);
    assert.doesNotMatch(view, new RegExp(master.token));
    assert.match(view, /DATA\+OMITTED|REDACTED/);
    assert.equal((await ok(['auth', 'can-i', 'create', 'pods'])).trim(), 'yes');
    const list = await ok(['auth', 'can-i', '--list']);
    assert.match(list, /^Resources\s+Non-Resource URLs\s+Resource Names\s+Verbs$/m);
    assert.match(list, /^\*\.\*\s+\[\]\s+\[\]\s+\[\*\]$/m);
  });

  test('create deployment, rollout status, scale, set env, rollout history and undo, set image, describe, get -o wide', async () => {
    assert.equal((await ok(['create', 'deployment', 'app', `--image=${IMAGE}`, '--', 'sleep', '3600'])).trim(), 'deployment.apps/app created');
    const rolledOut = /deployment "app" successfully rolled out/;
    assert.match(await ok(['rollout', 'status', 'deployment/app', '--timeout=120s']), rolledOut);
    assert.equal((await ok(['scale', 'deployment/app', '--replicas=2'])).trim(), 'deployment.apps/app scaled');
    assert.match(await ok(['rollout', 'status', 'deployment/app', '--timeout=120s']), rolledOut);
    assert.equal((await stored('deployment', 'app')).spec.replicas, 2);
    assert.equal((await ok(['set', 'env', 'deployment/app', 'GREETING=hi'])).trim(), 'deployment.apps/app env updated');
    assert.match(await ok(['rollout', 'status', 'deployment/app', '--timeout=120s']), rolledOut);
    assert.deepEqual((await stored('deployment', 'app')).spec.template.spec.containers[0].env, [{ name: 'GREETING', value: 'hi' }]);
    const history = await ok(['rollout', 'history', 'deployment/app']);
    assert.match(history, /^REVISION\s+CHANGE-CAUSE$/m);
    assert.match(history, /^1\s+<none>$/m);
    assert.match(history, /^2\s+<none>$/m);
    assert.equal((await ok(['rollout', 'undo', 'deployment/app'])).trim(), 'deployment.apps/app rolled back');
    assert.match(await ok(['rollout', 'status', 'deployment/app', '--timeout=120s']), rolledOut);
    assert.equal((await stored('deployment', 'app')).spec.template.spec.containers[0].env, undefined);
    const wide = await ok(['get', 'deployment', 'app', '-o', 'wide']);
    assert.match(wide, /^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE\s+CONTAINERS\s+IMAGES\s+SELECTOR$/m);
    assert.match(wide, new RegExp(`^app\\s+2/2\\s+2\\s+2\\s+\\S+\\s+busybox\\s+${IMAGE.replace('.', '\\.')}\\s+app=app$`, 'm'));
    const described = await ok(['describe', 'deployment', 'app']);
    assert.match(described, /^Name:\s+app$/m);
    assert.match(described, /^Replicas:\s+2 desired \| 2 updated \| 2 total \| 2 available \| 0 unavailable$/m);
    assert.match(described, /^NewReplicaSet:\s+app-\w+ \(2\/2 replicas created\)$/m);
    const pods = await ok(['get', 'pods', '-l', 'app=app', '-o', 'wide']);
    assert.match(pods, /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\s+IP\s+NODE\s+NOMINATED NODE\s+READINESS GATES$/m);
    assert.equal(
      pods.split('\n').filter((l) => new RegExp(`^app-\\S+\\s+1/1\\s+Running\\s+0\\s+\\S+\\s+[\\d.]+\\s+${worker.nodeName}\\s+<none>\\s+<none>$`).test(l))
        .length,
      2,
    );
    // The image is only checked as stored: no other busybox tag is on this machine to roll out to.
    assert.equal((await ok(['set', 'image', 'deployment/app', 'busybox=busybox:1.36'])).trim(), 'deployment.apps/app image updated');
    assert.equal((await stored('deployment', 'app')).spec.template.spec.containers[0].image, 'busybox:1.36');
    assert.equal((await ok(['delete', 'deployment', 'app'])).trim(), 'deployment.apps "app" deleted');
    const gone = await kubectl(['get', 'deployment', 'app']);
    assert.equal(gone.code, 1);
    assert.equal(gone.stderr.trim(), 'Error from server (NotFound): deployments.apps "app" not found');
  });

  test('label, annotate, patch (strategic, merge, json), diff, apply --dry-run=server, edit, apply --server-side', async () => {
    const text = (replicas: number) =>
      `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: pat\nspec:\n  replicas: ${replicas}\n  selector:\n    matchLabels: {app: pat}\n  template:\n    metadata:\n      labels: {app: pat}\n    spec:\n      containers:\n      - name: c\n        image: ${IMAGE}\n        command: [sleep, '3600']\n        ports:\n        - containerPort: 80\n`;
    assert.equal((await ok(['apply', '-f', manifest('pat.yaml', text(0))])).trim(), 'deployment.apps/pat created');
    assert.equal((await ok(['label', 'deployment', 'pat', 'tier=backend'])).trim(), 'deployment.apps/pat labeled');
    assert.equal((await ok(['annotate', 'deployment', 'pat', 'note=first'])).trim(), 'deployment.apps/pat annotated');
    // Strategic: the container is merged by name, so its command and ports stay.
    const strategic = '{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"busybox:latest"}]}}}}';
    assert.equal((await ok(['patch', 'deployment', 'pat', '-p', strategic])).trim(), 'deployment.apps/pat patched');
    let d = await stored('deployment', 'pat');
    assert.equal(d.spec.template.spec.containers[0].image, 'busybox:latest');
    assert.deepEqual(d.spec.template.spec.containers[0].ports, [{ containerPort: 80, protocol: 'TCP' }]);
    assert.deepEqual(d.spec.template.spec.containers[0].command, ['sleep', '3600']);
    assert.equal(d.metadata.labels.tier, 'backend');
    assert.equal(d.metadata.annotations.note, 'first');
    await ok(['patch', 'deployment', 'pat', '--type=merge', '-p', '{"metadata":{"labels":{"tier":null}}}']);
    await ok(['patch', 'deployment', 'pat', '--type=json', '-p', '[{"op":"add","path":"/metadata/annotations/json","value":"yes"}]']);
    d = await stored('deployment', 'pat');
    assert.equal(d.metadata.labels?.tier, undefined);
    assert.equal(d.metadata.annotations.json, 'yes');
    // diff and a server dry run see the change and write nothing.
    const changed = manifest('pat-3.yaml', text(3));
    const diff = await kubectl(['diff', '-f', changed]);
    assert.equal(diff.code, 1, diff.stderr);
    assert.match(diff.stdout, /^- {2}replicas: 0$/m);
    assert.match(diff.stdout, /^\+ {2}replicas: 3$/m);
    assert.equal((await ok(['apply', '--dry-run=server', '-f', changed])).trim(), 'deployment.apps/pat configured (server dry run)');
    assert.equal((await stored('deployment', 'pat')).spec.replicas, 0);
    // edit: the editor is a script that changes the annotation in the file kubectl hands it.
    const editor = join(dir, 'editor.sh');
    writeFileSync(editor, '#!/bin/sh\nsed -i "s/note: first/note: edited/" "$1"\n');
    chmodSync(editor, 0o755);
    assert.equal((await ok(['edit', 'deployment/pat'], { env: { KUBE_EDITOR: editor } })).trim(), 'deployment.apps/pat edited');
    assert.equal((await stored('deployment', 'pat')).metadata.annotations.note, 'edited');
    // Server-side apply of a new object, with kubectl's own field manager.
    const ssa = manifest('ssa.yaml', text(0).replaceAll('pat', 'ssa'));
    assert.equal((await ok(['apply', '--server-side', '-f', ssa])).trim(), 'deployment.apps/ssa serverside-applied');
    const managers = JSON.parse(await ok(['get', 'deployment', 'ssa', '-o', 'json', '--show-managed-fields'])).metadata.managedFields?.map(
      (m: { manager: string; operation: string }) => `${m.manager}/${m.operation}`,
    );
    assert.ok(managers?.includes('kubectl/Apply'), String(managers));
    assert.match(await ok(['delete', '-f', ssa, '-f', changed]), /deployment\.apps "ssa" deleted\ndeployment\.apps "pat" deleted/);
  });

  test('run, get -w, wait, logs -f, exec, describe pod, events, top', async () => {
    const watch = background(['get', 'pods', '-w', '-l', 'run=ticker']);
    try {
      const cmd = ['run', 'ticker', `--image=${IMAGE}`, '--', 'sh', '-c', 'i=0; while true; do echo tick $i; i=$((i+1)); sleep 1; done'];
      assert.equal((await ok(cmd)).trim(), 'pod/ticker created');
      assert.equal((await ok(['wait', '--for=condition=Ready', 'pod/ticker', '--timeout=90s'])).trim(), 'pod/ticker condition met');
      await waitFor(() => /^ticker\s+1\/1\s+Running\s+0\s+\S+$/m.test(watch.output()), { timeoutMs: 20_000, description: 'get -w to show ticker Running' });
      assert.match(watch.output(), /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE$/m);
    } finally {
      watch.stop();
    }
    const logs = background(['logs', '-f', 'ticker']);
    try {
      await waitFor(() => /^tick 3$/m.test(logs.output()), { timeoutMs: 20_000, description: 'logs -f to follow to tick 3' });
    } finally {
      logs.stop();
    }
    assert.equal(await ok(['exec', 'ticker', '--', 'sh', '-c', 'echo $((6*7))']), '42\n');
    const described = await ok(['describe', 'pod', 'ticker']);
    assert.match(described, /^Name:\s+ticker$/m);
    assert.match(described, new RegExp(`^Node:\\s+${worker.nodeName}/`, 'm'));
    assert.match(described, /^Status:\s+Running$/m);
    const events = await waitFor(
      async () => {
        const out = await ok(['events', '--for', 'pod/ticker']);
        return /Started/.test(out) ? out : undefined;
      },
      { timeoutMs: 30_000, description: "the ticker pod's Started event" },
    );
    assert.match(events, /^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE$/m);
    assert.match(events, /Normal\s+Started\s+Pod\/ticker\s/);
    const top = await waitFor(
      async () => {
        const r = await kubectl(['top', 'pod', 'ticker']);
        return r.code === 0 ? r.stdout : undefined;
      },
      { timeoutMs: 60_000, description: 'kubectl top pod to answer' },
    );
    assert.match(top, /^NAME\s+CPU\(cores\)\s+MEMORY\(bytes\)\s*$/m);
    assert.match(top, /^ticker\s+\d+m\s+\d+Mi\s*$/m);
  });

  test('cordon, uncordon and drain the worker (last: it evicts the pods)', async () => {
    const node = worker.nodeName;
    assert.equal((await ok(['cordon', node])).trim(), `node/${node} cordoned`);
    assert.equal((await stored('node', node)).spec.unschedulable, true);
    assert.match(await ok(['get', 'nodes']), new RegExp(`^${node}\\s+Ready,SchedulingDisabled\\s`, 'm'));
    assert.equal((await ok(['uncordon', node])).trim(), `node/${node} uncordoned`);
    assert.equal((await stored('node', node)).spec.unschedulable, undefined);
    const drained = await ok(['drain', node, '--force', '--ignore-daemonsets', '--grace-period=1', '--timeout=90s']);
    assert.match(drained, new RegExp(`^node/${node} drained$`, 'm'));
    assert.match(drained, /^pod\/web evicted$/m);
    await waitFor(async () => !/pod\/(web|ticker)\n/.test(await ok(['get', 'pods', '-o', 'name'])), {
      timeoutMs: 60_000,
      description: 'the evicted pods to be gone',
    });
    await ok(['uncordon', node]);
  });
});
