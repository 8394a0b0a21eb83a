// The kubectl compatibility suite: the everyday commands of issue 16, run with the kubectl on PATH against a TLS master and a real worker, asserted on what kubectl prints and on the stored objects.
import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
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
});
