// Transforms stored values on their way to and from etcd: AES-256-GCM for Secrets, as Kubernetes' aesgcm encryption provider does, and identity for the rest.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { InternalError } from '../errors.js';

/**
 * Bytes as the store writes them <-> bytes as callers gave them (JSON text). The etcd key is
 * an input so that a transformer can bind a value to its key: an encrypted value copied under
 * another key does not decrypt.
 */
export interface ValueTransformer {
  toStorage(key: string, data: Buffer): Buffer;
  fromStorage(key: string, data: Buffer): Buffer;
  /**
   * True when a stored value is not in the form toStorage writes now (plain text, or encrypted
   * with a key that is no longer the first): rewriting it brings it to the current key, which is
   * what a key rotation needs before the old key can be removed.
   */
  isStale(key: string, data: Buffer): boolean;
}

export const IDENTITY_TRANSFORMER: ValueTransformer = {
  toStorage: (_key, data) => data,
  fromStorage: (_key, data) => data,
  isStale: () => false,
};

export interface AesGcmKey {
  /** Written into each value's prefix, so that a value names the key that decrypts it. */
  name: string;
  /** 32 bytes: AES-256. */
  secret: Buffer;
}

/** What Kubernetes' aesgcm provider puts before each value it encrypted; the key's name and a colon follow. */
export const AESGCM_PREFIX = 'k8s:enc:aesgcm:v1:';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const KEY_NAME = /^[A-Za-z0-9][-A-Za-z0-9_.]{0,62}$/;

/** Checks a key list as the encryption config gives it: at least one key, 32 bytes each, names unique and safe in a prefix. */
export function checkAesGcmKeys(keys: readonly AesGcmKey[]): void {
  if (keys.length === 0) throw new Error('aesgcm needs at least one key');
  const names = new Set<string>();
  for (const k of keys) {
    if (!KEY_NAME.test(k.name)) throw new Error(`aesgcm key name "${k.name}" must be letters, digits, '-', '_' or '.' (at most 63)`);
    if (names.has(k.name)) throw new Error(`aesgcm key name "${k.name}" is used twice`);
    names.add(k.name);
    if (k.secret.length !== 32) throw new Error(`aesgcm key "${k.name}" is ${k.secret.length} bytes; AES-256 needs 32`);
  }
}

export interface AesGcmTransformerOptions {
  /** Every key decrypts; the first encrypts (unless `encrypt` is false). */
  keys: readonly AesGcmKey[];
  /**
   * False stores new values in plain text while still reading encrypted ones: encryption turned
   * off must not cut a cluster off from the Secrets it wrote before.
   */
  encrypt?: boolean;
}

/**
 * `k8s:enc:aesgcm:v1:NAME:` + 12-byte random nonce + ciphertext + 16-byte tag, with the etcd key
 * as additional authenticated data. A value without the prefix is read as plain text: it was
 * written before encryption was on, and is encrypted the next time it is written.
 */
export class AesGcmTransformer implements ValueTransformer {
  readonly #keys: ReadonlyMap<string, Buffer>;
  readonly #writeKey: AesGcmKey | undefined;

  constructor(options: AesGcmTransformerOptions) {
    checkAesGcmKeys(options.keys);
    this.#keys = new Map(options.keys.map((k) => [k.name, k.secret]));
    this.#writeKey = options.encrypt === false ? undefined : options.keys[0];
  }

  isStale(_key: string, data: Buffer): boolean {
    const k = this.#writeKey;
    if (!k) return startsWith(data, AESGCM_PREFIX);
    return !startsWith(data, `${AESGCM_PREFIX}${k.name}:`);
  }

  toStorage(key: string, data: Buffer): Buffer {
    const k = this.#writeKey;
    if (!k) return data;
    // A random nonce per write: GCM is broken by a nonce used twice under one key, and a
    // counter would have to survive restarts. Rotate keys well before 2^32 writes of Secrets.
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', k.secret, nonce);
    cipher.setAAD(Buffer.from(key));
    const sealed = Buffer.concat([cipher.update(data), cipher.final()]);
    return Buffer.concat([Buffer.from(`${AESGCM_PREFIX}${k.name}:`), nonce, sealed, cipher.getAuthTag()]);
  }

  fromStorage(key: string, data: Buffer): Buffer {
    if (!startsWith(data, AESGCM_PREFIX)) return data;
    const colon = data.indexOf(0x3a /* : */, AESGCM_PREFIX.length);
    if (colon < 0) throw transformError(key, 'the value has no key name after its encryption prefix');
    const name = data.subarray(AESGCM_PREFIX.length, colon).toString('utf8');
    const secret = this.#keys.get(name);
    if (!secret) throw transformError(key, `no aesgcm key named "${name}" is configured`);
    const body = data.subarray(colon + 1);
    if (body.length < NONCE_BYTES + TAG_BYTES) throw transformError(key, 'the encrypted value is too short');
    const decipher = createDecipheriv('aes-256-gcm', secret, body.subarray(0, NONCE_BYTES));
    decipher.setAAD(Buffer.from(key));
    decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
    try {
      return Buffer.concat([decipher.update(body.subarray(NONCE_BYTES, body.length - TAG_BYTES)), decipher.final()]);
    } catch {
      // GCM says only that the tag does not match: a changed value, or a key of that name with other bytes.
      throw transformError(key, `the value does not decrypt with key "${name}" (changed, or the key is not the one it was written with)`);
    }
  }
}

function startsWith(data: Buffer, prefix: string): boolean {
  return data.length >= prefix.length && data.subarray(0, prefix.length).toString('latin1') === prefix;
}

/** Kubernetes' wording for a value its storage cannot read back. */
function transformError(key: string, why: string): InternalError {
  return new InternalError(`unable to transform key "${key}": ${why}`);
}

/** Applies `transformer` to keys under one of `prefixes` (Secrets' `/registry/core/secrets/`), identity elsewhere. */
export function forKeyPrefixes(prefixes: readonly string[], transformer: ValueTransformer): ValueTransformer {
  const applies = (key: string) => prefixes.some((p) => key.startsWith(p));
  return {
    toStorage: (key, data) => (applies(key) ? transformer.toStorage(key, data) : data),
    fromStorage: (key, data) => (applies(key) ? transformer.fromStorage(key, data) : data),
    isStale: (key, data) => applies(key) && transformer.isStale(key, data),
  };
}
