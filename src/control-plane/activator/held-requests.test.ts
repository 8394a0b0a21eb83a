// The bounded per-function queue of requests held through a cold start.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { HeldRequests } from './held-requests.js';

describe('HeldRequests', () => {
  it('holds up to the capacity per function, and refuses more at once', async () => {
    const held = new HeldRequests({ capacity: 2 });
    const a = held.hold('ns/f', 60_000);
    const b = held.hold('ns/f', 60_000);
    assert.ok(a && b);
    assert.equal(held.hold('ns/f', 60_000), undefined);
    // Another function has its own bound.
    const other = held.hold('ns/g', 60_000);
    assert.ok(other);
    assert.equal(held.count('ns/f'), 2);
    held.wake('ns/f');
    assert.deepEqual(await Promise.all([a, b]), [{ type: 'woken' }, { type: 'woken' }]);
    assert.equal(held.count('ns/f'), 0);
    assert.ok(held.hold('ns/f', 60_000), 'room again once released');
    held.fail('ns/g', 'no');
    assert.deepEqual(await other, { type: 'failed', message: 'no' });
    held.wake('ns/f');
  });

  it('a deadline and an abort each release one request', async () => {
    const held = new HeldRequests();
    assert.deepEqual(await held.hold('ns/f', 0), { type: 'deadline' });
    const stop = new AbortController();
    const waiting = held.hold('ns/f', 60_000, stop.signal)!;
    stop.abort();
    assert.deepEqual(await waiting, { type: 'aborted' });
    assert.equal(held.count('ns/f'), 0);
    assert.deepEqual(held.keys(), []);
  });

  it('close releases every held request of every function', async () => {
    const held = new HeldRequests();
    const waiting = [held.hold('ns/f', 60_000)!, held.hold('ns/g', 60_000)!];
    held.close();
    assert.deepEqual(await Promise.all(waiting), [{ type: 'closing' }, { type: 'closing' }]);
    assert.deepEqual(held.keys(), []);
  });

  it('an already aborted signal releases at once', async () => {
    const held = new HeldRequests();
    assert.deepEqual(await held.hold('ns/f', 60_000, AbortSignal.abort()), { type: 'aborted' });
  });
});
