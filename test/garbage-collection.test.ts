// Garbage collection in a real master: ReplicaSets and hand-made owned pods deleted with background, foreground and orphan propagation, over the API and the CLI.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import type { KubeObject } from '../src/core/api/meta.js';
import { waitFor } from '../src/core/wait-for.js';
import { BINARY, startMaster, type MasterProcess } from './helpers/master.js';

interface Answer {
  status: number;
  /** The JSON answered, or the text where it is not JSON. */
  body: unknown;
}

const NS = 'gc-test';

describe('garbage collection', () => {
  let master: MasterProcess;

  const call = async (method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<Answer> => {
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
    return { status: res.status, body: parsed };
  };
  /** The object a successful call answers: every call here reads or writes a ReplicaSet or a pod. */
  const ok = (a: Answer, status = 200) => {
    assert.equal(a.status, status, JSON.stringify(a.body));
    return a.body as KubeObject;
  };
  const rsPath = (name = '') => `/apis/apps/v1/namespaces/${NS}/replicasets${name ? `/${name}` : ''}`;
  const podPath = (name = '') => `/api/v1/namespaces/${NS}/pods${name ? `/${name}` : ''}`;

  /** A ReplicaSet of 0 whose selector matches none of the hand-made pods, so a ReplicaSet controller neither adopts nor creates any. */
  const makeRs = async (name: string) =>
    ok(
      await call('POST', rsPath(), {
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        metadata: { name },
        spec: {
          replicas: 0,
          selector: { matchLabels: { app: `gc-${name}` } },
          template: { metadata: { labels: { app: `gc-${name}` } }, spec: { containers: [{ name: 'c', image: 'busybox:1.35' }] } },
        },
      }),
      201,
    );
  /** A pod bound to no node (so deleting it removes it at once), owned by `owners`. */
  const makePod = async (name: string, owners: KubeObject[], options: { block?: boolean; finalizers?: string[] } = {}) =>
    ok(
      await call('POST', podPath(), {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name,
          labels: { role: 'gc-hand-made' },
          ownerReferences: owners.map((o) => ({
            apiVersion: 'apps/v1',
            kind: 'ReplicaSet',
            name: o.metadata.name,
            uid: o.metadata.uid,
            ...(options.block ? { blockOwnerDeletion: true } : {}),
          })),
          ...(options.finalizers ? { finalizers: options.finalizers } : {}),
        },
        spec: { containers: [{ name: 'c', image: 'busybox:1.35' }] },
      }),
      201,
    );
  const gone = async (path: string) => (await call('GET', path)).status === 404;

  before(async () => {
    master = await startMaster({ registry: false });
    ok(await call('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } }), 201);
  });
  after(async () => {
    await master?.stop();
  });

  it('background (the default): deleting a ReplicaSet deletes its pods; a pod with another live owner only loses the reference', async () => {
    const a = await makeRs('bg-a');
    const b = await makeRs('bg-b');
    await makePod('bg-only-a', [a]);
    await makePod('bg-both', [a, b]);
    await makePod('bg-unowned', []);
    ok(await call('DELETE', rsPath('bg-a')));
    await waitFor(() => gone(podPath('bg-only-a')), { description: 'bg-only-a collected', timeoutMs: 20_000 });
    await waitFor(async () => ok(await call('GET', podPath('bg-both'))).metadata.ownerReferences?.length === 1, {
      description: 'dangling reference dropped',
      timeoutMs: 20_000,
    });
    const both = ok(await call('GET', podPath('bg-both')));
    assert.equal(both.metadata.ownerReferences![0].uid, b.metadata.uid);
    assert.equal(both.metadata.deletionTimestamp, undefined);
    ok(await call('GET', podPath('bg-unowned')));
    ok(await call('GET', rsPath('bg-b')));
  });

  it('foreground: the owner stays, with deletionTimestamp, until its blocking dependents are gone; the CLI waits for it', async () => {
    const owner = await makeRs('fg');
    // Someone else's finalizer holds the dependent, so the owner's wait can be watched.
    await makePod('fg-held', [owner], { block: true, finalizers: ['test.minik8s.io/hold'] });
    await makePod('fg-free', [owner], { block: true });
    const child = spawn(process.execPath, [BINARY, 'delete', 'rs', 'fg', '-n', NS, '--cascade=foreground'], {
      env: master.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      err += d;
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      await waitFor(() => gone(podPath('fg-free')), { description: 'fg-free deleted', timeoutMs: 20_000 });
      await waitFor(async () => Boolean(ok(await call('GET', podPath('fg-held'))).metadata.deletionTimestamp), {
        description: 'fg-held marked',
        timeoutMs: 20_000,
      });
      const marked = ok(await call('GET', rsPath('fg')));
      assert.ok(marked.metadata.deletionTimestamp);
      assert.deepEqual(marked.metadata.finalizers, ['foregroundDeletion']);
      assert.equal(child.exitCode, null, 'the CLI still waits');
      ok(await call('PATCH', podPath('fg-held'), { metadata: { finalizers: null } }, 'application/merge-patch+json'));
      assert.equal(await exited, 0, err);
      assert.equal(out, 'replicaset.apps "fg" deleted\n');
      assert.ok(await gone(rsPath('fg')));
      assert.ok(await gone(podPath('fg-held')));
    } finally {
      if (child.exitCode === null) child.kill();
    }
  });

  it('orphan: the pods stay without the ownerReference (orphanDependents too)', async () => {
    const owner = await makeRs('orph');
    await makePod('orph-1', [owner]);
    await makePod('orph-2', [owner]);
    const marked = ok(await call('DELETE', rsPath('orph'), { apiVersion: 'v1', kind: 'DeleteOptions', orphanDependents: true }));
    assert.deepEqual(marked.metadata.finalizers, ['orphan']);
    await waitFor(() => gone(rsPath('orph')), { description: 'owner removed', timeoutMs: 20_000 });
    for (const name of ['orph-1', 'orph-2']) {
      const pod = ok(await call('GET', podPath(name)));
      assert.equal(pod.metadata.ownerReferences, undefined);
      assert.equal(pod.metadata.deletionTimestamp, undefined);
    }
    assert.equal((await call('DELETE', rsPath('nothing'), { orphanDependents: true, propagationPolicy: 'Orphan' })).status, 400);
  });

  it('`minik8s delete rs NAME --cascade=orphan` removes the ReplicaSet and keeps its pods', async () => {
    const owner = await makeRs('cli-orph');
    await makePod('cli-orph-1', [owner]);
    const res = spawnSync(process.execPath, [BINARY, 'delete', 'rs', 'cli-orph', '-n', NS, '--cascade=orphan'], {
      env: master.env,
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(res.status, 0, res.stderr);
    assert.equal(res.stdout, 'replicaset.apps "cli-orph" deleted\n');
    assert.ok(await gone(rsPath('cli-orph')));
    const pod = ok(await call('GET', podPath('cli-orph-1')));
    assert.equal(pod.metadata.ownerReferences, undefined);
    const bad = spawnSync(process.execPath, [BINARY, 'delete', 'rs', 'x', '-n', NS, '--cascade=sideways'], {
      env: master.env,
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.notEqual(bad.status, 0);
    assert.match(bad.stderr, /invalid cascade value \(sideways\)/);
  });
});
