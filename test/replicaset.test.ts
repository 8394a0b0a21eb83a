// ReplicaSet end to end: a real master (etcd, scheduler, controller) and a fake-node worker running the pods; `minik8s scale` too.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import type { Pod } from '../src/core/api/pod.js';
import type { ReplicaSet } from '../src/core/api/replicaset.js';
import { waitFor } from '../src/core/wait-for.js';
import { BINARY, startMaster, type MasterProcess } from './helpers/master.js';
import { startFakeWorker, type FakeWorker } from './helpers/fake-worker.js';
import { PodTracker } from './helpers/pod-tracker.js';

const PODS = '/api/v1/namespaces/default/pods';
const RS = '/apis/apps/v1/namespaces/default/replicasets';

describe('ReplicaSet controller (real master, fake nodes)', () => {
  let master: MasterProcess;
  let worker: FakeWorker | undefined;
  const trackers: PodTracker[] = [];

  const call = async <T = unknown>(method: string, path: string, body?: unknown, contentType = 'application/json') => {
    const res = await fetch(`${master.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${master.token}`, 'content-type': contentType },
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
  const cli = (...args: string[]) => spawnSync(process.execPath, [BINARY, ...args], { env: master.env, encoding: 'utf8', timeout: 60_000 });
  const track = (selector: string) => {
    const t = new PodTracker();
    t.start(master.url, master.token, selector);
    trackers.push(t);
    return t;
  };
  const replicaSet = (name: string, replicas: number) => ({
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'app', image: 'nothing/pulls:this', resources: { requests: { cpu: '100m', memory: '64Mi' } } }] },
      },
    },
  });
  const waitReady = (t: PodTracker, n: number, description: string) =>
    waitFor(() => t.alive().length === n && t.ready().length === n, { timeoutMs: 30_000, description });
  const waitStatus = (name: string, n: number) =>
    waitFor(
      async () => {
        const rs = (await call<ReplicaSet>('GET', `${RS}/${name}`)).body;
        return rs.status?.replicas === n &&
          rs.status.readyReplicas === n &&
          rs.status.availableReplicas === n &&
          rs.status.observedGeneration === rs.metadata.generation
          ? rs
          : undefined;
      },
      { timeoutMs: 30_000, description: `status of ${name} to show ${n} ready` },
    );

  before(async () => {
    master = await startMaster({ registry: false });
    const prefix = `rs-${process.pid}`;
    worker = await startFakeWorker({ master, args: ['--fake-nodes', '2', '--name', prefix], readyNodes: 2, namePrefix: prefix });
  });

  after(async () => {
    for (const t of trackers) await t.stop();
    await worker?.stop();
    await master?.stop();
  });

  it('makes exactly 3 pods, replaces a deleted one, scales to 5 and to 1 with `minik8s scale`', async () => {
    const pods = track('app=web');
    assert.equal((await call('POST', RS, replicaSet('web', 3))).status, 201);
    await waitReady(pods, 3, '3 Ready pods');
    const rs = await waitStatus('web', 3);
    assert.equal(pods.max, 3, 'never more than 3 pods while the creates were in flight');
    assert.equal(pods.created.size, 3);
    for (const p of pods.alive()) {
      assert.match(p.metadata.name!, /^web-/);
      assert.deepEqual(p.metadata.ownerReferences, [
        { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: rs.metadata.uid, controller: true, blockOwnerDeletion: true },
      ]);
      assert.ok(p.spec.nodeName, 'scheduled');
    }

    const victim = pods.alive()[0].metadata.name!;
    assert.equal((await call('DELETE', `${PODS}/${victim}`)).status, 200);
    await waitFor(() => !pods.pods.has(victim) && pods.ready().length === 3, { timeoutMs: 30_000, description: 'a replacement' });
    assert.equal(pods.created.size, 4, 'exactly one replacement');

    pods.resetMax();
    const up = cli('scale', 'rs/web', '--replicas=5');
    assert.equal(up.status, 0, up.stderr);
    assert.equal(up.stdout, 'replicaset.apps/web scaled\n');
    await waitReady(pods, 5, '5 Ready pods');
    await waitStatus('web', 5);
    assert.equal(pods.max, 5);
    assert.equal(pods.created.size, 6);

    // The least valuable go first: all are Running and Ready, so the most recently Ready go; a pod Ready longest stays.
    const readySince = (p: Pod) => Date.parse(p.status.conditions!.find((c) => c.type === 'Ready')!.lastTransitionTime!);
    const oldest = Math.min(...pods.alive().map(readySince));
    const down = cli('scale', 'replicaset', 'web', '--replicas=1');
    assert.equal(down.status, 0, down.stderr);
    assert.equal(down.stdout, 'replicaset.apps/web scaled\n');
    await waitFor(() => pods.alive().length === 1, { timeoutMs: 30_000, description: 'scale down to 1' });
    await waitStatus('web', 1);
    assert.equal(readySince(pods.alive()[0]), oldest, 'the survivor is among the pods Ready longest');
    assert.equal(pods.created.size, 6, 'scaling down made nothing');

    // `describe rs` shows the controller's Events, as Kubernetes' does: one per pod created and deleted.
    const events = await waitFor(
      () => {
        const r = cli('describe', 'rs/web');
        const created = r.stdout.match(/SuccessfulCreate/g)?.length ?? 0;
        const deleted = r.stdout.match(/SuccessfulDelete/g)?.length ?? 0;
        return created === 6 && deleted === 4 ? r.stdout : undefined;
      },
      { timeoutMs: 30_000, description: 'describe rs/web to show 6 SuccessfulCreate and 4 SuccessfulDelete events' },
    );
    assert.match(events, /Normal\s+SuccessfulCreate\s+.*Created pod: web-\w+/);
    assert.match(events, /Normal\s+SuccessfulDelete\s+.*Deleted pod: web-\w+/);

    const bad = cli('scale', 'rs/web', '--replicas=-1');
    assert.notEqual(bad.status, 0);
    assert.match(bad.stderr, /--replicas=COUNT/);
    assert.doesNotMatch(bad.stderr, /\n\s+at /);
    const missing = cli('scale', 'rs/nope', '--replicas=1');
    assert.notEqual(missing.status, 0);
    assert.match(missing.stderr, /not found/);
  });

  it('adopts a matching orphan instead of creating a pod, and releases a pod whose labels change', async () => {
    const pods = track('app=web2');
    const released = track('app=debug');
    const orphan = await call('POST', PODS, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web2-orphan', labels: { app: 'web2' } },
      spec: replicaSet('web2', 0).spec.template.spec,
    });
    assert.equal(orphan.status, 201, JSON.stringify(orphan.body));
    await waitFor(() => pods.ready().length === 1, { timeoutMs: 30_000, description: 'the orphan running' });

    assert.equal((await call('POST', RS, replicaSet('web2', 2))).status, 201);
    await waitReady(pods, 2, '2 Ready web2 pods');
    const rs = await waitStatus('web2', 2);
    await waitFor(() => pods.pods.get('web2-orphan')?.metadata.ownerReferences?.[0]?.uid === rs.metadata.uid, {
      timeoutMs: 10_000,
      description: 'the orphan adopted',
    });
    assert.equal(pods.created.size, 2, 'one pod made, the orphan adopted');
    assert.equal(pods.max, 2);

    const stray = pods.alive().find((p) => p.metadata.name !== 'web2-orphan')!.metadata.name!;
    assert.equal((await call('PATCH', `${PODS}/${stray}`, { metadata: { labels: { app: 'debug' } } }, 'application/merge-patch+json')).status, 200);
    await waitFor(() => released.pods.get(stray) && !(released.pods.get(stray)!.metadata.ownerReferences ?? []).some((r) => r.controller), {
      timeoutMs: 10_000,
      description: 'the relabelled pod released',
    });
    await waitReady(pods, 2, 'a replacement for the released pod');
    assert.equal(pods.created.size, 3);
    assert.equal(released.alive().length, 1, 'the released pod is left running');

    // Clean up: to zero through the scale subresource, then the objects.
    assert.equal((await call('PATCH', `${RS}/web2/scale`, { spec: { replicas: 0 } }, 'application/merge-patch+json')).status, 200);
    await waitFor(() => pods.alive().length === 0, { timeoutMs: 30_000, description: 'web2 scaled to 0' });
    for (const path of [`${RS}/web2`, `${RS}/web`, `${PODS}/${stray}`]) assert.equal((await call('DELETE', path)).status, 200);
  });
});
