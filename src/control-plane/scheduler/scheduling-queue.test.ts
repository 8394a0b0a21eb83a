// The scheduling queue on a fake clock: FIFO, per-pod backoff, parking until the cluster changes, the 30 s retry, changes during an attempt.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SchedulingQueue } from './scheduling-queue.js';

function setup() {
  let now = 1_000_000;
  const q = new SchedulingQueue({ now: () => now, initialBackoffMs: 1000, maxBackoffMs: 10_000, unschedulableTimeoutMs: 30_000 });
  return {
    q,
    advance: (ms: number) => {
      now += ms;
      q.tick();
    },
  };
}

const drain = (q: SchedulingQueue) => {
  const out: string[] = [];
  for (let k = q.tryPop(); k !== undefined; k = q.tryPop()) out.push(k);
  return out;
};

describe('SchedulingQueue', () => {
  it('hands out new pods first in, first out, each once', () => {
    const { q } = setup();
    for (const k of ['a', 'b', 'a', 'c']) q.add(k);
    assert.deepEqual(drain(q), ['a', 'b', 'c']);
  });

  it('parks an unschedulable pod until the cluster changes, then respects its backoff', () => {
    const { q, advance } = setup();
    q.add('a');
    q.tryPop();
    q.unschedulable('a');
    assert.deepEqual(q.stats, { active: 0, backoff: 0, unschedulable: 1, inFlight: 0 });
    advance(500);
    q.moveAllToActiveOrBackoff();
    assert.deepEqual(drain(q), [], 'still backing off (1 s after the first attempt)');
    advance(500);
    assert.deepEqual(drain(q), ['a']);
  });

  it('doubles the backoff per attempt up to the maximum', () => {
    const { q } = setup();
    q.add('a');
    const ends: number[] = [];
    for (let i = 0; i < 6; i++) {
      q.tryPop();
      q.retry('a');
      ends.push(q.backoffEnds('a') - 1_000_000);
    }
    assert.deepEqual(ends, [1000, 2000, 4000, 8000, 10_000, 10_000]);
  });

  it('retries a parked pod after 30 s even when nothing changes', () => {
    const { q, advance } = setup();
    q.add('a');
    q.tryPop();
    q.unschedulable('a');
    advance(29_000);
    assert.deepEqual(drain(q), []);
    advance(1_000);
    assert.deepEqual(drain(q), ['a']);
  });

  it('does not park a pod when the cluster changed while it was being tried', () => {
    const { q, advance } = setup();
    q.add('a');
    q.tryPop();
    q.moveAllToActiveOrBackoff();
    q.unschedulable('a');
    assert.equal(q.stats.unschedulable, 0);
    advance(1000);
    assert.deepEqual(drain(q), ['a']);
  });

  it('does not park a pod that changed while it was being tried', () => {
    const { q, advance } = setup();
    q.add('a');
    q.tryPop();
    q.add('a');
    assert.deepEqual(drain(q), [], 'not handed out twice at once');
    q.unschedulable('a');
    advance(1000);
    assert.deepEqual(drain(q), ['a']);
  });

  it('an update of a parked pod moves it, after its backoff', () => {
    const { q, advance } = setup();
    q.add('a');
    q.tryPop();
    q.unschedulable('a');
    q.add('a');
    assert.equal(q.stats.backoff, 1);
    advance(1000);
    assert.deepEqual(drain(q), ['a']);
  });

  it('forgets deleted and bound pods wherever they are', () => {
    const { q, advance } = setup();
    for (const k of ['a', 'b', 'c']) q.add(k);
    q.tryPop();
    q.unschedulable('a');
    q.delete('a');
    q.delete('b');
    q.moveAllToActiveOrBackoff();
    advance(60_000);
    assert.deepEqual(drain(q), ['c']);
    assert.equal(q.has('a'), false);
    assert.equal(q.attempts('a'), 0);
  });

  it('pop waits for a key and ends at shutdown', async () => {
    const { q } = setup();
    const waiting = q.pop();
    q.add('x');
    assert.equal(await waiting, 'x');
    const next = q.pop();
    q.shutdown();
    assert.equal(await next, undefined);
  });
});
