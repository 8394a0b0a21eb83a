// Table-driven checks of the restart backoff sequence (0, 10, 20, 40 ... 300 s) and its resets.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RestartBackoff } from './restart-backoff.js';

const S = 1000;

describe('RestartBackoff', () => {
  it('lets the first restart go at once, then waits 10 s doubling to 5 min', () => {
    const b = new RestartBackoff();
    let now = 1_000_000;
    const waits: number[] = [];
    for (let i = 0; i < 8; i++) {
      const finishedAt = now;
      const until = b.waitUntil('p/c', finishedAt, now);
      waits.push(until === undefined ? 0 : (until - finishedAt) / S);
      now = until ?? now;
      b.next('p/c', now);
    }
    assert.deepEqual(waits, [0, 10, 20, 40, 80, 160, 300, 300]);
  });

  it('is not in backoff once the delay has passed since the container finished', () => {
    const b = new RestartBackoff();
    b.next('k', 0);
    assert.equal(b.waitUntil('k', 0, 9 * S), 10 * S);
    assert.equal(b.waitUntil('k', 0, 10 * S), undefined);
  });

  it('starts over after a container ran 10 minutes', () => {
    const b = new RestartBackoff();
    for (let i = 0; i < 4; i++) b.next('k', i);
    assert.equal(b.delayMs('k', 10), 80 * S);
    b.noteRun('k', 0, 599 * S);
    assert.equal(b.delayMs('k', 10), 80 * S);
    b.noteRun('k', 0, 600 * S);
    assert.equal(b.delayMs('k', 10), 0);
  });

  it('forgets entries untouched for twice the maximum delay', () => {
    const b = new RestartBackoff();
    b.next('k', 0);
    assert.equal(b.delayMs('k', 600 * S), 10 * S);
    assert.equal(b.delayMs('k', 600 * S + 1), 0);
  });

  it('forgets every container of a pod by prefix', () => {
    const b = new RestartBackoff();
    b.next('uid1/a', 0);
    b.next('uid1/b', 0);
    b.next('uid2/a', 0);
    b.forget('uid1/');
    assert.deepEqual([b.delayMs('uid1/a', 1), b.delayMs('uid1/b', 1), b.delayMs('uid2/a', 1)], [0, 0, 10 * S]);
  });
});
