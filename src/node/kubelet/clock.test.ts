// The manual clock the kubelet tests step through time with: timers in due order, zero delays, cancel, abortable sleep.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock, sleep, systemClock } from './clock.js';

describe('ManualClock', () => {
  it('runs timers in due order as advance passes them, each at its own time', async () => {
    const clock = new ManualClock(1000);
    const fired: [string, number][] = [];
    clock.setTimer(300, () => fired.push(['c', clock.now()]));
    clock.setTimer(100, () => fired.push(['a', clock.now()]));
    clock.setTimer(200, () => fired.push(['b', clock.now()]));
    await clock.advance(250);
    assert.deepEqual(fired, [
      ['a', 1100],
      ['b', 1200],
    ]);
    assert.equal(clock.now(), 1250);
    assert.equal(clock.pendingTimers, 1);
    await clock.advance(50);
    assert.deepEqual(fired.at(-1), ['c', 1300]);
  });

  it('runs a timer set by another timer within the same advance when it falls due in it', async () => {
    const clock = new ManualClock(0);
    const fired: number[] = [];
    const tick = () => {
      fired.push(clock.now());
      clock.setTimer(10, tick);
    };
    clock.setTimer(10, tick);
    await clock.advance(35);
    assert.deepEqual(fired, [10, 20, 30]);
  });

  it('gives async work started by a timer a turn before the next one falls due', async () => {
    const clock = new ManualClock(0);
    const fired: number[] = [];
    const loop = async () => {
      while (await sleep(clock, 5)) {
        await Promise.resolve();
        fired.push(clock.now());
        if (fired.length === 3) return;
      }
    };
    const done = loop();
    await clock.advance(20);
    await done;
    assert.deepEqual(fired, [5, 10, 15]);
  });

  it('runs a zero delay without advancing, and cancelled timers never', async () => {
    const clock = new ManualClock('2030-01-01T00:00:00.000Z');
    assert.equal(clock.date().toISOString(), '2030-01-01T00:00:00.000Z');
    const fired: string[] = [];
    const cancelLater = clock.setTimer(10, () => fired.push('later'));
    const cancelNow = clock.setTimer(0, () => fired.push('cancelled'));
    cancelNow();
    assert.equal(await sleep(clock, 0), true);
    cancelLater();
    await clock.advance(20);
    assert.deepEqual(fired, []);
  });

  it('ends a sleep with false when its signal aborts, and drops its timer', async () => {
    const clock = new ManualClock(0);
    const stop = new AbortController();
    const slept = sleep(clock, 1000, stop.signal);
    assert.equal(clock.pendingTimers, 1);
    stop.abort();
    assert.equal(await slept, false);
    assert.equal(clock.pendingTimers, 0);
    assert.equal(await sleep(clock, 10, stop.signal), false);
  });
});

describe('systemClock', () => {
  it('reads the real time and sleeps on real timers', async () => {
    const before = Date.now();
    assert.ok(Math.abs(systemClock.now() - before) < 1000);
    assert.equal(await sleep(systemClock, 0), true);
  });
});
