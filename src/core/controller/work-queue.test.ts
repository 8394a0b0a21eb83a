// Work queue semantics: dedupe, per-key exclusivity, re-queue while processing, backoff, idleness.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WorkQueue } from './work-queue.js';

test('a key added twice while queued is handed out once', async () => {
  const q = new WorkQueue();
  q.add('a');
  q.add('a');
  q.add('b');
  assert.equal(q.length, 2);
  assert.equal(await q.get(), 'a');
  assert.equal(await q.get(), 'b');
  q.done('a');
  q.done('b');
  assert.ok(q.idle);
});

test('a key added while processing is not handed to a second worker until done', async () => {
  const q = new WorkQueue();
  q.add('a');
  const key = await q.get();
  q.add('a');
  assert.equal(q.length, 0, 'must not be queued while a worker holds it');
  q.done(key!);
  assert.equal(q.length, 1);
  assert.equal(await q.get(), 'a');
  q.done('a');
});

test('get waits for an add and returns undefined after shutdown', async () => {
  const q = new WorkQueue();
  const pending = q.get();
  q.add('x');
  assert.equal(await pending, 'x');
  q.done('x');
  const waiting = q.get();
  q.shutdown();
  assert.equal(await waiting, undefined);
});

test('rate limiting backs off per key and forget resets it', async () => {
  const q = new WorkQueue({ baseDelayMs: 1, maxDelayMs: 4 });
  q.addRateLimited('k');
  q.addRateLimited('k');
  assert.equal(q.failures('k'), 2);
  assert.equal(await q.get(), 'k');
  q.done('k');
  q.forget('k');
  assert.equal(q.failures('k'), 0);
  q.shutdown();
});

test('whenIdle resolves once everything queued has been processed', async () => {
  const q = new WorkQueue();
  const seen: string[] = [];
  for (const k of ['a', 'b', 'c']) q.add(k);
  const worker = (async () => {
    for (;;) {
      const k = await q.get();
      if (k === undefined) return;
      seen.push(k);
      q.done(k);
    }
  })();
  await q.whenIdle();
  assert.deepEqual(seen, ['a', 'b', 'c']);
  q.shutdown();
  await worker;
});
