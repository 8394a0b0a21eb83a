// The compactor keeps one interval of history: each tick compacts to the revision the previous tick saw.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { GoneError } from '../../core/errors.js';
import { MemoryStore } from '../../core/store/memory-store.js';
import { StoreCompactor } from './store-compactor.js';

describe('StoreCompactor', () => {
  it('compacts to the revision of the tick before, never past what watchers were last told', async () => {
    const store = new MemoryStore();
    const compactor = new StoreCompactor({ store });
    await store.create('/k/a', { n: 1 });
    assert.equal(await compactor.tick(), undefined, 'the first tick only remembers');
    const seen = await store.currentRevision();
    await store.create('/k/b', { n: 2 });
    await store.create('/k/c', { n: 3 });
    assert.equal(await compactor.tick(), seen);
    // History after `seen` is still there; before it is gone.
    const stop = new AbortController();
    const events = store.watch('/k/', { afterRevision: seen, signal: stop.signal })[Symbol.asyncIterator]();
    assert.equal((await events.next()).value?.key, '/k/b');
    stop.abort();
    const old = store.watch('/k/', { afterRevision: seen - 2 })[Symbol.asyncIterator]();
    await assert.rejects(old.next(), GoneError);
    // Values are untouched.
    assert.deepEqual((await store.get('/k/a')).value, { n: 1 });
  });

  it('does nothing while nothing is written', async () => {
    const store = new MemoryStore();
    await store.create('/k/a', { n: 1 });
    const compacted: number[] = [];
    const compactor = new StoreCompactor({
      store: {
        currentRevision: () => store.currentRevision(),
        compact: async (r) => {
          compacted.push(r);
        },
      },
    });
    await compactor.tick();
    await compactor.tick();
    await compactor.tick();
    assert.deepEqual(compacted, []);
  });

  it('keeps ticking after a failed compaction and stops with its signal', async () => {
    let calls = 0;
    const controller = new AbortController();
    const logs: string[] = [];
    const compactor = new StoreCompactor({
      store: {
        currentRevision: async () => ++calls,
        compact: async () => {
          if (calls >= 3) controller.abort();
          throw new Error('etcd away');
        },
      },
      intervalMs: 1,
      log: (m) => logs.push(m),
    });
    await compactor.start(controller.signal);
    assert.ok(calls >= 3);
    assert.ok(
      logs.some((l) => l === 'store: compaction failed: etcd away'),
      logs.join('\n'),
    );
  });
});
