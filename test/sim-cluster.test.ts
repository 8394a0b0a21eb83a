// scripts/sim-cluster.sh end to end: `up 2` leaves a running two-machine cluster the CLI can use through the config it prints, a second `up` is refused, and `down` removes everything it made (netns, links, processes by PID, mounts, the iptables rule, its state).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Node } from '../src/core/api/node.js';
import { waitFor } from '../src/core/wait-for.js';
import { iptablesRuleExists, linkExists, netnsExists, netnsSkipReason } from '../scripts/sim/host-commands.js';
import { isRunning, procStat, readPidFile } from '../scripts/sim/processes.js';
import { mountsUnder } from '../scripts/sim/undo-actions.js';
import { BINARY } from './helpers/master.js';

const SCRIPT = fileURLToPath(new URL('../../scripts/sim-cluster.sh', import.meta.url));
const run = promisify(execFile);
const skip = netnsSkipReason();

/** What this test reads of the state `up` leaves in cluster.json. */
interface SimState {
  bridge: string;
  forwardRule: string[];
  master: { dataDir: string; pid: number; startTime: string };
  nodes: { name: string; netns: string; veth: string; dir: string; dockerdPid: number; dockerdStartTime: string; workerPid: number; workerStartTime: string }[];
}

describe('scripts/sim-cluster.sh: up 2, use it, down', { skip }, () => {
  const name = `t${randomBytes(2).toString('hex')}`;
  // The CLI must get server and token from the printed config alone: nothing from this process's environment or HOME.
  const home = mkdtempSync(join(tmpdir(), 'minik8s-sim-test-home-'));
  const { MINIK8S_SERVER: _s, MINIK8S_TOKEN: _t, MINIK8S_CONFIG: _c, ...baseEnv } = process.env;
  // The suite runs what `npm test` built; a build here would race other work on the tree.
  const env = { ...baseEnv, HOME: home, MINIK8S_SIM_NO_BUILD: '1' };
  let upOutput = '';
  let config = '';
  let root = '';
  let downDone = false;

  const sim = async (...args: string[]) => {
    try {
      const { stdout, stderr } = await run('bash', [SCRIPT, ...args, '--name', name], { env, timeout: 20 * 60_000, maxBuffer: 16 * 1024 * 1024 });
      return { code: 0, stdout, stderr };
    } catch (err) {
      const e = err as { code?: number; stdout?: string; stderr?: string };
      return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
    }
  };
  const cli = (...args: string[]) =>
    spawnSync(process.execPath, [BINARY, ...args], { env: { ...env, MINIK8S_CONFIG: config }, encoding: 'utf8', timeout: 60_000 });

  // The timeout is a backstop: only a first build of the base images (minutes) takes long.
  before(
    async () => {
      const r = await sim('up', '2');
      upOutput = r.stdout;
      assert.equal(r.code, 0, `up exited ${r.code}:\n${r.stdout}\n${r.stderr}`);
      config = /export MINIK8S_CONFIG=(\S+)/.exec(r.stdout)?.[1] ?? '';
      assert.ok(config, `up printed no config:\n${r.stdout}`);
      root = dirname(config);
    },
    { timeout: 20 * 60_000 },
  );

  after(
    async () => {
      // Whatever failed above, the cluster must not outlive the test.
      if (!downDone && existsSync(join(process.env.MINIK8S_SIM_DIR || '/var/lib/minik8s-sim', name))) await sim('down');
      rmSync(home, { recursive: true, force: true });
    },
    { timeout: 120_000 },
  );

  it('prints progress, the nodes and how to use and remove it', () => {
    for (const line of [
      'bridge mk8s-',
      // HTTPS by default (API and activator), with the CA and admin credentials in admin.kubeconfig.
      'master ready at https://',
      'functions and workflows at https://',
      '/admin.kubeconfig',
      `machine ${name}-1 up`,
      `node ${name}-2 Ready`,
      `cluster "${name}" is up`,
      'minik8s get nodes -o wide',
      `sim-cluster.sh down --name ${name}`,
    ]) {
      assert.ok(upOutput.includes(line), `"${line}" missing from:\n${upOutput}`);
    }
  });

  it('leaves two Ready nodes that the CLI lists with the printed config, each with its own address and host name', () => {
    const r = cli('get', 'nodes', '-o', 'wide');
    assert.equal(r.status, 0, r.stderr);
    const rows = r.stdout.trim().split('\n').slice(1);
    assert.equal(rows.length, 2, r.stdout);
    for (const i of [1, 2]) assert.match(r.stdout, new RegExp(`^${name}-${i}\\s+Ready\\s.*\\s10\\.123\\.\\d+\\.${10 + i}\\s`, 'm'));
    const node = JSON.parse(cli('get', 'node', `${name}-2`, '-o', 'json').stdout) as Node;
    assert.deepEqual(
      node.status.addresses!.find((a) => a.type === 'Hostname'),
      { type: 'Hostname', address: `${name}-2` },
    );
    assert.equal(node.metadata.labels!['kubernetes.io/hostname'], `${name}-2`);
  });

  it("runs a pod on a machine, its image pulled from the master's registry by that machine's engine", async () => {
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'hello', namespace: 'default' },
      spec: { nodeName: `${name}-2`, containers: [{ name: 'app', image: 'busybox:1.35', command: ['sh', '-c', 'echo hello; exec sleep 3600'] }] },
    };
    const created = spawnSync(process.execPath, [BINARY, 'apply', '-f', '-'], {
      env: { ...env, MINIK8S_CONFIG: config },
      input: JSON.stringify(pod),
      encoding: 'utf8',
    });
    assert.equal(created.status, 0, created.stderr);
    await waitFor(() => / Running /.test(cli('get', 'pod', 'hello').stdout), { timeoutMs: 60_000, intervalMs: 500, description: 'pod hello to run' });
    await waitFor(() => cli('logs', 'hello').stdout === 'hello\n', { timeoutMs: 15_000, intervalMs: 200, description: 'the log of pod hello' });
  });

  it('restarts the master in place: the same URL serves again, the pod runs on, and the nodes stay Ready', async () => {
    const restart = await sim('restart-master');
    assert.equal(restart.code, 0, restart.stdout + restart.stderr);
    assert.match(restart.stdout, /sim-cluster: stopping the master \(pid \d+\)/);
    assert.match(restart.stdout, /sim-cluster: master serving again at https:\/\/10\.123\.\d+\.1:\d+ \(pid \d+\)/);
    await waitFor(() => / Running /.test(cli('get', 'pod', 'hello').stdout), {
      timeoutMs: 30_000,
      intervalMs: 500,
      description: 'pod hello after the restart',
    });
    await waitFor(
      () => {
        const rows = cli('get', 'nodes').stdout.trim().split('\n').slice(1);
        return rows.length === 2 && rows.every((r) => /\sReady\s/.test(r));
      },
      { timeoutMs: 60_000, intervalMs: 500, description: 'both nodes Ready after the restart' },
    );
  });

  it('tells what runs (status), prints export lines (env), and refuses a second up of the same name', async () => {
    const status = await sim('status');
    assert.equal(status.code, 0, status.stdout + status.stderr);
    assert.match(status.stdout, new RegExp(`${name}-1\\s+10\\.123\\.\\d+\\.11\\s+mk8s-${name}-1\\s+running \\(pid \\d+\\)\\s+running \\(pid \\d+\\)\\s+Ready`));
    const e = await sim('env');
    assert.equal(e.code, 0, e.stderr);
    const server = /^export MINIK8S_SERVER=(\S+)$/m.exec(e.stdout)?.[1];
    const token = /^export MINIK8S_TOKEN=(\S+)$/m.exec(e.stdout)?.[1];
    const kubeconfig = /^export KUBECONFIG=(\S+)$/m.exec(e.stdout)?.[1];
    assert.ok(kubeconfig, `env printed no KUBECONFIG:\n${e.stdout}`);
    assert.match(e.stdout, /^export MINIK8S_REGISTRY=10\.123\.\d+\.1:\d+$/m);
    const viaEnv = spawnSync(process.execPath, [BINARY, 'get', 'nodes'], {
      env: { ...env, MINIK8S_SERVER: server, MINIK8S_TOKEN: token, KUBECONFIG: kubeconfig },
      encoding: 'utf8',
    });
    assert.equal(viaEnv.status, 0, viaEnv.stderr);
    assert.match(viaEnv.stdout, new RegExp(`${name}-1\\s+Ready`));
    const again = await sim('up', '1');
    assert.equal(again.code, 1);
    assert.match(again.stderr, new RegExp(`cluster "${name}" is already up \\(2 nodes`));
  });

  it('down removes everything up made, and only that', async () => {
    const state = JSON.parse(readFileSync(join(root, 'cluster.json'), 'utf8')) as SimState;
    // Every process up started, and the ones they started (etcd, the registry, each engine's containerd), known by PID and start time.
    const pids: { what: string; pid: number; startTime: string }[] = [
      { what: 'master', pid: state.master.pid, startTime: state.master.startTime },
      ...state.nodes.flatMap((n) => [
        { what: `dockerd ${n.name}`, pid: n.dockerdPid, startTime: n.dockerdStartTime },
        { what: `worker ${n.name}`, pid: n.workerPid, startTime: n.workerStartTime },
      ]),
    ];
    for (const [what, file] of [
      ['etcd', join(state.master.dataDir, 'etcd.pid')],
      ['registry', join(state.master.dataDir, 'registry.pid')],
      ...state.nodes.map((n) => [`containerd ${n.name}`, join(n.dir, 'exec', 'containerd', 'containerd.pid')]),
    ] as [string, string][]) {
      const pid = readPidFile(file);
      assert.ok(pid, `no ${file}`);
      pids.push({ what, pid, startTime: procStat(pid)!.startTime });
    }
    for (const p of pids) assert.ok(isRunning(p.pid, p), `${p.what} (pid ${p.pid}) runs before down`);
    assert.ok(mountsUnder(root).length > 0, 'the engines have mounts under the state dir before down');

    const down = await sim('down');
    downDone = true;
    assert.equal(down.code, 0, down.stdout + down.stderr);
    assert.match(down.stdout, new RegExp(`cluster "${name}" is gone`));

    for (const p of pids) assert.ok(!isRunning(p.pid, p), `${p.what} (pid ${p.pid}) still runs`);
    for (const n of state.nodes) {
      assert.equal(await netnsExists(n.netns), false, `netns ${n.netns}`);
      assert.equal(await linkExists(n.veth), false, `link ${n.veth}`);
    }
    assert.equal(await linkExists(state.bridge), false, `bridge ${state.bridge}`);
    assert.equal(await iptablesRuleExists(state.forwardRule), false, 'the FORWARD rule');
    assert.deepEqual(mountsUnder(root), []);
    assert.equal(existsSync(root), false, `${root} is gone`);

    // A second down finds nothing, and says so.
    const again = await sim('down');
    assert.equal(again.code, 0);
    assert.match(again.stdout, /no cluster/);
  });
});
