// DaemonSet and PodDisruptionBudget end to end: a real master (etcd, scheduler, controllers) and fake-node workers; a pod per node and on a node that joins later, rollout status, and drain blocked by a budget until the budget allows.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { DaemonSet } from '../src/core/api/daemonset.js';
import type { PodDisruptionBudget } from '../src/core/api/poddisruptionbudget.js';
import type { Pod } from '../src/core/api/pod.js';
import { waitFor } from '../src/core/wait-for.js';
import { BINARY, startMaster, type MasterProcess } from './helpers/master.js';
import { startFakeWorker, type FakeWorker } from './helpers/fake-worker.js';

const NS = `ds-pdb-${process.pid}`;
const DS = `/apis/apps/v1/namespaces/${NS}/daemonsets`;
const DEPLOY = `/apis/apps/v1/namespaces/${NS}/deployments`;
const PDB = `/apis/policy/v1/namespaces/${NS}/poddisruptionbudgets`;
const PODS = `/api/v1/namespaces/${NS}/pods`;

describe('DaemonSet and PodDisruptionBudget (real master, fake nodes)', () => {
  let master: MasterProcess;
  const workers: FakeWorker[] = [];
  const prefix = `dsp-${process.pid}`;

  const call = async <T = unknown>(method: string, path: string, body?: unknown, contentType = 'application/json') => {
    const res = await fetch(`${master.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${master.token}`, 'content-type': contentType },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as T };
  };
  const cli = (...args: string[]) =>
    new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [BINARY, ...args], { env: master.env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => {
        stdout += d;
      });
      child.stderr.on('data', (d) => {
        stderr += d;
      });
      const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
      child.once('close', (status) => {
        clearTimeout(timer);
        resolve({ status, stdout, stderr });
      });
    });
  const pods = async (selector: string) =>
    (await call<{ items: Pod[] }>('GET', `${PODS}?labelSelector=${encodeURIComponent(selector)}`)).body.items.filter((p) => !p.metadata.deletionTimestamp);
  const ready = (p: Pod) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

  before(async () => {
    master = await startMaster({ registry: false });
    workers.push(await startFakeWorker({ master, args: ['--fake-nodes', '2', '--name', `${prefix}-a`], readyNodes: 2, namePrefix: `${prefix}-a` }));
    assert.equal((await call('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } })).status, 201);
  });

  after(async () => {
    for (const w of workers) await w.stop();
    await master?.stop();
  });

  it('runs a pod on every node and on a node that joins later, and reports the rollout', async () => {
    const created = await call('POST', DS, {
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: { name: 'agent' },
      spec: {
        selector: { matchLabels: { app: 'agent' } },
        template: { metadata: { labels: { app: 'agent' } }, spec: { containers: [{ name: 'c', image: 'nothing/pulls:one' }] } },
      },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const onNodes = async (n: number) =>
      waitFor(
        async () => {
          const list = await pods('app=agent');
          const nodes = new Set(list.filter(ready).map((p) => p.spec.nodeName));
          return list.length === n && nodes.size === n ? list : undefined;
        },
        { timeoutMs: 30_000, description: `${n} Ready agent pods on ${n} nodes` },
      );
    await onNodes(2);

    workers.push(await startFakeWorker({ master, args: ['--fake-nodes', '1', '--name', `${prefix}-b`], readyNodes: 1, namePrefix: `${prefix}-b` }));
    const three = await onNodes(3);
    assert.ok(
      three.some((p) => p.spec.nodeName?.startsWith(`${prefix}-b`)),
      'the node that joined later got a pod',
    );

    const status = await cli('rollout', 'status', 'ds/agent', '-n', NS, '--timeout=30s');
    assert.equal(status.status, 0, status.stderr);
    assert.match(status.stdout, /daemon set "agent" successfully rolled out/);
    const got = await cli('get', 'ds', 'agent', '-n', NS);
    assert.match(got.stdout, /^NAME\s+DESIRED\s+CURRENT\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+NODE SELECTOR\s+AGE\nagent\s+3\s+3\s+3\s+3\s+3\s+<none>\s+/);
    const ds = (await call<DaemonSet>('GET', `${DS}/agent`)).body;
    assert.equal(ds.status?.numberMisscheduled, 0);
  });

  it("drain is blocked by a PodDisruptionBudget with kubectl's message, then goes through once the budget allows", async () => {
    const deploy = await call('POST', DEPLOY, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nothing/pulls:one' }] } },
      },
    });
    assert.equal(deploy.status, 201, JSON.stringify(deploy.body));
    const budget = await call('POST', PDB, {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'web' },
      spec: { minAvailable: 2, selector: { matchLabels: { app: 'web' } } },
    });
    assert.equal(budget.status, 201, JSON.stringify(budget.body));
    const web = await waitFor(
      async () => {
        const list = await pods('app=web');
        return list.length === 2 && list.every(ready) ? list : undefined;
      },
      { timeoutMs: 30_000, description: '2 Ready web pods' },
    );
    await waitFor(
      async () => {
        const b = (await call<PodDisruptionBudget>('GET', `${PDB}/web`)).body;
        return b.status?.currentHealthy === 2 && b.status.desiredHealthy === 2 ? b : undefined;
      },
      { timeoutMs: 30_000, description: 'the budget: 2 healthy of 2 needed' },
    );
    const table = await cli('get', 'pdb', '-n', NS);
    assert.match(table.stdout, /^NAME\s+MIN AVAILABLE\s+MAX UNAVAILABLE\s+ALLOWED DISRUPTIONS\s+AGE\nweb\s+2\s+N\/A\s+0\s+/);

    const node = web[0]!.spec.nodeName!;
    const blocked = await cli('drain', node, '--ignore-daemonsets', '--timeout=7s');
    assert.notEqual(blocked.status, 0);
    assert.match(
      blocked.stderr,
      new RegExp(
        `error when evicting pods/"${web[0]!.metadata.name}" -n "${NS}" \\(will retry after 5s\\): Cannot evict pod as it would violate the pod's disruption budget\\.`,
      ),
    );
    assert.ok(
      (await pods('app=agent')).some((p) => p.spec.nodeName === node),
      'the DaemonSet pod stays on the cordoned node',
    );

    assert.equal((await call('PATCH', `${DEPLOY}/web`, { spec: { replicas: 3 } }, 'application/merge-patch+json')).status, 200);
    await waitFor(async () => ((await call<PodDisruptionBudget>('GET', `${PDB}/web`)).body.status?.disruptionsAllowed ?? 0) >= 1, {
      timeoutMs: 30_000,
      description: 'the budget to allow a disruption',
    });
    const drained = await cli('drain', node, '--ignore-daemonsets', '--timeout=60s');
    assert.equal(drained.status, 0, drained.stderr);
    assert.match(drained.stdout, new RegExp(`node/${node} drained`));
    assert.ok(!(await pods('app=web')).some((p) => p.spec.nodeName === node), 'no web pod left on the drained node');
    assert.ok(
      (await pods('app=agent')).some((p) => p.spec.nodeName === node),
      'the DaemonSet pod stays',
    );
  });
});
