// Time-weighted in-flight averages over windows, on a manual clock.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FunctionConcurrency } from './concurrency.js';

function clock(start = 1_000_000) {
  let t = start;
  return {
    now: () => t,
    advance: (ms: number) => {
      t += ms;
    },
  };
}

const close = (actual: number, expected: number) => assert.ok(Math.abs(actual - expected) < 1e-9, `${actual} != ${expected}`);

describe('FunctionConcurrency', () => {
  it('averages the number in flight over time, however long each request is', () => {
    const c = clock();
    const f = new FunctionConcurrency({ now: c.now });
    // Two requests for the whole 10 s, a third for 5 of them: 2.5 on average.
    f.begin();
    f.begin();
    c.advance(5_000);
    f.begin();
    c.advance(5_000);
    f.end();
    close(f.average(10_000), 2.5);
    assert.equal(f.inFlight, 2);
    // The last 2 s had all three in flight.
    close(f.average(2_000), 3);
  });

  it('a window longer than the history counts only since the start (or a restart)', () => {
    const c = clock();
    const f = new FunctionConcurrency({ now: c.now });
    c.advance(30_000);
    f.begin();
    c.advance(3_000);
    // 3 s of 1 in flight over the 33 s seen: small.
    close(f.average(60_000), 3 / 33);
    // A scale from zero restarts the window: what counts is the present.
    f.restartWindow();
    c.advance(2_000);
    close(f.average(60_000), 1);
    close(f.average(6_000), 1);
  });

  it('old load leaves the short window first', () => {
    const c = clock();
    const f = new FunctionConcurrency({ now: c.now });
    for (let i = 0; i < 10; i++) f.begin();
    c.advance(20_000);
    for (let i = 0; i < 10; i++) f.end();
    c.advance(10_000);
    close(f.average(6_000), 0);
    close(f.average(60_000), (10 * 20) / 30);
  });

  it('keeps a constant count across a long quiet spell without walking every bucket', () => {
    const c = clock();
    const f = new FunctionConcurrency({ now: c.now, keepMs: 60_000 });
    f.begin();
    c.advance(10 * 60_000);
    close(f.average(60_000), 1);
    f.end();
    c.advance(60_000);
    close(f.average(60_000), 0);
  });

  it('lastActiveAt: the last arrival or departure, or now while requests are in flight', () => {
    const c = clock();
    const f = new FunctionConcurrency({ now: c.now });
    assert.equal(f.lastActiveAt, -Infinity);
    f.begin();
    c.advance(4_000);
    assert.equal(f.lastActiveAt, c.now());
    f.end();
    const ended = c.now();
    c.advance(7_000);
    assert.equal(f.lastActiveAt, ended);
  });
});
