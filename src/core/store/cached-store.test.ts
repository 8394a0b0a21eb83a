// The Store contract on CachedStore over MemoryStore, and what only a watch cache must do.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setMaxListeners } from 'node:events';
import { GoneError } from '../errors.js';
import { waitFor } from '../wait-for.js';
import { CachedStore, SHARED_EVENT_MEMO } from './cached-store.js';
import { MemoryStore } from './memory-store.js';
import { runStoreContract } from './store-contract.js';
import type { StoreWatchEvent } from './store.js';

runStoreContract('cached(memory)', async () => {
  // The contract's keys live under /contract/: cache the whole key space.
  const store = await CachedStore.open(new MemoryStore(), { prefix: '/' });
  return { store, cleanup: () => store.close() };
});

/** Reads events from an iterator until `n` arrived, the watch ended, or a deadline passed. */
async function collect<T>(iterator: AsyncIterator<StoreWatchEvent<T>>, n: number, timeoutMs = 10_000): Promise<StoreWatchEvent<T>[]> {
  const out: StoreWatchEvent<T>[] = [];
  const deadline = Date.now() + timeoutMs;
  while (out.length < n) {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`got ${out.length} of ${n} events in ${timeoutMs} ms`)), Math.max(0, deadline - Date.now()));
    });
    try {
      const next = await Promise.race([iterator.next(), late]);
      if (next.done) break;
      out.push(next.value);
    } finally {
      clearTimeout(timer);
    }
  }
  return out;
}

