// Exec, attach and port-forward streams end to end: stock kubectl and the minik8s CLI against a TLS master and a real worker running busybox.
import assert from 'node:assert/strict';
import { execFile, spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { PassThrough } from 'node:stream';
import { Exec, KubeConfig, type V1Status } from '@kubernetes/client-node';
import WebSocket from 'ws';
import { podKind, type Pod } from '../src/core/api/pod.js';
import { ApiClient } from '../src/core/client/api-client.js';
import { waitFor } from '../src/core/wait-for.js';
import { BINARY, freePort, startMaster, type MasterProcess } from './helpers/master.js';
import { startWorker, type WorkerProcess } from './helpers/worker.js';

const HAS_KUBECTL = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).status === 0;
/** Debian's python3 with its python3-kubernetes (not a python earlier on PATH). */
const SYSTEM_PYTHON = '/usr/bin/python3';
const PYTHON_CLIENT = spawnSync(SYSTEM_PYTHON, ['-c', 'import kubernetes; print(kubernetes.__version__)'], { encoding: 'utf8' });
const NS = `streams-${process.pid}`;

type Run = { code: number; stdout: string; stderr: string };

function run(file: string, args: string[], env: NodeJS.ProcessEnv, input?: string): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(file, args, { env, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
    if (input !== undefined) child.stdin!.end(input);
    else child.stdin!.end();
  });
}

