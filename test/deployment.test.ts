// Deployment end to end: a real master (etcd, scheduler, controllers, GC) and a fake-node worker; rolling update, rollout CLI, scale, cascade delete.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { Deployment } from '../src/core/api/deployment.js';
import type { Pod } from '../src/core/api/pod.js';
import type { ReplicaSet } from '../src/core/api/replicaset.js';
import { waitFor } from '../src/core/wait-for.js';
import { BINARY, startMaster, type MasterProcess } from './helpers/master.js';
import { startFakeWorker, type FakeWorker } from './helpers/fake-worker.js';
import { PodTracker } from './helpers/pod-tracker.js';

const RS = '/apis/apps/v1/namespaces/default/replicasets';
const DEPLOY = '/apis/apps/v1/namespaces/default/deployments';
const V1 = 'nothing/pulls:one';
const V2 = 'nothing/pulls:two';

describe('Deployment controller (real master, fake nodes)', () => {
  let master: MasterProcess;
  let worker: FakeWorker | undefined;
  let tracker: PodTracker | undefined;

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
  // Asynchronous, so the pod watch keeps being read while a command waits.
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
  const images = (pods: Pod[]) => pods.map((p) => p.spec.containers[0].image).sort();
  const ownedRs = async () => (await call<{ items: ReplicaSet[] }>('GET', `${RS}?labelSelector=app%3Dweb`)).body.items;

  before(async () => {
    master = await startMaster({ registry: false });
    const prefix = `deploy-${process.pid}`;
    worker = await startFakeWorker({ master, args: ['--fake-nodes', '2', '--name', prefix], readyNodes: 2, namePrefix: prefix });
  });

  after(async () => {
    await tracker?.stop();
    await worker?.stop();
    await master?.stop();
  });

  it('rolls 3 replicas to a new image never below 3 available nor above 4 pods, undoes, pauses, scales, and cascades on delete', async () => {
    const pods = new PodTracker();
    tracker = pods;
    pods.start(master.url, master.token, 'app=web');
    const created = await call('POST', DEPLOY, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: {
        replicas: 3,
        selector: { matchLabels: { app: 'web' } },
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { containers: [{ name: 'app', image: V1, resources: { requests: { cpu: '100m', memory: '64Mi' } } }] },
        },
      },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));

    const first = await cli('rollout', 'status', 'deploy/web', '--timeout=60s');
    assert.equal(first.status, 0, first.stderr);
    assert.match(first.stdout, /deployment "web" successfully rolled out\n$/);
    await waitFor(() => pods.alive().length === 3 && pods.ready().length === 3, { timeoutMs: 30_000, description: '3 Ready v1 pods' });
    const [rs1] = await ownedRs();
    assert.equal(rs1.metadata.annotations!['deployment.kubernetes.io/revision'], '1');
    assert.equal(rs1.metadata.name, `web-${rs1.metadata.labels!['pod-template-hash']}`);
    assert.equal(rs1.spec.selector.matchLabels!['pod-template-hash'], rs1.metadata.labels!['pod-template-hash']);
    assert.deepEqual(
      rs1.metadata.ownerReferences!.map((r) => [r.kind, r.name, r.controller, r.blockOwnerDeletion]),
      [['Deployment', 'web', true, true]],
    );

    // The rolling update.
    pods.arm();
    const patched = await call(
      'PATCH',
      `${DEPLOY}/web`,
      { spec: { template: { spec: { containers: [{ name: 'app', image: V2 }] } } } },
      'application/strategic-merge-patch+json',
    );
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    const second = await cli('rollout', 'status', 'deploy/web', '--timeout=60s');
    assert.equal(second.status, 0, second.stderr);
    assert.match(second.stdout, /deployment "web" successfully rolled out\n$/);
    await waitFor(() => pods.alive().length === 3 && images(pods.ready()).join() === [V2, V2, V2].join(), {
      timeoutMs: 30_000,
      description: '3 Ready v2 pods',
    });
    assert.ok(pods.minReady >= 3, `Ready pods dropped to ${pods.minReady}`);
    assert.ok(pods.maxAlive <= 4, `${pods.maxAlive} pods at once`);

    const hist = await cli('rollout', 'history', 'deploy/web');
    assert.equal(hist.status, 0, hist.stderr);
    assert.equal(hist.stdout, 'deployment.apps/web\nREVISION  CHANGE-CAUSE\n1         <none>\n2         <none>\n\n');

    // Undo: back to the first template, now revision 3.
    const undo = await cli('rollout', 'undo', 'deploy/web');
    assert.equal(undo.status, 0, undo.stderr);
    assert.equal(undo.stdout, 'deployment.apps/web rolled back\n');
    assert.equal((await cli('rollout', 'status', 'deploy/web', '--timeout=60s')).status, 0);
    await waitFor(() => pods.alive().length === 3 && images(pods.ready()).join() === [V1, V1, V1].join(), {
      timeoutMs: 30_000,
      description: '3 Ready v1 pods again',
    });
    const back = (await ownedRs()).find((rs) => rs.metadata.uid === rs1.metadata.uid);
    assert.equal(back!.metadata.annotations!['deployment.kubernetes.io/revision'], '3', 'the first ReplicaSet reused at revision 3');
    assert.match((await cli('rollout', 'history', 'deploy/web')).stdout, /^deployment\.apps\/web\nREVISION {2}CHANGE-CAUSE\n2 +<none>\n3 +<none>\n\n$/);

    // Paused: a new template is observed but not rolled out, until resumed.
    const pause = await cli('rollout', 'pause', 'deploy/web');
    assert.equal(pause.stdout, 'deployment.apps/web paused\n', pause.stderr);
    assert.equal(
      (
        await call(
          'PATCH',
          `${DEPLOY}/web`,
          { spec: { template: { spec: { containers: [{ name: 'app', image: V2 }] } } } },
          'application/strategic-merge-patch+json',
        )
      ).status,
      200,
    );
    const observed = await waitFor(
      async () => {
        const d = (await call<Deployment>('GET', `${DEPLOY}/web`)).body;
        return d.status?.observedGeneration === d.metadata.generation ? d : undefined;
      },
      { timeoutMs: 15_000, description: 'the paused change observed' },
    );
    assert.equal(observed.status.conditions!.find((c) => c.type === 'Progressing')!.reason, 'DeploymentPaused');
    assert.equal(
      (await ownedRs()).find((rs) => rs.spec.replicas > 0 && rs.spec.template.spec.containers[0].image === V2),
      undefined,
      'no rollout while paused',
    );
    assert.equal((await cli('rollout', 'resume', 'deploy/web')).stdout, 'deployment.apps/web resumed\n');
    assert.equal((await cli('rollout', 'status', 'deploy/web', '--timeout=60s')).status, 0);

    // Scale through the /scale subresource.
    const scaled = await cli('scale', 'deploy/web', '--replicas=2');
    assert.equal(scaled.status, 0, scaled.stderr);
    assert.equal(scaled.stdout, 'deployment.apps/web scaled\n');
    await waitFor(() => pods.alive().length === 2 && pods.ready().length === 2, { timeoutMs: 30_000, description: 'scaled to 2' });

    // User errors: a clear message, non-zero exit, no stack trace.
    for (const [args, message] of [
      [['rollout', 'status', 'deploy/nope'], /not found/],
      [['rollout', 'undo', 'deploy/web', '--to-revision=99'], /unable to find specified revision 99 in history/],
      [['rollout', 'resume', 'deploy/web'], /deployments\.apps "web" is not paused/],
      [['rollout', 'status', 'rs/web'], /only deployments have rollouts/],
      [['rollout', 'restart', 'deploy/web'], /unknown rollout command "restart"/],
    ] as [string[], RegExp][]) {
      const r = await cli(...args);
      assert.notEqual(r.status, 0, args.join(' '));
      assert.match(r.stderr, message);
      assert.doesNotMatch(r.stderr, /\n\s+at /);
    }

    // Deleting the Deployment removes its ReplicaSets and pods.
    assert.equal((await call('DELETE', `${DEPLOY}/web`)).status, 200);
    await waitFor(async () => (await ownedRs()).length === 0 && pods.pods.size === 0, { timeoutMs: 30_000, description: 'ReplicaSets and pods collected' });
  });

  it('Recreate: every old pod is gone before a new one is made', async () => {
    const pods = new PodTracker();
    const trackers = [pods];
    pods.start(master.url, master.token, 'app=batch');
    // After every event: never an old and a new pod (terminating ones included) at once.
    let mixed = 0;
    pods.onEvent = () => {
      if (new Set([...pods.pods.values()].map((p) => p.spec.containers[0].image)).size > 1) mixed++;
    };
    try {
      const body = (image: string) => ({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'batch' },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: 'batch' } },
          strategy: { type: 'Recreate' },
          template: {
            metadata: { labels: { app: 'batch' } },
            spec: { containers: [{ name: 'app', image, resources: { requests: { cpu: '100m', memory: '64Mi' } } }] },
          },
        },
      });
      assert.equal((await call('POST', DEPLOY, body(V1))).status, 201);
      assert.equal((await cli('rollout', 'status', 'deploy/batch', '--timeout=60s')).status, 0);
      await waitFor(() => pods.ready().length === 2, { timeoutMs: 30_000, description: '2 Ready v1 pods' });
      assert.equal(
        (
          await call(
            'PATCH',
            `${DEPLOY}/batch`,
            { spec: { template: { spec: { containers: [{ name: 'app', image: V2 }] } } } },
            'application/strategic-merge-patch+json',
          )
        ).status,
        200,
      );
      const done = await cli('rollout', 'status', 'deploy/batch', '--timeout=60s');
      assert.equal(done.status, 0, done.stderr);
      await waitFor(() => pods.pods.size === 2 && images(pods.ready()).join() === [V2, V2].join(), { timeoutMs: 30_000, description: '2 Ready v2 pods' });
      assert.equal(mixed, 0, 'old and new pods existed at the same time');
      assert.equal((await call('DELETE', `${DEPLOY}/batch`)).status, 200);
      await waitFor(async () => pods.pods.size === 0, { timeoutMs: 30_000, description: 'batch pods collected' });
    } finally {
      for (const t of trackers) await t.stop();
    }
  });
});