describe('CachedStore', () => {
  it('lists what was just written, served from its memory', async () => {
    const inner = new MemoryStore();
    const cache = await CachedStore.open(inner);
    try {
      for (let i = 0; i < 50; i++) {
        const r = await cache.create(`/registry/pods/default/p${String(i).padStart(3, '0')}`, { i });
        const list = await cache.list<{ i: number }>('/registry/pods/');
        assert.equal(list.items.length, i + 1);
        assert.ok(list.revision >= r);
        assert.equal(list.items.at(-1)!.value.i, i);
      }
      await cache.create('/other/x', {});
      // Writes outside the cached prefix still advance the revision the cache waits for.
      const list = await cache.list('/registry/');
      assert.equal(list.revision, await inner.currentRevision());
      assert.equal(cache.revision, list.revision);
      // Outside the prefix it asks the inner store.
      assert.equal((await cache.list('/other/')).items.length, 1);
    } finally {
      await cache.close();
    }
  });

  it('loads what the inner store held before it started, in key order', async () => {
    const inner = new MemoryStore();
    await inner.create('/registry/b', { v: 'b' });
    await inner.create('/registry/a', { v: 'a' });
    await inner.create('/registry/c', { v: 'c' });
    await inner.delete('/registry/c');
    const cache = await CachedStore.open(inner);
    try {
      const list = await cache.listRaw('/registry/');
      assert.deepEqual(
        list.items.map((i) => i.key),
        ['/registry/a', '/registry/b'],
      );
      assert.equal(list.revision, 4);
    } finally {
      await cache.close();
    }
  });

  it('hands every watcher of an event the same shared event, and lets go of what was made of it once it is old', async () => {
    const cache = await CachedStore.open(new MemoryStore());
    const controller = new AbortController();
    try {
      const from = cache.revision;
      const a = cache.watch<{ i: number }>('/registry/', { afterRevision: from, signal: controller.signal })[Symbol.asyncIterator]();
      const b = cache.watch<{ i: number }>('/registry/', { afterRevision: from, signal: controller.signal })[Symbol.asyncIterator]();
      await cache.create('/registry/k', { i: 1 });
      const [ea, eb] = [(await a.next()).value!, (await b.next()).value!];
      assert.ok(ea.shared && ea.shared === eb.shared);
      assert.equal(ea.shared.json, '{"i":1}');
      // Each watcher still gets a value of its own to change.
      assert.notEqual(ea.value, eb.value);
      assert.deepEqual(ea.value, { i: 1 });
      ea.shared.encoded = new Map([['json:ADDED', new Uint8Array(1)]]);
      let revision = 0;
      for (let n = 0; n < SHARED_EVENT_MEMO - 1; n++) revision = await cache.create(`/registry/n${n}`, { n });
      // The cache applies what the inner store did a little later.
      await waitFor(() => cache.revision >= revision, { timeoutMs: 5000, description: 'the cache to apply the creates' });
      assert.ok(ea.shared.encoded, 'kept while among the newest');
      revision = await cache.create('/registry/last', {});
      await waitFor(() => cache.revision >= revision, { timeoutMs: 5000, description: 'the cache to apply the last create' });
      assert.equal(ea.shared.encoded, undefined);
    } finally {
      controller.abort();
      await cache.close();
    }
  });

  it('fans every event out to 100 watchers', async () => {
    const cache = await CachedStore.open(new MemoryStore());
    const controller = new AbortController();
    // A hundred watchers share this one signal, each listening for its abort.
    setMaxListeners(200, controller.signal);
    try {
      const from = cache.revision;
      const watchers = Array.from({ length: 100 }, () =>
        cache.watch<{ i: number }>('/registry/', { afterRevision: from, signal: controller.signal })[Symbol.asyncIterator](),
      );
      const received = Promise.all(watchers.map((w) => collect(w, 200)));
      for (let i = 0; i < 100; i++) {
        const r = await cache.create(`/registry/k${i}`, { i });
        await cache.update(`/registry/k${i}`, { i: -i }, r);
      }
      for (const events of await received) {
        assert.equal(events.length, 200);
        assert.deepEqual(
          events.slice(0, 2).map((e) => e.type),
          ['ADDED', 'MODIFIED'],
        );
        for (let j = 1; j < events.length; j++) assert.ok(events[j]!.revision > events[j - 1]!.revision);
      }
    } finally {
      controller.abort();
      await cache.close();
    }
  });

  it('ends a watcher that fell behind its history with Gone, without holding up others', async () => {
    const cache = await CachedStore.open(new MemoryStore(), { historySize: 20 });
    const controller = new AbortController();
    try {
      const from = cache.revision;
      const slow = cache.watch('/registry/', { afterRevision: from, signal: controller.signal })[Symbol.asyncIterator]();
      const fast = cache.watch('/registry/', { afterRevision: from, signal: controller.signal })[Symbol.asyncIterator]();
      const fastEvents = collect(fast, 50);
      for (let i = 0; i < 50; i++) await cache.create(`/registry/k${i}`, {});
      assert.equal((await fastEvents).length, 50);
      await assert.rejects(slow.next(), GoneError);
    } finally {
      controller.abort();
      await cache.close();
    }
  });

  it('asks the inner store for history older than its own, and relays its Gone', async () => {
    const inner = new MemoryStore();
    const first = await inner.create('/registry/early', { v: 1 });
    await inner.create('/registry/later', { v: 2 });
    const cache = await CachedStore.open(inner, { historySize: 5 });
    const controller = new AbortController();
    try {
      // The cache started after both writes: only the inner store has them as events.
      const events = await collect(cache.watch('/registry/', { afterRevision: first - 1, signal: controller.signal })[Symbol.asyncIterator](), 2);
      assert.deepEqual(
        events.map((e) => e.key),
        ['/registry/early', '/registry/later'],
      );
      await cache.compact(await cache.currentRevision());
      await assert.rejects(collect(cache.watch('/registry/', { afterRevision: first - 1, signal: controller.signal })[Symbol.asyncIterator](), 1), GoneError);
    } finally {
      controller.abort();
      await cache.close();
    }
  });

  it('relists when its inner watch is Gone, and ends its watchers with Gone so they relist too', async () => {
    const inner = new FlakyStore();
    const cache = await CachedStore.open(inner, { retryDelayMs: 1 });
    const controller = new AbortController();
    try {
      await cache.create('/registry/a', { v: 1 });
      await waitFor(() => cache.revision === 1, { description: 'the cache to apply the first write' });
      const watcher = cache.watch('/registry/', { afterRevision: 1, signal: controller.signal })[Symbol.asyncIterator]();
      // The cache's watch breaks with Gone instead of delivering the next write.
      inner.failAt = { revision: 2, error: new GoneError('compacted') };
      await cache.create('/registry/b', { v: 2 });
      await assert.rejects(watcher.next(), GoneError);
      await waitFor(() => cache.revision === 2, { description: 'the cache to relist' });
      assert.deepEqual(
        (await cache.list('/registry/')).items.map((i) => i.key),
        ['/registry/a', '/registry/b'],
      );
      // Watchers from after the relist see new writes again.
      const fresh = cache.watch('/registry/', { afterRevision: 2, signal: controller.signal })[Symbol.asyncIterator]();
      await cache.create('/registry/c', { v: 3 });
      assert.deepEqual(
        (await collect(fresh, 1)).map((e) => e.key),
        ['/registry/c'],
      );
    } finally {
      controller.abort();
      await cache.close();
    }
  });
});

/** A MemoryStore whose watches can be made to fail at a revision, to exercise the cache's recovery. */
class FlakyStore extends MemoryStore {
  /** The next watch to reach this revision throws `error` instead of delivering it (once). */
  failAt: { revision: number; error: Error } | undefined;

  override watch<T>(prefix: string, options: Parameters<MemoryStore['watch']>[1]): AsyncIterable<StoreWatchEvent<T>> {
    const events = super.watch<T>(prefix, options);
    const self = this;
    return {
      async *[Symbol.asyncIterator]() {
        for await (const event of events) {
          const failAt = self.failAt;
          if (failAt && event.revision >= failAt.revision) {
            self.failAt = undefined;
            throw failAt.error;
          }
          yield event;
        }
      },
    };
  }
}
