// EtcdStore with a value transformer on a real etcd: every read path (get, list, listRaw, watch, delete, transaction) sees plain values, etcd holds ciphertext, and unreadable values fail loudly.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Etcd3 } from 'etcd3';
import { InternalError } from '../src/core/errors.js';
import { EtcdStore } from '../src/core/store/etcd-store.js';
import { AesGcmTransformer, forKeyPrefixes } from '../src/core/store/value-transformer.js';
import { startEtcd, type TestEtcd } from './helpers/etcd.js';

const SECRETS = '/registry/core/secrets/';
const k1 = { name: 'key1', secret: randomBytes(32) };
const k2 = { name: 'key2', secret: randomBytes(32) };
const storeWith = (endpoint: string, keys: { name: string; secret: Buffer }[]) =>
  new EtcdStore({ endpoints: [endpoint], transformer: forKeyPrefixes([SECRETS], new AesGcmTransformer({ keys })) });

describe('EtcdStore with encryption at rest', () => {
  let etcd: TestEtcd;
  let raw: Etcd3;
  before(async () => {
    etcd = await startEtcd();
    raw = new Etcd3({ hosts: etcd.endpoint });
  });
  after(async () => {
    raw?.close();
    await etcd?.stop();
  });

  it('stores ciphertext under the Secrets prefix only, and reads it back on every path', async () => {
    const store = storeWith(etcd.endpoint, [k1]);
    try {
      const key = `${SECRETS}ns/a`;
      const value = { data: { password: 'cGFzcw==' } };
      const created = await store.create(key, value);
      await store.create('/registry/core/pods/ns/p', { spec: {} });
      const stored = (await raw.get(key).buffer())!;
      assert.ok(stored.toString('latin1').startsWith('k8s:enc:aesgcm:v1:key1:'));
      assert.ok(!stored.includes(Buffer.from('cGFzcw==')));
      assert.equal(await raw.get('/registry/core/pods/ns/p').string(), '{"spec":{}}');

      assert.deepEqual((await store.get(key)).value, value);
      assert.deepEqual((await store.list(SECRETS)).items[0]?.value, value);
      assert.deepEqual(JSON.parse((await store.listRaw(SECRETS)).items[0]!.json), value);
      const updated = { data: { password: 'bmV3' } };
      const ctl = new AbortController();
      const events = store.watch(SECRETS, { afterRevision: created, signal: ctl.signal })[Symbol.asyncIterator]();
      const rev = await store.transaction([{ type: 'update', key, value: updated, expectedRevision: created }]);
      const ev = await events.next();
      assert.deepEqual(ev.value, { type: 'MODIFIED', key, value: updated, revision: rev });
      ctl.abort();
      assert.deepEqual((await store.delete(key)).value, updated);
    } finally {
      await store.close();
    }
  });

  it('answers 500 InternalError, naming the key, for a value it has no key for (get, list, watch)', async () => {
    const writer = storeWith(etcd.endpoint, [k1]);
    const reader = storeWith(etcd.endpoint, [k2]);
    try {
      const key = `${SECRETS}ns/b`;
      const before = await writer.currentRevision();
      await writer.create(key, { data: {} });
      const unreadable = (err: unknown) => err instanceof InternalError && err.message.includes(key) && /no aesgcm key named "key1"/.test(err.message);
      await assert.rejects(reader.get(key), unreadable);
      await assert.rejects(reader.list(SECRETS), unreadable);
      const ctl = new AbortController();
      await assert.rejects(async () => {
        for await (const _ of reader.watch(SECRETS, { afterRevision: before, signal: ctl.signal })) {
          // The first event cannot be read: the watch ends with the error instead of skipping it.
        }
      }, unreadable);
      ctl.abort();
      await writer.delete(key);
    } finally {
      await writer.close();
      await reader.close();
    }
  });

  it('lists the keys a rotation must rewrite: plain ones and ones under an older key', async () => {
    const plain = new EtcdStore({ endpoints: [etcd.endpoint] });
    const old = storeWith(etcd.endpoint, [k1]);
    const rotated = storeWith(etcd.endpoint, [k2, k1]);
    try {
      await plain.create(`${SECRETS}r/plain`, { data: {} });
      await old.create(`${SECRETS}r/old`, { data: {} });
      await rotated.create(`${SECRETS}r/new`, { data: {} });
      assert.deepEqual((await rotated.staleKeys(`${SECRETS}r/`)).map((s) => s.key).sort(), [`${SECRETS}r/old`, `${SECRETS}r/plain`]);
    } finally {
      await plain.close();
      await old.close();
      await rotated.close();
    }
  });
});
