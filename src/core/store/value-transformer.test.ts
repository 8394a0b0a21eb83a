// AES-GCM at rest: round trip, the stored form, tampering, the wrong key, key rotation, plain values written before encryption, and the prefix filter.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { InternalError } from '../errors.js';
import { AESGCM_PREFIX, AesGcmTransformer, checkAesGcmKeys, forKeyPrefixes, IDENTITY_TRANSFORMER } from './value-transformer.js';

const KEY = '/registry/core/secrets/default/db';
const PLAIN = Buffer.from(JSON.stringify({ kind: 'Secret', data: { password: 'aHVudGVyMg==' } }));
const k1 = { name: 'key1', secret: randomBytes(32) };
const k2 = { name: 'key2', secret: randomBytes(32) };

function unreadable(fn: () => unknown, pattern: RegExp): void {
  assert.throws(fn, (err: unknown) => err instanceof InternalError && err.code === 500 && pattern.test(err.message));
}

describe('AesGcmTransformer', () => {
  it('stores k8s:enc:aesgcm:v1:NAME: and ciphertext, and reads the value back', () => {
    const t = new AesGcmTransformer({ keys: [k1] });
    const stored = t.toStorage(KEY, PLAIN);
    assert.ok(stored.subarray(0, AESGCM_PREFIX.length + 5).equals(Buffer.from('k8s:enc:aesgcm:v1:key1:')));
    assert.ok(!stored.includes(Buffer.from('aHVudGVyMg==')) && !stored.includes(Buffer.from('Secret')));
    assert.deepEqual(t.fromStorage(KEY, stored), PLAIN);
  });

  it('uses a fresh nonce for every write', () => {
    const t = new AesGcmTransformer({ keys: [k1] });
    assert.notDeepEqual(t.toStorage(KEY, PLAIN), t.toStorage(KEY, PLAIN));
  });

  it('refuses a changed value, a truncated one, and one moved to another key', () => {
    const t = new AesGcmTransformer({ keys: [k1] });
    const stored = t.toStorage(KEY, PLAIN);
    const flipped = Buffer.from(stored);
    flipped[flipped.length - 20]! ^= 0x01;
    unreadable(() => t.fromStorage(KEY, flipped), /does not decrypt with key "key1"/);
    unreadable(() => t.fromStorage(KEY, stored.subarray(0, AESGCM_PREFIX.length + 10)), /too short/);
    // The etcd key is authenticated: a Secret's ciphertext planted under another name does not read.
    unreadable(() => t.fromStorage('/registry/core/secrets/default/other', stored), /does not decrypt/);
  });

  it('refuses a value under a key it does not have, and one whose key of that name has other bytes', () => {
    const stored = new AesGcmTransformer({ keys: [k1] }).toStorage(KEY, PLAIN);
    unreadable(() => new AesGcmTransformer({ keys: [k2] }).fromStorage(KEY, stored), /no aesgcm key named "key1"/);
    unreadable(() => new AesGcmTransformer({ keys: [{ name: 'key1', secret: randomBytes(32) }] }).fromStorage(KEY, stored), /does not decrypt/);
  });

  it('rotates: the first key encrypts, every key decrypts', () => {
    const old = new AesGcmTransformer({ keys: [k1] }).toStorage(KEY, PLAIN);
    const rotated = new AesGcmTransformer({ keys: [k2, k1] });
    assert.deepEqual(rotated.fromStorage(KEY, old), PLAIN);
    const rewritten = rotated.toStorage(KEY, rotated.fromStorage(KEY, old));
    assert.ok(rewritten.toString('latin1').startsWith('k8s:enc:aesgcm:v1:key2:'));
    // Once every value is rewritten the old key can go.
    assert.deepEqual(new AesGcmTransformer({ keys: [k2] }).fromStorage(KEY, rewritten), PLAIN);
  });

  it('reads values written before encryption was on as plain text, and with encrypt false writes plain text but still decrypts', () => {
    const t = new AesGcmTransformer({ keys: [k1] });
    assert.deepEqual(t.fromStorage(KEY, PLAIN), PLAIN);
    const off = new AesGcmTransformer({ keys: [k1], encrypt: false });
    assert.deepEqual(off.toStorage(KEY, PLAIN), PLAIN);
    assert.deepEqual(off.fromStorage(KEY, t.toStorage(KEY, PLAIN)), PLAIN);
  });

  it('calls stale what the first key did not write: plain values, older keys; with encrypt false, encrypted ones', () => {
    const t1 = new AesGcmTransformer({ keys: [k1] });
    const rotated = new AesGcmTransformer({ keys: [k2, k1] });
    const byK1 = t1.toStorage(KEY, PLAIN);
    assert.equal(t1.isStale(KEY, byK1), false);
    assert.equal(t1.isStale(KEY, PLAIN), true);
    assert.equal(rotated.isStale(KEY, byK1), true);
    assert.equal(rotated.isStale(KEY, rotated.toStorage(KEY, PLAIN)), false);
    const off = new AesGcmTransformer({ keys: [k1], encrypt: false });
    assert.equal(off.isStale(KEY, byK1), true);
    assert.equal(off.isStale(KEY, PLAIN), false);
    assert.equal(forKeyPrefixes(['/registry/core/secrets/'], t1).isStale('/registry/core/pods/a/b', PLAIN), false);
  });

  it('checks keys: 32 bytes, names unique and usable in the prefix', () => {
    assert.throws(() => checkAesGcmKeys([]), /at least one key/);
    assert.throws(() => checkAesGcmKeys([{ name: 'k', secret: randomBytes(16) }]), /16 bytes; AES-256 needs 32/);
    assert.throws(() => checkAesGcmKeys([k1, { ...k2, name: 'key1' }]), /used twice/);
    assert.throws(() => checkAesGcmKeys([{ name: 'a:b', secret: randomBytes(32) }]), /must be letters/);
  });
});

describe('forKeyPrefixes', () => {
  it('transforms only keys under its prefixes', () => {
    const t = forKeyPrefixes(['/registry/core/secrets/'], new AesGcmTransformer({ keys: [k1] }));
    assert.ok(t.toStorage(KEY, PLAIN).toString('latin1').startsWith(AESGCM_PREFIX));
    const configMap = '/registry/core/configmaps/default/db';
    assert.deepEqual(t.toStorage(configMap, PLAIN), PLAIN);
    assert.deepEqual(IDENTITY_TRANSFORMER.toStorage(KEY, PLAIN), PLAIN);
  });
});
