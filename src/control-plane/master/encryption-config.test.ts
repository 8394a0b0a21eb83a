// The Secrets' key file: made once (0600, under pki/), reused, in EncryptionConfiguration's shape, and refused with a reason when broken.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encryptionConfigPath, loadSecretsEncryption, parseEncryptionConfig, renderEncryptionConfig } from './encryption-config.js';

function withDir(fn: (dir: string) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'minik8s-enc-'));
  try {
    fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const KEY = '/registry/core/secrets/default/s';
const VALUE = Buffer.from('{"data":{"a":"Yg=="}}');

describe('loadSecretsEncryption', () => {
  it('makes DATA_DIR/pki/encryption-config.json 0600 with one 32-byte key, and reuses it at the next start', () => {
    withDir((dir) => {
      const first = loadSecretsEncryption({ dataDir: dir, encrypt: true });
      assert.equal(first.path, join(dir, 'pki', 'encryption-config.json'));
      assert.equal(statSync(first.path).mode & 0o777, 0o600);
      assert.equal(statSync(join(dir, 'pki')).mode & 0o777, 0o700);
      assert.deepEqual(first.keyNames, ['key1']);
      const stored = first.transformer.toStorage(KEY, VALUE);
      assert.ok(stored.toString('latin1').startsWith('k8s:enc:aesgcm:v1:key1:'));
      const second = loadSecretsEncryption({ dataDir: dir, encrypt: true });
      assert.deepEqual(second.transformer.fromStorage(KEY, stored), VALUE);
      // Other resources are stored as they are.
      assert.deepEqual(second.transformer.toStorage('/registry/core/configmaps/default/s', VALUE), VALUE);
    });
  });

  it('with encryption off still makes the keys and reads encrypted Secrets, but writes plain ones', () => {
    withDir((dir) => {
      const on = loadSecretsEncryption({ dataDir: dir, encrypt: true });
      const off = loadSecretsEncryption({ dataDir: dir, encrypt: false });
      assert.deepEqual(off.transformer.toStorage(KEY, VALUE), VALUE);
      assert.deepEqual(off.transformer.fromStorage(KEY, on.transformer.toStorage(KEY, VALUE)), VALUE);
    });
  });

  it('refuses a broken file with its path and the reason, and never replaces it', () => {
    withDir((dir) => {
      const path = encryptionConfigPath(dir);
      loadSecretsEncryption({ dataDir: dir, encrypt: true });
      writeFileSync(
        path,
        '{"kind":"EncryptionConfiguration","resources":[{"resources":["secrets"],"providers":[{"aesgcm":{"keys":[{"name":"k","secret":"c2hvcnQ="}]}}]}]}',
      );
      assert.throws(
        () => loadSecretsEncryption({ dataDir: dir, encrypt: true }),
        (err: Error) => err.message.startsWith(path) && /5 bytes; AES-256 needs 32/.test(err.message),
      );
      assert.match(readFileSync(path, 'utf8'), /c2hvcnQ=/);
    });
  });
});

describe('parseEncryptionConfig', () => {
  it('reads back what renderEncryptionConfig writes, keys in order', () => {
    const keys = [
      { name: 'key2', secret: randomBytes(32) },
      { name: 'key1', secret: randomBytes(32) },
    ];
    assert.deepEqual(parseEncryptionConfig(renderEncryptionConfig(keys)), keys);
  });

  it('says what is missing', () => {
    assert.throws(() => parseEncryptionConfig('nope'), /not JSON/);
    assert.throws(() => parseEncryptionConfig('{"kind":"Other"}'), /kind must be EncryptionConfiguration/);
    assert.throws(() => parseEncryptionConfig('{"kind":"EncryptionConfiguration","resources":[]}'), /no resources entry names "secrets"/);
    assert.throws(
      () => parseEncryptionConfig('{"kind":"EncryptionConfiguration","resources":[{"resources":["secrets"],"providers":[{"identity":{}}]}]}'),
      /no aesgcm provider/,
    );
  });
});
