// Scheduler events on a recording sink: Scheduled wording, one aggregated FailedScheduling per pod, bounded background writes.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SchedulerEvents, type SchedulerEventSink } from './scheduler-events.js';
import { pod } from './scheduler-fixtures.js';
import { WritePump } from './write-pump.js';

function recorder() {
  const writes: { op: 'create' | 'patch'; namespace: string; name: string; body: Record<string, unknown> }[] = [];
  const sink: SchedulerEventSink = {
    create: async (namespace, event) => {
      writes.push({ op: 'create', namespace, name: (event.metadata as { name: string }).name, body: event });
    },
    patch: async (namespace, name, patch) => {
      writes.push({ op: 'patch', namespace, name, body: patch });
    },
  };
  return { writes, sink };
}

describe('SchedulerEvents', () => {
  it('records Scheduled as kube-scheduler words it', async () => {
    const { writes, sink } = recorder();
    const pump = new WritePump({ concurrency: 2, maxQueued: 10 });
    new SchedulerEvents({ sink, pump, now: () => new Date('2024-01-01T00:00:00Z') }).scheduled(pod({ name: 'web', namespace: 'shop' }), 'n1');
    await pump.whenIdle();
    assert.equal(writes.length, 1);
    const e = writes[0]!.body;
    assert.equal(writes[0]!.namespace, 'shop');
    assert.deepEqual(
      [e.type, e.reason, e.message, e.source],
      ['Normal', 'Scheduled', 'Successfully assigned shop/web to n1', { component: 'default-scheduler' }],
    );
    assert.deepEqual(e.involvedObject, { kind: 'Pod', apiVersion: 'v1', namespace: 'shop', name: 'web', uid: 'uid-web' });
    assert.equal(e.firstTimestamp, '2024-01-01T00:00:00Z');
  });

  it('keeps one FailedScheduling per pod: repeats bump its count, rewritten only when the message changes or a while has passed', async () => {
    const { writes, sink } = recorder();
    const pump = new WritePump({ concurrency: 4, maxQueued: 100 });
    let now = Date.parse('2024-01-01T00:00:00Z');
    const events = new SchedulerEvents({ sink, pump, now: () => new Date(now), repeatIntervalMs: 60_000 });
    const p = pod({ name: 'big' });
    events.failedScheduling(p, '0/1 nodes are available: 1 Insufficient cpu.');
    await pump.whenIdle();
    for (let i = 0; i < 5; i++) {
      now += 1000;
      events.failedScheduling(p, '0/1 nodes are available: 1 Insufficient cpu.');
    }
    await pump.whenIdle();
    assert.equal(writes.length, 1, 'repeats within the interval are only counted');
    now += 1000;
    events.failedScheduling(p, '0/2 nodes are available: 2 Insufficient cpu.');
    await pump.whenIdle();
    assert.equal(writes.length, 2);
    assert.deepEqual(writes[1], {
      op: 'patch',
      namespace: 'default',
      name: writes[0]!.name,
      body: { count: 7, message: '0/2 nodes are available: 2 Insufficient cpu.', lastTimestamp: '2024-01-01T00:00:06Z' },
    });
    now += 60_000;
    events.failedScheduling(p, '0/2 nodes are available: 2 Insufficient cpu.');
    await pump.whenIdle();
    assert.equal(writes.length, 3, 'after the interval a repeat is written');
    assert.equal(writes[2]!.body.count, 8);
    const created = writes[0]!.body;
    assert.deepEqual([created.type, created.reason, created.count], ['Warning', 'FailedScheduling', 1]);
    events.forget(p.metadata.uid);
    assert.equal(events.tracked, 0);
  });

  it('makes a new Event when the old one was deleted', async () => {
    const { writes, sink } = recorder();
    let gone = false;
    const pump = new WritePump({ concurrency: 1, maxQueued: 10 });
    const events = new SchedulerEvents({
      sink: {
        create: sink.create,
        patch: async (ns, name, patch) => {
          if (gone) throw Object.assign(new Error('not found'), { code: 404 });
          await sink.patch(ns, name, patch);
        },
      },
      pump,
    });
    events.failedScheduling(pod({ name: 'p' }), 'one');
    await pump.whenIdle();
    gone = true;
    events.failedScheduling(pod({ name: 'p' }), 'two');
    await pump.whenIdle();
    assert.deepEqual(
      writes.map((w) => [w.op, w.body.message]),
      [
        ['create', 'one'],
        ['create', 'two'],
      ],
    );
  });
});

describe('WritePump', () => {
  it('runs at most `concurrency` writes at once and drops what overflows the queue', async () => {
    const pump = new WritePump({ concurrency: 2, maxQueued: 3 });
    let running = 0;
    let peak = 0;
    const release: (() => void)[] = [];
    const write = () =>
      new Promise<void>((resolve) => {
        running++;
        peak = Math.max(peak, running);
        release.push(() => {
          running--;
          resolve();
        });
      });
    const accepted = Array.from({ length: 7 }, () => pump.push(write));
    assert.deepEqual(accepted, [true, true, true, true, true, false, false], 'two run, three wait, two are dropped');
    assert.equal(pump.dropped, 2);
    while (release.length || pump.running) {
      release.shift()?.();
      await new Promise((r) => setImmediate(r));
    }
    await pump.whenIdle();
    assert.equal(peak, 2);
  });

  it('starts at most perSecond writes a second', async () => {
    const pump = new WritePump({ concurrency: 100, maxQueued: 100, perSecond: 20 });
    let ran = 0;
    const started = Date.now();
    for (let i = 0; i < 25; i++)
      pump.push(async () => {
        ran++;
      });
    assert.equal(ran, 20, "a second's worth at once");
    assert.equal(pump.queued, 5);
    await pump.whenIdle();
    assert.equal(ran, 25);
    assert.ok(Date.now() - started >= 200, 'the other five took a quarter of a second');
  });

  it('skips writes that are no longer needed without spending the rate on them, and drops the rest at close', async () => {
    const pump = new WritePump({ concurrency: 10, maxQueued: 100, perSecond: 2 });
    const ran: number[] = [];
    for (let i = 0; i < 6; i++)
      pump.push(
        async () => {
          ran.push(i);
        },
        () => i % 2 === 1,
      );
    assert.deepEqual(ran, [0, 2], 'two tokens: writes 0 and 2 (1 skipped on the way)');
    pump.close();
    assert.equal(pump.queued, 0);
    await pump.whenIdle();
    assert.deepEqual(ran, [0, 2]);
  });

  it('logs a failed write and goes on', async () => {
    const logged: string[] = [];
    const pump = new WritePump({ concurrency: 1, maxQueued: 5, log: (m) => logged.push(m) });
    let ran = false;
    pump.push(async () => {
      throw new Error('etcd is down');
    });
    pump.push(async () => {
      ran = true;
    });
    await pump.whenIdle();
    assert.deepEqual(logged, ['etcd is down']);
    assert.equal(ran, true);
  });
});
