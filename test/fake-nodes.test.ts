// Fake nodes end to end: a real master (real etcd) and one `minik8s --role=worker --fake-nodes 5` process hosting five nodes.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '../src/core/wait-for.js';
import { cidrContains } from '../src/core/api/ipv4.js';
import type { Node } from '../src/core/api/node.js';
import type { Pod } from '../src/core/api/pod.js';
import { BINARY, freePort, startMaster, type MasterProcess } from './helpers/master.js';

/** An answer, its body as the caller says it is (the text where it is not JSON). */
interface Answer<T = unknown> {
  status: number;
  body: T;
}

interface FakeWorker {
  child: ChildProcess;
  dataDir: string;
  output(): string;
  exited: Promise<number | null>;
}

/** Starts `minik8s --role=worker` with the flags given; resolves once `ready` appears in its output (or it exits). */
async function startFakeWorker(master: MasterProcess, args: string[], ready: string | undefined): Promise<FakeWorker> {
  const dataDir = mkdtempSync(join(tmpdir(), 'minik8s-test-fake-worker-'));
  const child = spawn(
    process.execPath,
    [
      BINARY,
      '--role=worker',
      '--server',
      master.url,
      '--token',
      master.joinToken,
      '--node-ip',
      '127.0.0.1',
      '--data-dir',
      dataDir,
      '--kubelet-port',
      String(await freePort()),
      ...args,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout!.on('data', (d) => {
    output += d;
  });
  child.stderr!.on('data', (d) => {
    output += d;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  if (ready !== undefined) {
    await waitFor(
      () => {
        if (child.exitCode !== null) throw new Error(`worker exited early:\n${output}`);
        return output.includes(ready);
      },
      { timeoutMs: 30_000, description: 'the fake nodes to register' },
    ).catch((err) => {
      child.kill('SIGKILL');
      throw new Error(`${err instanceof Error ? err.message : err}\n${output}`);
    });
  }
  return { child, dataDir, output: () => output, exited };
}

/** PIDs of the processes whose parent is `pid`, from /proc. */
function childrenOf(pid: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
    try {
      // Field 4 of /proc/PID/stat is the parent's PID; the command (field 2) may hold spaces, so split after its ')'.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) children.push(Number(entry));
    } catch {
      /* gone meanwhile */
    }
  }
  return children;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('fake nodes (--fake-nodes 5)', () => {
  let master: MasterProcess;
  let worker: FakeWorker | undefined;
  const prefix = `fake-${process.pid}`;
  const names = Array.from({ length: 5 }, (_, i) => `${prefix}-${i}`);

  const call = async <T = unknown>(method: string, path: string, body?: unknown): Promise<Answer<T>> => {
    const res = await fetch(`${master.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${master.token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      /* not JSON */
    }
    return { status: res.status, body: parsed as T };
  };
  const ns = '/api/v1/namespaces/default/pods';

  before(async () => {
    master = await startMaster({ registry: false });
    worker = await startFakeWorker(master, ['--fake-nodes', '5', '--name', prefix, '--labels', 'zone=sim', '--fake-node-heartbeat', '2'], 'syncing pods');
  });

  after(async () => {
    if (worker && worker.child.exitCode === null) {
      worker.child.kill('SIGKILL');
      await worker.exited;
    }
    if (worker) rmSync(worker.dataDir, { recursive: true, force: true });
    await master?.stop();
  });

  it('registers five Ready nodes, each with its own /24, credential and the fake-node label', async () => {
    const nodes: Node[] = await waitFor(
      async () => {
        const list = (await call<{ items: Node[] }>('GET', '/api/v1/nodes')).body.items;
        const ours = list.filter((n) => names.includes(n.metadata.name!));
        return ours.length === 5 && ours.every((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) ? ours : undefined;
      },
      { timeoutMs: 20_000, description: 'five Ready fake nodes' },
    );
    assert.deepEqual(nodes.map((n) => n.metadata.name).sort(), [...names].sort());
    assert.equal(new Set(nodes.map((n) => n.spec.podCIDR)).size, 5, 'five different pod ranges');
    for (const node of nodes) {
      assert.ok(cidrContains(master.clusterCIDR, node.spec.podCIDR!), `${node.spec.podCIDR} in ${master.clusterCIDR}`);
      assert.equal(node.metadata.labels!['minik8s.io/fake-node'], 'true');
      assert.equal(node.metadata.labels!.zone, 'sim');
      assert.deepEqual(node.status.capacity, { cpu: '32', memory: `${256 * 1024 * 1024}Ki`, pods: '110' });
      assert.deepEqual(node.status.allocatable, node.status.capacity);
      assert.equal(node.status.nodeInfo!.containerRuntimeVersion, 'fake://minik8s');
    }
    // Each node joined for itself: a credential of its own, kept like a real worker's.
    const kept = names.map((n) => JSON.parse(readFileSync(join(worker!.dataDir, 'fake-nodes', n, 'kubelet', 'node-credential.json'), 'utf8')));
    assert.equal(new Set(kept.map((c) => c.token)).size, 5);
    assert.deepEqual(
      kept.map((c) => c.nodeName),
      names,
    );
  });

  it("runs pods bound to a fake node to Running, with an address of that node's /24, and deletes them", async () => {
    const cidrs = new Map((await call<{ items: Node[] }>('GET', '/api/v1/nodes')).body.items.map((n) => [n.metadata.name, n.spec.podCIDR]));
    const placed = [names[0], names[0], names[2], names[4]];
    for (const [i, nodeName] of placed.entries()) {
      const res = await call('POST', ns, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: `fp-${i}` },
        spec: { nodeName, containers: [{ name: 'app', image: 'nothing/pulls:this', resources: { requests: { cpu: '100m', memory: '64Mi' } } }] },
      });
      assert.equal(res.status, 201, JSON.stringify(res.body));
    }
    const pods: Pod[] = await waitFor(
      async () => {
        const got = await Promise.all(placed.map((_, i) => call<Pod>('GET', `${ns}/fp-${i}`)));
        return got.every((r) => r.body.status?.phase === 'Running' && r.body.status.podIP) ? got.map((r) => r.body) : undefined;
      },
      { timeoutMs: 20_000, description: 'the pods to run on the fake nodes' },
    );
    for (const pod of pods) {
      assert.ok(cidrContains(cidrs.get(pod.spec.nodeName)!, `${pod.status.podIP}/32`), `${pod.status.podIP} in ${cidrs.get(pod.spec.nodeName)}`);
      assert.equal(pod.status.hostIP, '127.0.0.1');
      assert.equal(pod.status.conditions!.find((c) => c.type === 'Ready')!.status, 'True');
      assert.ok(pod.status.containerStatuses![0].state!.running, 'the container reports running');
    }
    assert.notEqual(pods[0].status.podIP, pods[1].status.podIP);

    for (const [i] of placed.entries()) assert.equal((await call('DELETE', `${ns}/fp-${i}`)).status, 200);
    await waitFor(async () => (await Promise.all(placed.map((_, i) => call('GET', `${ns}/fp-${i}`)))).every((r) => r.status === 404), {
      timeoutMs: 20_000,
      description: 'the deleted pods to be gone',
    });
  });

  it('lets a deleted fake node go: its credential is revoked and the worker stops hosting it', async () => {
    const gone = names[3]!;
    assert.equal((await call('DELETE', `/api/v1/nodes/${gone}`)).status, 200);
    await waitFor(() => worker!.output().includes(`node ${gone}'s credential was refused`), {
      timeoutMs: 20_000,
      description: 'the worker to drop the deleted node',
    });
    assert.equal((await call('GET', `/api/v1/nodes/${gone}`)).status, 404, 'not registered again');
    const others = await call<Node>('GET', `/api/v1/nodes/${names[4]}`);
    assert.equal(others.body.status.conditions!.find((c) => c.type === 'Ready')!.status, 'True', 'the other nodes carry on');
    assert.equal(worker!.child.exitCode, null);
  });

  it('stops on SIGTERM with exit code 0 and leaves no process behind', async () => {
    const pid = worker!.child.pid!;
    const children = childrenOf(pid);
    worker!.child.kill('SIGTERM');
    const timer = setTimeout(() => worker!.child.kill('SIGKILL'), 15_000);
    const code = await worker!.exited;
    clearTimeout(timer);
    assert.equal(code, 0, worker!.output());
    assert.equal(alive(pid), false);
    for (const c of children) assert.equal(alive(c), false, `child ${c} of the worker is gone`);
    assert.doesNotMatch(worker!.output(), /\n\s+at /, 'no stack trace');
  });

  it('fails with a clear message when the cluster CIDR has no /24 left for every fake node', async () => {
    const small = await startMaster({ registry: false, clusterCIDR: '10.251.0.0/22' });
    let failing: FakeWorker | undefined;
    try {
      failing = await startFakeWorker(small, ['--fake-nodes', '5', '--name', `${prefix}-full`], undefined);
      const timer = setTimeout(() => failing!.child.kill('SIGKILL'), 30_000);
      const code = await failing.exited;
      clearTimeout(timer);
      assert.equal(code, 1, failing.output());
      assert.match(
        failing.output(),
        /error: the master at .* refused to join node "fake-\d+-full-\d": no pod CIDR left for node .*: all 4 \/24 ranges of the cluster CIDR 10\.251\.0\.0\/22 are allocated.*\(5 fake nodes need a \/24 each: start the master with --cluster-cidr of \/21 or larger, e\.g\. 10\.128\.0\.0\/9\)/,
      );
      assert.doesNotMatch(failing.output(), /\n\s+at /, 'no stack trace');
    } finally {
      if (failing && failing.child.exitCode === null) failing.child.kill('SIGKILL');
      if (failing) rmSync(failing.dataDir, { recursive: true, force: true });
      await small.stop();
    }
  });
});
