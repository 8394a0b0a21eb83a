// The function autoscaler's shell on a manual clock: writes only changes, scales from zero when poked, keeps a scale set by hand for the idle grace.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ReplicaSet } from '../../core/api/replicaset.js';
import { FunctionConcurrency } from './concurrency.js';
import { FunctionAutoscaler, type ScaleChange } from './function-autoscaler.js';

function harness(settings = { target: 10, minScale: 0, maxScale: 10, idleGraceMs: 30_000 }) {
  let t = 1_000_000;
  const now = () => t;
  let revision = 10;
  let rs: ReplicaSet = {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name: 'hello-v1', namespace: 'ns', resourceVersion: String(revision) },
    spec: { replicas: 0 },
  } as ReplicaSet;
  const conc = new FunctionConcurrency({ now });
  let ready = 0;
  const writes: number[] = [];
  const changes: ScaleChange[] = [];
  const autoscaler = new FunctionAutoscaler({
    now,
    view: {
      functionKeys: () => ['ns/hello'],
      settings: () => settings,
      readyPods: () => ready,
      currentReplicaSet: () => rs,
      concurrency: () => conc,
    },
    scale: async (_rs, replicas) => {
      writes.push(replicas);
      // The informer's copy lags: the written object has a newer revision than `rs` until `catchUp`.
      return { ...rs, metadata: { ...rs.metadata, resourceVersion: String(++revision) }, spec: { ...rs.spec, replicas } } as ReplicaSet;
    },
    onScaled: (c) => changes.push(c),
  });
  return {
    autoscaler,
    conc,
    writes,
    changes,
    advance: (ms: number) => {
      t += ms;
    },
    setReady: (n: number) => {
      ready = n;
    },
    /** The informer sees the latest write (or someone else's). */
    /** A new version's ReplicaSet becomes the current one. */
    newVersion: (name: string, replicas: number) => {
      rs = { ...rs, metadata: { ...rs.metadata, name, resourceVersion: String(++revision) }, spec: { ...rs.spec, replicas } } as ReplicaSet;
    },
    setReplicas: (n: number) => {
      rs = { ...rs, metadata: { ...rs.metadata, resourceVersion: String(++revision) }, spec: { ...rs.spec, replicas: n } } as ReplicaSet;
    },
  };
}

describe('FunctionAutoscaler', () => {
  it('a held request at zero: one pod at once, written once even before the informer catches up', async () => {
    const h = harness();
    await h.autoscaler.poke('ns/hello');
    assert.deepEqual(h.writes, []);
    h.conc.begin();
    await h.autoscaler.poke('ns/hello');
    await h.autoscaler.poke('ns/hello');
    assert.deepEqual(h.writes, [1]);
    assert.match(h.changes[0]!.reason, /1 in flight|1 request\(s\) in flight/);
    h.setReplicas(1);
    h.setReady(1);
    h.conc.end();
    h.advance(2_000);
    await h.autoscaler.poke('ns/hello');
    assert.deepEqual(h.writes, [1], 'idle within the grace: kept');
    h.advance(30_000);
    await h.autoscaler.poke('ns/hello');
    assert.deepEqual(h.writes, [1, 0]);
    assert.match(h.changes[1]!.reason, /idle for 32 s \(grace 30 s\)/);
  });

  it('a scale set by hand is kept for the idle grace, then goes', async () => {
    const h = harness({ target: 10, minScale: 0, maxScale: 10, idleGraceMs: 10_000 });
    await h.autoscaler.poke('ns/hello');
    h.advance(60_000);
    h.setReplicas(1);
    h.setReady(1);
    await h.autoscaler.poke('ns/hello');
    h.advance(9_000);
    await h.autoscaler.poke('ns/hello');
    assert.deepEqual(h.writes, []);
    h.advance(1_000);
    await h.autoscaler.poke('ns/hello');
    assert.deepEqual(h.writes, [0]);
  });

  it('load: scales out to ceil(concurrency / target), and back at most by half per tick', async () => {
    const h = harness();
    await h.autoscaler.poke('ns/hello');
    for (let i = 0; i < 35; i++) h.conc.begin();
    h.conc.restartWindow();
    h.advance(2_000);
    await h.autoscaler.poke('ns/hello');
    assert.deepEqual(h.writes, [4]);
    h.setReplicas(4);
    h.setReady(4);
    for (let i = 0; i < 34; i++) h.conc.end();
    // 1 in flight now; the stable window still remembers the load, and panic holds the size for a window.
    h.advance(2_000);
    await h.autoscaler.poke('ns/hello');
    assert.deepEqual(h.writes, [4]);
    h.advance(62_000);
    await h.autoscaler.poke('ns/hello');
    assert.deepEqual(h.writes, [4, 2]);
    assert.equal(h.changes.at(-1)!.panicking, false);
  });

  it("a new version at zero (a hard update) gets no pod from the old version's calls, only from its own first call", async () => {
    const h = harness();
    h.conc.begin();
    await h.autoscaler.poke('ns/hello');
    assert.deepEqual(h.writes, [1]);
    h.setReplicas(1);
    h.setReady(1);
    h.conc.end();
    h.advance(2_000);
    await h.autoscaler.poke('ns/hello');
    // Hard update: hello-v2 at 0, hello-v1's pods gone; the windows still remember v1's call.
    h.newVersion('hello-v2', 0);
    h.setReady(0);
    for (let i = 0; i < 3; i++) {
      h.advance(2_000);
      await h.autoscaler.poke('ns/hello');
    }
    assert.deepEqual(h.writes, [1], 'no pod before a call');
    h.conc.begin();
    await h.autoscaler.poke('ns/hello');
    assert.deepEqual(h.writes, [1, 1]);
    assert.equal(h.changes.at(-1)!.replicaSet.metadata.name, 'hello-v2');
  });
});
