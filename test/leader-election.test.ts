// Two masters over one etcd: both serve the API, each control-plane Lease has one holder, work is done once, and a SIGKILLed leader's Leases are taken over.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { waitFor } from '../src/core/wait-for.js';
import { startEtcd, type TestEtcd } from './helpers/etcd.js';
import { BINARY, type MasterProcess, startMaster } from './helpers/master.js';
import { PodTracker } from './helpers/pod-tracker.js';

const LEASES = [
  'kube-controller-manager',
  'kube-scheduler',
  'minik8s-activator-autoscaler',
  'minik8s-cron-triggers',
  'minik8s-function-controller',
  'minik8s-store-compactor',
];

function cli(master: MasterProcess, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BINARY, ...args], { env: master.env, timeout: 30_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

interface LeaseJson {
  metadata: { name: string };
  spec?: { holderIdentity?: string | null; leaseTransitions?: number; leaseDurationSeconds?: number };
}

async function api<T = unknown>(master: MasterProcess, path: string, init: { method?: string; body?: unknown } = {}): Promise<{ status: number; body: T }> {
  const res = await fetch(`${master.url}${path}`, {
    method: init.method ?? 'GET',
    headers: { authorization: `Bearer ${master.token}`, 'content-type': 'application/json' },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
  return { status: res.status, body: (await res.json()) as T };
}

/** Lease name -> holder, as the API answers on `master`. */
async function holders(master: MasterProcess): Promise<Map<string, string>> {
  const { status, body } = await api<{ items: LeaseJson[] }>(master, '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases');
  assert.equal(status, 200);
  return new Map(body.items.map((l) => [l.metadata.name, l.spec?.holderIdentity ?? '']));
}

function replicaSet(name: string, replicas: number) {
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'busybox:1.36', command: ['sleep', '3600'] }] } },
    },
  };
}

describe('several masters over one etcd', () => {
  let etcd: TestEtcd;
  let first: MasterProcess;
  let second: MasterProcess;
  let firstId: string;
  let secondId: string;
  const namespace = `le-${randomBytes(3).toString('hex')}`;
  const trackers: PodTracker[] = [];

  before(async () => {
    etcd = await startEtcd();
    const shared = ['--etcd-endpoints', etcd.endpoint];
    first = await startMaster({ registry: false, extraArgs: shared });
    // Its start is quick: a fresh cluster's Leases are absent and taken at once.
    await waitFor(async () => (await holders(first)).size === LEASES.length, {
      timeoutMs: 10_000,
      description: 'the first master to take every Lease',
    });
    second = await startMaster({ registry: false, extraArgs: shared, pkiFrom: first });
    firstId = readFileSync(join(first.dataDir, 'master-id'), 'utf8').trim();
    secondId = readFileSync(join(second.dataDir, 'master-id'), 'utf8').trim();
    assert.notEqual(firstId, secondId);
    assert.equal((await api(second, '/api/v1/namespaces', { method: 'POST', body: { metadata: { name: namespace } } })).status, 201);
  });

  after(async () => {
    for (const t of trackers) await t.stop();
    if (second) {
      await api(second, `/api/v1/namespaces/${namespace}`, { method: 'DELETE' }).catch(() => {});
      await second.stop();
    }
    await first?.stop();
    await etcd?.stop();
  });

  it('both serve the API; every Lease has the first master as its one holder, shown by get leases', async () => {
    for (const m of [first, second]) assert.equal((await api(m, '/api/v1/namespaces/kube-system')).status, 200);
    const held = await holders(second);
    assert.deepEqual([...held.keys()].sort(), LEASES);
    for (const [name, holder] of held) assert.equal(holder, firstId, `${name} is held by ${holder}`);
    const shown = await cli(second, ['get', 'leases', '-n', 'kube-system']);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /^NAME\s+HOLDER\s+AGE/);
    for (const name of LEASES) assert.match(shown.stdout, new RegExp(`^${name}\\s+${firstId}\\s`, 'm'));
  });

  it('a ReplicaSet created on the standby master gets its pods once; after SIGKILL of the leader the other takes every Lease and reconciles', async () => {
    const before = new PodTracker();
    trackers.push(before);
    before.start(second.url, second.token, 'app=web-a', namespace);
    assert.equal((await api(second, `/apis/apps/v1/namespaces/${namespace}/replicasets`, { method: 'POST', body: replicaSet('web-a', 3) })).status, 201);
    await waitFor(() => before.pods.size === 3, { timeoutMs: 15_000, description: 'web-a to get 3 pods' });

    await first.kill();
    const killedAt = Date.now();
    await waitFor(async () => [...(await holders(second)).values()].every((h) => h === secondId), {
      timeoutMs: 20_000,
      intervalMs: 200,
      description: 'the second master to hold every Lease',
    });
    const takeoverMs = Date.now() - killedAt;
    // Kubernetes' defaults: a 15 s lease, tried every 2 s.
    assert.ok(takeoverMs <= 20_000, `took ${takeoverMs} ms`);
    const lease = (await api<LeaseJson>(second, '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-controller-manager')).body;
    assert.equal(lease.spec?.leaseTransitions, 1);
    assert.equal(lease.spec?.leaseDurationSeconds, 15);

    const afterKill = new PodTracker();
    trackers.push(afterKill);
    afterKill.start(second.url, second.token, 'app=web-b', namespace);
    assert.equal((await api(second, `/apis/apps/v1/namespaces/${namespace}/replicasets`, { method: 'POST', body: replicaSet('web-b', 2) })).status, 201);
    await waitFor(() => afterKill.pods.size === 2, { timeoutMs: 15_000, description: 'web-b to get 2 pods from the new leader' });
    // The new leader's fresh controller found web-a whole: no pod made twice, before or after the kill.
    assert.equal(before.created.size, 3);
    assert.equal(before.max, 3);
    assert.equal(afterKill.created.size, 2);
    assert.equal(afterKill.max, 2);
    console.log(`takeover after SIGKILL: ${takeoverMs} ms`);
  });

  it('a leader killed and restarted takes its own Leases back at once, without waiting out their 15 s', async () => {
    // Their watches end with the master.
    for (const t of trackers.splice(0)) await t.stop();
    await second.kill();
    await second.restart();
    const readyAt = Date.now();
    const tracker = new PodTracker();
    trackers.push(tracker);
    tracker.start(second.url, second.token, 'app=web-c', namespace);
    assert.equal((await api(second, `/apis/apps/v1/namespaces/${namespace}/replicasets`, { method: 'POST', body: replicaSet('web-c', 1) })).status, 201);
    // A stranger would wait out the Lease (15 s from the last renewal, minus the restart's few seconds).
    await waitFor(() => tracker.pods.size === 1, { timeoutMs: 4000, description: 'web-c to get its pod from the restarted leader' });
    console.log(`restarted leader reconciled ${Date.now() - readyAt} ms after it was ready`);
    const lease = (await api<LeaseJson>(second, '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-controller-manager')).body;
    assert.equal(lease.spec?.holderIdentity, secondId);
    assert.equal(lease.spec?.leaseTransitions, 1, 'its own Lease: no transition');
  });
});
