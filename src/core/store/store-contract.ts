// The one contract suite every Store implementation must pass (memory and etcd run it).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { AlreadyExistsError, ConflictError, GoneError, NotFoundError } from '../errors.js';
import { failedKey, type Store } from './store.js';
import { takeEvents as take } from '../take-events.js';

export interface OpenedStore {
  store: Store;
  cleanup(): Promise<void>;
}

export function runStoreContract(name: string, open: () => Promise<OpenedStore>): void {
  describe(`Store contract: ${name}`, () => {
    let opened: OpenedStore;
    let store: Store;
    let n = 0;
    /** A fresh key prefix per test, so tests never see each other's keys. */
    const fresh = () => `/contract/${Date.now()}-${process.pid}-${n++}/`;

    before(async () => {
      opened = await open();
      store = opened.store;
    });
    after(async () => {
      await opened?.cleanup();
    });

    it('creates, gets, updates and deletes', async () => {
      const p = fresh();
      const r1 = await store.create(`${p}a`, { v: 1 });
      const got = await store.get<{ v: number }>(`${p}a`);
      assert.deepEqual(got, { key: `${p}a`, value: { v: 1 }, revision: r1 });
      const r2 = await store.update(`${p}a`, { v: 2 }, r1);
      assert.ok(r2 > r1);
      assert.equal((await store.get<{ v: number }>(`${p}a`)).value.v, 2);
      const del = await store.delete<{ v: number }>(`${p}a`, r2);
      assert.ok(del.revision > r2);
      assert.deepEqual(del.value, { v: 2 });
      await assert.rejects(store.get(`${p}a`), NotFoundError);
    });

    it('refuses a second create of a key with AlreadyExists', async () => {
      const p = fresh();
      await store.create(`${p}a`, {});
      await assert.rejects(store.create(`${p}a`, {}), AlreadyExistsError);
    });

    it('answers NotFound for get, update and delete of an absent key', async () => {
      const p = fresh();
      await assert.rejects(store.get(`${p}x`), NotFoundError);
      await assert.rejects(store.update(`${p}x`, {}, 1), NotFoundError);
      await assert.rejects(store.delete(`${p}x`), NotFoundError);
      await assert.rejects(store.delete(`${p}x`, 1), NotFoundError);
    });

    it('answers Conflict for a stale revision on update and delete', async () => {
      const p = fresh();
      const r1 = await store.create(`${p}a`, { v: 1 });
      await store.update(`${p}a`, { v: 2 }, r1);
      await assert.rejects(store.update(`${p}a`, { v: 3 }, r1), ConflictError);
      await assert.rejects(store.delete(`${p}a`, r1), ConflictError);
      assert.equal((await store.get<{ v: number }>(`${p}a`)).value.v, 2);
    });

    it('lists by prefix, ordered by key, at the revision of the latest write', async () => {
      const p = fresh();
      await store.create(`${p}b/2`, { k: 'b2' });
      await store.create(`${p}b/1`, { k: 'b1' });
      await store.create(`${p}bc/1`, { k: 'bc1' });
      const last = await store.create(`${p}a/1`, { k: 'a1' });
      const list = await store.list<{ k: string }>(`${p}b/`);
      assert.deepEqual(
        list.items.map((i) => i.value.k),
        ['b1', 'b2'],
        'no sibling prefix leaks in',
      );
      assert.ok(list.revision >= last);
      assert.equal((await store.currentRevision()) >= last, true);
    });

    it('hands out copies: mutating a returned value does not change the store', async () => {
      const p = fresh();
      const value = { nested: { v: 1 } };
      await store.create(`${p}a`, value);
      value.nested.v = 99;
      const got = await store.get<{ nested: { v: number } }>(`${p}a`);
      got.value.nested.v = 42;
      (await store.list<{ nested: { v: number } }>(p)).items[0]!.value.nested.v = 7;
      assert.equal((await store.get<{ nested: { v: number } }>(`${p}a`)).value.nested.v, 1);
    });

    it('watches from a revision: every later event, in order, without gaps, then live ones', async () => {
      const p = fresh();
      const start = await store.create(`${p}a`, { v: 1 });
      const r2 = await store.update(`${p}a`, { v: 2 }, start);
      await store.create(`${p}b`, { v: 1 });
      await store.create(`/elsewhere${p}c`, { v: 1 });
      await store.delete(`${p}a`, r2);
      const controller = new AbortController();
      const watch = store.watch<{ v: number }>(p, { afterRevision: start, signal: controller.signal });
      const iterator = watch[Symbol.asyncIterator]();
      const first = await take({ [Symbol.asyncIterator]: () => iterator }, 3);
      assert.deepEqual(
        first.map((e) => `${e.type} ${e.key.slice(p.length)} ${e.value.v}`),
        ['MODIFIED a 2', 'ADDED b 1', 'DELETED a 2'],
      );
      for (let i = 1; i < first.length; i++) assert.ok(first[i]!.revision > first[i - 1]!.revision);
      const live = await store.create(`${p}d`, { v: 4 });
      const [next] = await take({ [Symbol.asyncIterator]: () => iterator }, 1);
      assert.equal(next!.type, 'ADDED');
      assert.equal(next!.revision, live);
      controller.abort();
      const end = await iterator.next();
      assert.equal(end.done, true, 'the watch ends once its signal aborts');
    });

    it('answers Gone for a watch from a compacted revision', async () => {
      const p = fresh();
      const r1 = await store.create(`${p}a`, { v: 1 });
      const r2 = await store.update(`${p}a`, { v: 2 }, r1);
      await store.update(`${p}a`, { v: 3 }, r2);
      await store.compact(await store.currentRevision());
      const controller = new AbortController();
      await assert.rejects(take(store.watch(p, { afterRevision: r1 - 1, signal: controller.signal }), 1), GoneError);
      controller.abort();
    });

    it('lists in pages: a limit, a start key, and how many keys follow', async () => {
      const p = fresh();
      for (const k of ['a', 'b', 'c', 'd', 'e']) await store.create(`${p}in/${k}`, { k });
      await store.create(`${p}out`, { k: 'out' });
      const first = await store.list<{ k: string }>(`${p}in/`, { limit: 2 });
      assert.deepEqual(
        first.items.map((i) => i.value.k),
        ['a', 'b'],
      );
      assert.equal(first.more, true);
      assert.equal(first.remaining, 3);
      const page = { fromKey: `${first.items[1]!.key}\u0000`, revision: first.revision };
      const second = await store.listRaw(`${p}in/`, { ...page, limit: 2 });
      assert.deepEqual(
        second.items.map((i) => JSON.parse(i.json).k),
        ['c', 'd'],
      );
      assert.equal(second.revision, first.revision);
      assert.equal(second.remaining, 1);
      const last = await store.list<{ k: string }>(`${p}in/`, { fromKey: `${second.items[1]!.key}\u0000`, revision: first.revision, limit: 2 });
      assert.deepEqual(
        last.items.map((i) => i.value.k),
        ['e'],
      );
      assert.ok(!last.more, 'the last page says nothing more follows');
      const whole = await store.list(`${p}in/`, { limit: 5 });
      assert.equal(whole.items.length, 5);
      assert.ok(!whole.more, 'a limit that takes every key leaves nothing more');
    });

    it('reads a later page at the revision of the first while keys change', async () => {
      const p = fresh();
      const revs = new Map<string, number>();
      for (const k of ['a', 'c', 'e', 'g']) revs.set(k, await store.create(`${p}${k}`, { k, v: 1 }));
      const first = await store.list<{ k: string }>(p, { limit: 1 });
      await store.create(`${p}d`, { k: 'd', v: 1 });
      await store.update(`${p}e`, { k: 'e', v: 2 }, revs.get('e')!);
      await store.delete(`${p}g`);
      await store.create(`${p}z`, { k: 'z', v: 1 });
      const rest = await store.list<{ k: string; v: number }>(p, { fromKey: `${first.items[0]!.key}\u0000`, revision: first.revision });
      assert.deepEqual(
        rest.items.map((i) => [i.value.k, i.value.v, i.revision]),
        [
          ['c', 1, revs.get('c')],
          ['e', 1, revs.get('e')],
          ['g', 1, revs.get('g')],
        ],
      );
      assert.equal(rest.revision, first.revision);
      const now = await store.list<{ k: string; v: number }>(p, { fromKey: `${first.items[0]!.key}\u0000` });
      assert.deepEqual(
        now.items.map((i) => [i.value.k, i.value.v]),
        [
          ['c', 1],
          ['d', 1],
          ['e', 2],
          ['z', 1],
        ],
      );
    });

    it('answers Gone for a page at a compacted revision', async () => {
      const p = fresh();
      await store.create(`${p}a`, {});
      await store.create(`${p}b`, {});
      const first = await store.list(p, { limit: 1 });
      await store.update(`${p}b`, { v: 2 }, first.revision);
      await store.compact(await store.currentRevision());
      await assert.rejects(store.list(p, { fromKey: `${p}a\u0000`, revision: first.revision, limit: 1 }), GoneError);
      await assert.rejects(store.listRaw(p, { fromKey: `${p}a\u0000`, revision: first.revision }), GoneError);
    });

    it('deletes without an expected revision, and refuses to update what was deleted', async () => {
      const p = fresh();
      const r1 = await store.create(`${p}a`, { v: 1 });
      const del = await store.delete<{ v: number }>(`${p}a`);
      assert.deepEqual(del.value, { v: 1 });
      await assert.rejects(store.update(`${p}a`, { v: 2 }, r1), NotFoundError);
      const again = await store.create(`${p}a`, { v: 3 });
      assert.ok(again > del.revision, 'a re-created key gets a new revision');
    });

    it('gives every write a strictly greater revision, and lists at a revision between writes', async () => {
      const p = fresh();
      const revisions: number[] = [];
      revisions.push(await store.create(`${p}a`, { v: 1 }));
      revisions.push(await store.update(`${p}a`, { v: 2 }, revisions[0]!));
      revisions.push(await store.create(`${p}b`, { v: 1 }));
      revisions.push((await store.delete(`${p}b`)).revision);
      for (let i = 1; i < revisions.length; i++) assert.ok(revisions[i]! > revisions[i - 1]!, `${revisions}`);
      const list = await store.list(p);
      assert.ok(list.revision >= revisions.at(-1)!, 'a list sees every write that finished before it');
      assert.ok(list.revision <= (await store.currentRevision()));
      assert.deepEqual(
        list.items.map((i) => [i.key.slice(p.length), i.revision]),
        [['a', revisions[1]]],
      );
      assert.deepEqual((await store.list(`${p}nothing/`)).items, []);
    });

    it('lists raw JSON text with the same entries as list', async () => {
      const p = fresh();
      await store.create(`${p}b`, { v: 'b' });
      await store.create(`${p}a`, { v: 'a' });
      await store.create(`${p}ab`, { v: 'ab' });
      const raw = await store.listRaw(`${p}a`);
      assert.deepEqual(
        raw.items.map((i) => [i.key.slice(p.length), JSON.parse(i.json)]),
        [
          ['a', { v: 'a' }],
          ['ab', { v: 'ab' }],
        ],
      );
      const list = await store.list(`${p}a`);
      assert.deepEqual(
        raw.items.map((i) => i.revision),
        list.items.map((i) => i.revision),
      );
    });

    it('watches only its prefix, hands out copies, and keeps watches apart', async () => {
      const p = fresh();
      const from = await store.currentRevision();
      const controller = new AbortController();
      const narrow = store.watch<{ v: number }>(`${p}a/`, { afterRevision: from, signal: controller.signal });
      const wide = store.watch<{ v: number }>(p, { afterRevision: from, signal: controller.signal });
      await store.create(`${p}ab`, { v: 1 });
      await store.create(`${p}a/1`, { v: 2 });
      const [event] = await take(narrow, 1);
      assert.equal(event!.key, `${p}a/1`, 'a sibling prefix does not leak into the watch');
      event!.value.v = 99;
      assert.equal((await store.get<{ v: number }>(`${p}a/1`)).value.v, 2);
      const both = await take(wide, 2);
      assert.deepEqual(
        both.map((e) => e.key.slice(p.length)),
        ['ab', 'a/1'],
      );
      controller.abort();
    });

    it('ends a watch that is waiting for events when its signal aborts', async () => {
      const p = fresh();
      const controller = new AbortController();
      const iterator = store.watch(p, { afterRevision: await store.currentRevision(), signal: controller.signal })[Symbol.asyncIterator]();
      const pending = iterator.next();
      controller.abort();
      const end = await Promise.race([pending, new Promise<'hung'>((r) => setTimeout(() => r('hung'), 5000).unref())]);
      assert.notEqual(end, 'hung', 'the watch ended within 5 s of the abort');
      assert.equal((end as IteratorResult<unknown>).done, true);
    });

    it('keeps the compaction revision itself watchable', async () => {
      const p = fresh();
      const r1 = await store.create(`${p}a`, { v: 1 });
      const r2 = await store.update(`${p}a`, { v: 2 }, r1);
      await store.compact(r2);
      const controller = new AbortController();
      const [event] = await take(store.watch<{ v: number }>(p, { afterRevision: r2 - 1, signal: controller.signal }), 1);
      controller.abort();
      assert.deepEqual([event!.type, event!.revision, event!.value.v], ['MODIFIED', r2, 2]);
    });

    it('writes a transaction whole, at one revision, and watchers see every key of it', async () => {
      const p = fresh();
      const rOld = await store.create(`${p}old`, { v: 1 });
      const rGone = await store.create(`${p}gone`, { v: 1 });
      const from = await store.currentRevision();
      const controller = new AbortController();
      const watch = store.watch<{ v: number }>(p, { afterRevision: from, signal: controller.signal });
      const revision = await store.transaction([
        { type: 'create', key: `${p}new`, value: { v: 2 } },
        { type: 'update', key: `${p}old`, value: { v: 3 }, expectedRevision: rOld },
        { type: 'delete', key: `${p}gone`, expectedRevision: rGone },
      ]);
      assert.ok(revision > from);
      assert.deepEqual(
        (await store.list<{ v: number }>(p)).items.map((i) => [i.key.slice(p.length), i.value.v, i.revision]),
        [
          ['new', 2, revision],
          ['old', 3, revision],
        ],
      );
      const events = await take(watch, 3);
      controller.abort();
      assert.deepEqual(
        events.map((e) => `${e.type} ${e.key.slice(p.length)} ${e.value.v} ${e.revision === revision}`),
        ['ADDED new 2 true', 'MODIFIED old 3 true', 'DELETED gone 1 true'],
      );
    });

    it('writes nothing of a transaction whose condition fails, and names the key that failed', async () => {
      const p = fresh();
      const r = await store.create(`${p}taken`, { v: 1 });
      const before = await store.currentRevision();
      const cases: [string, Parameters<Store['transaction']>[0], typeof AlreadyExistsError | typeof ConflictError | typeof NotFoundError, string][] = [
        [
          'create of a present key',
          [
            { type: 'create', key: `${p}a`, value: {} },
            { type: 'create', key: `${p}taken`, value: {} },
          ],
          AlreadyExistsError,
          `${p}taken`,
        ],
        [
          'update at a stale revision',
          [
            { type: 'create', key: `${p}a`, value: {} },
            { type: 'update', key: `${p}taken`, value: {}, expectedRevision: r + 1000 },
          ],
          ConflictError,
          `${p}taken`,
        ],
        [
          'delete of an absent key',
          [
            { type: 'delete', key: `${p}absent` },
            { type: 'create', key: `${p}a`, value: {} },
          ],
          NotFoundError,
          `${p}absent`,
        ],
      ];
      for (const [what, ops, errorType, key] of cases) {
        const err = await store.transaction(ops).then(
          () => undefined,
          (e: unknown) => e,
        );
        assert.ok(err instanceof errorType, `${what}: ${String(err)}`);
        assert.equal(failedKey(err), key, what);
      }
      assert.deepEqual(
        (await store.list(p)).items.map((i) => i.key.slice(p.length)),
        ['taken'],
      );
      assert.equal(await store.currentRevision(), before, 'a failed transaction writes nothing');
    });

    it('lets exactly one of many concurrent writers win per revision', async () => {
      const p = fresh();
      const r = await store.create(`${p}k`, { winner: -1 });
      const results = await Promise.allSettled(Array.from({ length: 50 }, (_, i) => store.update(`${p}k`, { winner: i }, r)));
      const won = results.filter((x) => x.status === 'fulfilled');
      assert.equal(won.length, 1);
      for (const x of results) if (x.status === 'rejected') assert.ok(x.reason instanceof ConflictError, String(x.reason));
      const winner = (won[0] as PromiseFulfilledResult<number>).value;
      assert.equal((await store.get(`${p}k`)).revision, winner);
    });

    it('counts exactly with concurrent read-modify-write retries', async () => {
      const p = fresh();
      await store.create(`${p}n`, { n: 0 });
      const increment = async () => {
        for (;;) {
          const cur = await store.get<{ n: number }>(`${p}n`);
          try {
            return await store.update(`${p}n`, { n: cur.value.n + 1 }, cur.revision);
          } catch (err) {
            if (!(err instanceof ConflictError)) throw err;
          }
        }
      };
      const revisions = await Promise.all(Array.from({ length: 30 }, increment));
      assert.equal((await store.get<{ n: number }>(`${p}n`)).value.n, 30);
      assert.equal(new Set(revisions).size, 30, 'every successful write has its own revision');
    });
  });
}