describe('exec, attach and port-forward streams', { skip: HAS_KUBECTL ? false : 'kubectl is not on PATH' }, () => {
  let master: MasterProcess;
  let worker: WorkerProcess;
  let admin: ApiClient;
  const kubectl = (args: string[], input?: string) =>
    run('kubectl', ['--kubeconfig', master.kubeconfig!, '-n', NS, ...args], { ...process.env, HOME: master.home }, input);
  const minik8s = (args: string[], input?: string) => run(process.execPath, [BINARY, '-n', NS, ...args], master.env, input);

  before(
    async () => {
      master = await startMaster({ tls: true, seedImages: true });
      worker = await startWorker({ server: master.url, joinToken: master.joinToken });
      admin = new ApiClient({ server: master.url, token: master.token, tls: { ca: master.ca! } });
      await admin.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } });
      const pod = (name: string, command: string[]) =>
        admin.create(podKind, {
          metadata: { name, namespace: NS },
          spec: { nodeName: worker.nodeName, containers: [{ name: 'c', image: 'busybox:1.35', command }] },
        });
      await pod('shell', ['sh', '-c', 'mkdir -p /www && echo hello-through-forward > /www/index.html && httpd -p 8080 -h /www && exec sleep 3600']);
      await pod('ticker', ['sh', '-c', 'i=0; while true; do echo tick $i; i=$((i+1)); sleep 1; done']);
      for (const name of ['shell', 'ticker']) {
        await waitFor(
          async () => {
            const p = (await admin.get(podKind, { namespace: NS, name })) as Pod;
            return p.status?.containerStatuses?.[0]?.state?.running ? p : undefined;
          },
          { timeoutMs: 90_000, description: `pod ${name} to run` },
        );
      }
    },
    { timeout: 180_000 },
  );
  after(async () => {
    await admin?.request('DELETE', `/api/v1/namespaces/${NS}`).catch(() => undefined);
    admin?.close();
    await worker?.destroy();
    await master?.stop();
  });

  test('kubectl exec prints the output of a command', async () => {
    const r = await kubectl(['exec', 'shell', '--', 'sh', '-c', 'echo out; echo err >&2']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'out\n');
    assert.equal(r.stderr, 'err\n');
  });

  test('kubectl exec -i passes piped stdin through to its end', async () => {
    const r = await kubectl(['exec', '-i', 'shell', '--', 'cat'], 'line one\nline two\n');
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'line one\nline two\n');
  });

  test("kubectl exec exits with the command's exit code", async () => {
    const r = await kubectl(['exec', 'shell', '--', 'sh', '-c', 'exit 3']);
    assert.equal(r.code, 3);
    assert.match(r.stderr, /command terminated with exit code 3/);
  });

  test('kubectl exec -it gives the command a terminal (run under script for a pty)', async () => {
    const command = `kubectl --kubeconfig ${master.kubeconfig} -n ${NS} exec -it shell -- sh -c 'tty; stty size'`;
    const r = await run('script', ['-qec', command, '/dev/null'], { ...process.env, HOME: master.home, COLUMNS: '100', LINES: '30' });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /\/dev\/pts\/\d+/);
  });

  test('kubectl attach streams the output of the main process', async () => {
    const child = spawn('kubectl', ['--kubeconfig', master.kubeconfig!, '-n', NS, 'attach', 'ticker'], { env: { ...process.env, HOME: master.home } });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    try {
      await waitFor(() => /tick \d+/.test(out), { timeoutMs: 20_000, description: 'a tick through kubectl attach' });
    } finally {
      child.kill();
    }
  });

  test('@kubernetes/client-node Exec runs a command: separate stdout and stderr, and the exit code in its Status', async () => {
    const kc = new KubeConfig();
    kc.loadFromFile(master.kubeconfig!);
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    let out = '';
    let err = '';
    stdout.on('data', (c: Buffer) => {
      out += c.toString();
    });
    stderr.on('data', (c: Buffer) => {
      err += c.toString();
    });
    const status = await new Promise<V1Status>((resolve, reject) => {
      new Exec(kc).exec(NS, 'shell', 'c', ['sh', '-c', 'echo from-lib; echo to-err >&2; exit 2'], stdout, stderr, null, false, resolve).catch(reject);
    });
    assert.equal(out, 'from-lib\n');
    assert.equal(err, 'to-err\n');
    assert.equal(status.status, 'Failure');
    assert.equal(status.reason, 'NonZeroExitCode');
    assert.deepEqual(status.details?.causes, [{ reason: 'ExitCode', message: '2' }]);
  });

  test("python3-kubernetes' stream() runs a command: stdout and stderr apart, and the exit code from the error channel", {
    skip: PYTHON_CLIENT.status !== 0 ? `${SYSTEM_PYTHON} has no kubernetes module (Debian's python3-kubernetes; .ci/run installs it)` : false,
  }, async () => {
    // The client library's own exec path (WebSocket, v4.channel.k8s.io), as its users call it.
    const script = `
import json, sys
from kubernetes import client, config
from kubernetes.stream import stream
config.load_kube_config(config_file=sys.argv[1])
v1 = client.CoreV1Api()
resp = stream(v1.connect_get_namespaced_pod_exec, "shell", sys.argv[2], container="c",
              command=["sh", "-c", "echo from-python; echo to-err >&2; exit 3"],
              stderr=True, stdin=False, stdout=True, tty=False, _preload_content=False)
resp.run_forever(timeout=30)
print(json.dumps({"stdout": resp.read_stdout(), "stderr": resp.read_stderr(), "code": resp.returncode}))
`;
    const r = await run(SYSTEM_PYTHON, ['-c', script, master.kubeconfig!, NS], { ...process.env, HOME: master.home });
    assert.equal(r.code, 0, `python failed: ${r.stderr}`);
    assert.deepEqual(JSON.parse(r.stdout.trim().split('\n').at(-1)!), { stdout: 'from-python\n', stderr: 'to-err\n', code: 3 });
  });

  test('a node credential cannot exec (403)', async () => {
    const credential = JSON.parse(readFileSync(join(worker.dataDir, 'kubelet', 'node-credential.json'), 'utf8')) as { token: string };
    const url = `${master.url.replace(/^https/, 'wss')}/api/v1/namespaces/${NS}/pods/shell/exec?command=true&stdout=true`;
    const status = await new Promise<number>((resolve, reject) => {
      const ws = new WebSocket(url, ['v5.channel.k8s.io'], { ca: master.ca, headers: { authorization: `Bearer ${credential.token}` } });
      ws.on('unexpected-response', (_req, res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      ws.on('open', () => {
        ws.close();
        reject(new Error('the node credential was let through'));
      });
      ws.on('error', reject);
    });
    assert.equal(status, 403);
  });

  test('minik8s exec streams over the same path: output, stdin and the exit code', async () => {
    const r = await minik8s(['exec', '-i', 'shell', '--', 'sh', '-c', 'cat; exit 4'], 'from the cli\n');
    assert.equal(r.code, 4, r.stderr);
    assert.equal(r.stdout, 'from the cli\n');
    assert.match(r.stderr, /command terminated with exit code 4/);
  });

  test('minik8s port-forward carries an HTTP GET to the pod', async () => {
    const local = await freePort();
    const child = spawn(process.execPath, [BINARY, '-n', NS, 'port-forward', 'pod/shell', `${local}:8080`], { env: master.env });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      out += d.toString();
    });
    try {
      await waitFor(() => out.includes('Forwarding from'), { timeoutMs: 20_000, description: 'port-forward to listen' });
      const body = await (await fetch(`http://127.0.0.1:${local}/index.html`)).text();
      assert.equal(body, 'hello-through-forward\n');
    } finally {
      child.kill();
    }
  });

  test('kubectl exec round trip: p50 of 10 runs of `true`', async () => {
    const times: number[] = [];
    for (let i = 0; i < 10; i++) {
      const start = performance.now();
      const r = await kubectl(['exec', 'shell', '--', 'true']);
      times.push(performance.now() - start);
      assert.equal(r.code, 0, r.stderr);
    }
    times.sort((a, b) => a - b);
    console.log(`# kubectl exec -- true: p50 ${times[4]!.toFixed(0)} ms, min ${times[0]!.toFixed(0)} ms, max ${times[9]!.toFixed(0)} ms`);
  });
});
