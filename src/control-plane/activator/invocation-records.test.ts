// Invocation records: bounded per function, newest first, stored in batches and read back after a restart.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryStore } from '../../core/store/memory-store.js';
import type { InvocationRecord } from '../../core/api/invocation-record.js';
import { invocationsKey, InvocationLog, persistedRecords } from './invocation-records.js';

function record(i: number, o: Partial<InvocationRecord> = {}): InvocationRecord {
  return {
    id: `id-${i}`,
    namespace: 'ns',
    function: 'hello',
    version: 1,
    trigger: 'http',
    start: '2026-01-01T00:00:00Z',
    durationMs: i,
    coldStart: false,
    status: 200,
    result: { i },
    ...o,
  };
}

describe('InvocationLog', () => {
  it('keeps the last N per function, newest first', () => {
    const log = new InvocationLog({ store: new MemoryStore(), limit: 3 });
    for (let i = 1; i <= 5; i++) log.add(record(i));
    log.add(record(9, { function: 'other' }));
    assert.deepEqual(
      log.list('ns', 'hello').map((r) => r.id),
      ['id-5', 'id-4', 'id-3'],
    );
    assert.deepEqual(
      log.list('ns', 'hello', 1).map((r) => r.id),
      ['id-5'],
    );
    assert.deepEqual(
      log.list('ns', 'other').map((r) => r.id),
      ['id-9'],
    );
    assert.equal(log.get('ns', 'hello', 'id-4')?.durationMs, 4);
    assert.equal(log.get('ns', 'hello', 'id-1'), undefined);
  });

  it('writes only what changed, and a new log reads it back', async () => {
    const store = new MemoryStore();
    const log = new InvocationLog({ store });
    log.add(record(1));
    log.add(record(2, { function: 'other' }));
    await log.flush();
    const first = await store.get<{ records: InvocationRecord[] }>(invocationsKey('ns', 'hello'));
    assert.deepEqual(
      first.value.records.map((r) => r.id),
      ['id-1'],
    );
    // Nothing new: nothing written.
    await log.flush();
    assert.equal((await store.get(invocationsKey('ns', 'hello'))).revision, first.revision);
    log.add(record(3));
    await log.flush();
    assert.deepEqual(
      (await store.get<{ records: InvocationRecord[] }>(invocationsKey('ns', 'hello'))).value.records.map((r) => r.id),
      ['id-1', 'id-3'],
    );

    const after = new InvocationLog({ store });
    after.add(record(4));
    await after.load();
    assert.deepEqual(
      after.list('ns', 'hello').map((r) => r.id),
      ['id-4', 'id-3', 'id-1'],
    );
    // It can go on writing over what the earlier process stored.
    await after.flush();
    assert.deepEqual(
      (await store.get<{ records: InvocationRecord[] }>(invocationsKey('ns', 'hello'))).value.records.map((r) => r.id),
      ['id-1', 'id-3', 'id-4'],
    );

    await after.forget('ns', 'hello');
    await assert.rejects(store.get(invocationsKey('ns', 'hello')), /not found/i);
    assert.deepEqual(after.list('ns', 'hello'), []);
    await after.forget('ns', 'hello');
  });

  it('stores long fields cut and drops the oldest records beyond the byte budget', () => {
    const big = 'x'.repeat(5000);
    const stored = persistedRecords([record(1, { stdout: big }), record(2), record(3, { result: big })], 10_000);
    assert.deepEqual(
      stored.map((r) => r.id),
      ['id-1', 'id-2', 'id-3'],
    );
    assert.ok(stored[0]!.stdout!.endsWith('... (cut)') && stored[0]!.stdout!.length < 2100);
    assert.ok(typeof stored[2]!.result === 'string' && (stored[2]!.result as string).endsWith('... (cut)'));
    const tight = persistedRecords([record(1, { stdout: big }), record(2), record(3)], 600);
    assert.deepEqual(
      tight.map((r) => r.id),
      ['id-2', 'id-3'],
    );
  });
});
