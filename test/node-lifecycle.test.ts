// Node lifecycle on a real master: heartbeats stop -> Unknown, unreachable taint, pods unready and evicted by their tolerations; back -> Ready; deleting the node frees its pods; cordon, uncordon and drain through the CLI.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { Condition } from '../src/core/api/meta.js';
import type { Node, Taint } from '../src/core/api/node.js';
import type { Pod } from '../src/core/api/pod.js';
import { waitFor } from '../src/core/wait-for.js';
import { BINARY, startMaster, type MasterProcess } from './helpers/master.js';

const GRACE_SECONDS = 4;
const NS = 'lifecycle';
const PODS = `/api/v1/namespaces/${NS}/pods`;
const MERGE = 'application/merge-patch+json';
const UNREACHABLE = 'node.kubernetes.io/unreachable';

interface Answer {
  status: number;
  /** The JSON answered (undefined for an empty answer): the caller says what it is. */
  body: unknown;
}

describe('node lifecycle', () => {
  let master: MasterProcess;
  const heartbeats = new Map<string, NodeJS.Timeout>();

  const api = async (method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<Answer> => {
    const res = await fetch(`${master.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${master.token}`, 'content-type': contentType },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  const ok = async (method: string, path: string, body?: unknown, contentType?: string) => {
    const res = await api(method, path, body, contentType);
    assert.ok(res.status >= 200 && res.status < 300, `${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  /** The CLI as a child process, without blocking this process (the heartbeats must go on meanwhile). */
  const cli = (...args: string[]) =>
    new Promise<{ code: number | null; out: string; err: string }>((resolve, reject) => {
      const child = spawn(process.execPath, [BINARY, ...args], { env: master.env, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout.on('data', (d) => {
        out += d;
      });
      child.stderr.on('data', (d) => {
        err += d;
      });
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      child.once('error', reject);
      child.once('close', (code) => {
        clearTimeout(timer);
        resolve({ code, out, err });
      });
    });

  /** What a kubelet posts with each heartbeat: its conditions with a fresh lastHeartbeatTime. */
  const heartbeat = (name: string) => {
    const now = new Date().toISOString();
    const condition = (type: string, status: 'True' | 'False', reason: string): Condition => ({
      type,
      status,
      reason,
      message: 'test kubelet',
      lastHeartbeatTime: now,
      lastTransitionTime: now,
    });
    return api(
      'PATCH',
      `/api/v1/nodes/${name}/status`,
      {
        status: {
          conditions: [
            condition('MemoryPressure', 'False', 'KubeletHasSufficientMemory'),
            condition('DiskPressure', 'False', 'KubeletHasNoDiskPressure'),
            condition('PIDPressure', 'False', 'KubeletHasSufficientPID'),
            condition('Ready', 'True', 'KubeletReady'),
          ],
        },
      },
      MERGE,
    );
  };
  const startHeartbeats = async (name: string) => {
    await heartbeat(name);
    heartbeats.set(
      name,
      setInterval(() => void heartbeat(name).catch(() => {}), 500),
    );
  };
  const stopHeartbeats = (name: string) => {
    clearInterval(heartbeats.get(name));
    heartbeats.delete(name);
  };
  const node = async (name: string) => (await ok('GET', `/api/v1/nodes/${name}`)) as Node;
  const ready = (n: Node) => n.status?.conditions?.find((c) => c.type === 'Ready');
  const pod = async (name: string) => api('GET', `${PODS}/${name}`);
  const makePod = async (name: string, nodeName: string, spec: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}) =>
    (await ok('POST', PODS, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, ...metadata },
      spec: { nodeName, containers: [{ name: 'c', image: 'busybox:1.36' }], ...spec },
    })) as Pod;
  /** What a kubelet would have reported: running and ready. */
  const markReady = (name: string) =>
    ok(
      'PATCH',
      `${PODS}/${name}/status`,
      { status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: new Date().toISOString() }] } },
      MERGE,
    );
  const events = async (reason: string) =>
    ((await ok('GET', `/api/v1/events?fieldSelector=reason%3D${reason}`)) as { items: { message: string; involvedObject: { name: string } }[] }).items;

  before(async () => {
    master = await startMaster({ registry: false, extraArgs: ['--node-monitor-grace-period', String(GRACE_SECONDS), '--default-toleration-seconds', '600'] });
    await ok('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  });
  after(async () => {
    for (const name of [...heartbeats.keys()]) stopHeartbeats(name);
    await master?.stop();
  });

  it('gives new pods the default tolerations, with --default-toleration-seconds, unless they have their own', async () => {
    const plain = await makePod('plain', 'nowhere');
    assert.deepEqual(plain.spec.tolerations, [
      { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 600 },
      { key: UNREACHABLE, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 600 },
    ]);
    const own = await makePod('own', 'nowhere', { tolerations: [{ key: UNREACHABLE, operator: 'Exists', effect: 'NoExecute' }] });
    assert.deepEqual(
      own.spec.tolerations?.map((t) => [t.key, t.tolerationSeconds]),
      [
        [UNREACHABLE, undefined],
        ['node.kubernetes.io/not-ready', 600],
      ],
    );
  });

  describe('a node that stops heartbeating', () => {
    const NODE = 'lost';
    let taint: Taint;

    before(async () => {
      await ok('POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: NODE } });
      await startHeartbeats(NODE);
      await makePod('forever', NODE, { terminationGracePeriodSeconds: 0, tolerations: [{ key: UNREACHABLE, operator: 'Exists', effect: 'NoExecute' }] });
      await makePod('short', NODE, { tolerations: [{ key: UNREACHABLE, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 6 }] });
      await makePod('zero', NODE, {
        terminationGracePeriodSeconds: 0,
        tolerations: [{ key: UNREACHABLE, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 0 }],
      });
      await makePod('default', NODE);
      for (const name of ['forever', 'short', 'zero', 'default']) await markReady(name);
      assert.equal(ready(await node(NODE))?.status, 'True');
    });

    it(`is Unknown with the unreachable taints ${GRACE_SECONDS} s after its last heartbeat`, async () => {
      stopHeartbeats(NODE);
      const stoppedAt = Date.now();
      const lost = await waitFor(
        async () => {
          const n = await node(NODE);
          return ready(n)?.status === 'Unknown' && n.spec?.taints?.some((t) => t.key === UNREACHABLE && t.effect === 'NoExecute') ? n : undefined;
        },
        { timeoutMs: (GRACE_SECONDS + 10) * 1000, intervalMs: 100, description: 'the node to be Unknown and tainted' },
      );
      assert.ok(Date.now() - stoppedAt >= (GRACE_SECONDS - 1) * 1000, 'not before the grace period');
      for (const c of lost.status!.conditions!) {
        assert.deepEqual([c.status, c.reason, c.message], ['Unknown', 'NodeStatusUnknown', 'Kubelet stopped posting node status.'], c.type);
      }
      assert.deepEqual(lost.spec!.taints!.map((t) => `${t.key}:${t.effect}`).sort(), [`${UNREACHABLE}:NoExecute`, `${UNREACHABLE}:NoSchedule`]);
      taint = lost.spec!.taints!.find((t) => t.effect === 'NoExecute')!;
      assert.ok(taint.timeAdded);

      const listed = await cli('get', 'nodes');
      assert.equal(listed.code, 0, listed.err);
      assert.match(listed.out, new RegExp(`^${NODE}\\s+NotReady\\s`, 'm'));
      assert.ok((await events('NodeNotReady')).some((e) => e.involvedObject.name === NODE && e.message === `Node ${NODE} status is now: NodeNotReady`));
    });

    it("its pods' Ready condition turns False", async () => {
      for (const name of ['forever', 'short', 'default']) {
        const cond = await waitFor(
          async () => {
            const c = ((await pod(name)).body as Pod).status?.conditions?.find((x) => x.type === 'Ready');
            return c?.status === 'False' ? c : undefined;
          },
          { timeoutMs: 10_000, intervalMs: 100, description: `pod ${name} to be unready` },
        );
        assert.equal(cond.reason, 'NodeNotReady');
      }
    });

    it('evicts pods when their tolerationSeconds run out, counted from the taint, and never those that tolerate it for good', async () => {
      await waitFor(async () => (await pod('zero')).status === 404, {
        timeoutMs: 10_000,
        intervalMs: 100,
        description: 'pod zero (tolerationSeconds 0) to be evicted at once',
      });
      const added = Date.parse(taint.timeAdded!);
      // Well inside its 6 s: still there and not marked.
      if (Date.now() < added + 4000)
        assert.equal(((await pod('short')).body as Pod).metadata.deletionTimestamp, undefined, 'not evicted before its tolerationSeconds');
      const evicted = await waitFor(async () => ((await pod('short')).body as Pod).metadata.deletionTimestamp, {
        timeoutMs: 20_000,
        intervalMs: 100,
        description: 'pod short to be evicted',
      });
      // Graceful (30 s): deletionTimestamp is the eviction time plus the grace period; with no kubelet the pod stays Terminating, as in Kubernetes.
      assert.ok(Date.parse(evicted) - 30_000 >= added + 6000, `evicted at ${evicted} (minus 30 s), tainted at ${taint.timeAdded}`);
      assert.ok((await events('TaintManagerEviction')).some((e) => e.message === `Marking for deletion Pod ${NS}/short`));
      for (const name of ['forever', 'default']) {
        assert.equal(((await pod(name)).body as Pod).metadata.deletionTimestamp, undefined, `${name} stays`);
      }
    });

    it('is Ready again, without the taints, once it heartbeats', async () => {
      await startHeartbeats(NODE);
      const back = await waitFor(
        async () => {
          const n = await node(NODE);
          return ready(n)?.status === 'True' && !n.spec?.taints?.length ? n : undefined;
        },
        { timeoutMs: 10_000, intervalMs: 100, description: 'the node to be Ready and untainted' },
      );
      assert.equal(ready(back)?.reason, 'KubeletReady');
      await waitFor(async () => (await events('NodeReady')).some((e) => e.involvedObject.name === NODE), { timeoutMs: 5000, description: 'a NodeReady event' });
      const listed = await cli('get', 'nodes');
      assert.match(listed.out, new RegExp(`^${NODE}\\s+Ready\\s`, 'm'));
    });

    it('deleting it removes its pods, terminating ones too; pods naming a node never seen wait', async () => {
      stopHeartbeats(NODE);
      await makePod('waiting', 'never-seen');
      const deleted = await cli('delete', 'node', NODE);
      assert.equal(deleted.code, 0, deleted.err);
      for (const name of ['forever', 'short', 'default']) {
        await waitFor(async () => (await pod(name)).status === 404, {
          timeoutMs: 10_000,
          intervalMs: 100,
          description: `pod ${name} to be removed with its node`,
        });
      }
      // `waiting` names a node that never existed: quarantined (40 s), since such a Node may be on its way.
      assert.equal((await pod('waiting')).status, 200);
    });
  });

  describe('cordon, uncordon and drain', () => {
    const NODE = 'busy';
    const owner = {
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-1', uid: '6d2e1f0a-0000-4000-8000-000000000001', controller: true }],
    };

    before(async () => {
      await ok('POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: NODE } });
      await startHeartbeats(NODE);
      await waitFor(async () => ready(await node(NODE))?.status === 'True', { description: 'node busy to be Ready' });
    });

    it('cordon and uncordon, as kubectl words them', async () => {
      assert.deepEqual(await cli('cordon', NODE), { code: 0, out: `node/${NODE} cordoned\n`, err: '' });
      assert.deepEqual(await cli('cordon', NODE), { code: 0, out: `node/${NODE} already cordoned\n`, err: '' });
      assert.equal((await node(NODE)).spec?.unschedulable, true);
      const listed = await cli('get', 'nodes');
      assert.match(listed.out, new RegExp(`^${NODE}\\s+Ready,SchedulingDisabled\\s`, 'm'));
      assert.deepEqual(await cli('uncordon', NODE), { code: 0, out: `node/${NODE} uncordoned\n`, err: '' });
      assert.deepEqual(await cli('uncordon', NODE), { code: 0, out: `node/${NODE} already uncordoned\n`, err: '' });
      assert.equal((await node(NODE)).spec?.unschedulable, undefined);
      assert.deepEqual(await cli('cordon', 'missing'), { code: 1, out: '', err: 'Error from server (NotFound): nodes "missing" not found\n' });
    });

    it('drain refuses pods without a controller or with emptyDir, and leaves the node cordoned', async () => {
      await makePod('managed', NODE, {}, owner);
      await makePod('bare', NODE);
      await makePod(
        'scratch',
        NODE,
        { volumes: [{ name: 'tmp', emptyDir: {} }], containers: [{ name: 'c', image: 'busybox:1.36', volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }] }] },
        owner,
      );
      const r = await cli('drain', NODE);
      assert.equal(r.code, 1);
      assert.equal(r.out, `node/${NODE} cordoned\n`);
      assert.match(
        r.err,
        /^error: unable to drain node "busy" due to error: \[cannot delete Pods with local storage \(use --delete-emptydir-data to override\): lifecycle\/scratch, cannot delete Pods that declare no controller \(use --force to override\): lifecycle\/bare\], continuing command\.\.\.\n/,
      );
      assert.doesNotMatch(r.err, /\n\s+at /);
      for (const name of ['managed', 'bare', 'scratch']) assert.equal((await pod(name)).status, 200, `${name} stays`);
      assert.equal((await node(NODE)).spec?.unschedulable, true);
    });

    it('drain --force --delete-emptydir-data evicts them all and waits until they are gone', async () => {
      const r = await cli('drain', NODE, '--force', '--delete-emptydir-data', '--grace-period', '0');
      assert.equal(r.code, 0, r.err);
      assert.equal(r.err, `Warning: deleting Pods with local storage: ${NS}/scratch; deleting Pods that declare no controller: ${NS}/bare\n`);
      const lines = r.out.split('\n').filter(Boolean);
      assert.equal(lines[0], `node/${NODE} already cordoned`);
      assert.equal(lines.at(-1), `node/${NODE} drained`);
      for (const name of ['managed', 'bare', 'scratch']) {
        assert.ok(lines.includes(`evicting pod ${NS}/${name}`), r.out);
        assert.ok(lines.includes(`pod/${name} evicted`), r.out);
        assert.equal((await pod(name)).status, 404);
      }
    });

    it('drain --timeout gives up on a pod that cannot finish (no kubelet here to stop it)', async () => {
      await makePod('stuck', NODE, { terminationGracePeriodSeconds: 30 }, owner);
      const r = await cli('drain', NODE, '--timeout', '2s');
      assert.equal(r.code, 1);
      assert.match(r.out, /evicting pod lifecycle\/stuck\n/);
      assert.match(r.err, /error when waiting for pod "stuck" in namespace "lifecycle" to terminate: global timeout reached: 2s/);
      assert.ok(((await pod('stuck')).body as Pod).metadata.deletionTimestamp, 'evicted: Terminating');
    });
  });
});
