// The keys Secrets are encrypted with: DATA_DIR/pki/encryption-config.json (0600), in Kubernetes' EncryptionConfiguration shape, made with one random key at the first master start.
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { secretKind } from '../../core/api/secret.js';
import { storePrefix } from '../../core/api/registry.js';
import { ConflictError, NotFoundError } from '../../core/errors.js';
import { StartupError } from '../../core/lifecycle/startup-error.js';
import type { EtcdStore } from '../../core/store/etcd-store.js';
import { AesGcmTransformer, checkAesGcmKeys, forKeyPrefixes, type AesGcmKey, type ValueTransformer } from '../../core/store/value-transformer.js';

export function encryptionConfigPath(dataDir: string): string {
  return join(dataDir, 'pki', 'encryption-config.json');
}

/** The part of apiserver.config.k8s.io/v1 EncryptionConfiguration we read: aesgcm keys for secrets (identity may follow). */
interface EncryptionConfiguration {
  kind: 'EncryptionConfiguration';
  apiVersion: 'apiserver.config.k8s.io/v1';
  resources: { resources: string[]; providers: ({ aesgcm: { keys: { name: string; secret: string }[] } } | { identity: Record<string, never> })[] }[];
}

export function renderEncryptionConfig(keys: readonly AesGcmKey[]): string {
  const config: EncryptionConfiguration = {
    kind: 'EncryptionConfiguration',
    apiVersion: 'apiserver.config.k8s.io/v1',
    resources: [
      {
        resources: ['secrets'],
        // identity last: values written before encryption was on are still read.
        providers: [{ aesgcm: { keys: keys.map((k) => ({ name: k.name, secret: k.secret.toString('base64') })) } }, { identity: {} }],
      },
    ],
  };
  return `${JSON.stringify(config, null, 2)}\n`;
}

/** The aesgcm keys of an EncryptionConfiguration (JSON), in order; throws with a reason a person can act on. */
export function parseEncryptionConfig(text: string): AesGcmKey[] {
  let config: Partial<EncryptionConfiguration>;
  try {
    config = JSON.parse(text) as Partial<EncryptionConfiguration>;
  } catch (err) {
    throw new Error(`not JSON: ${(err as Error).message}`);
  }
  if (config?.kind !== 'EncryptionConfiguration') throw new Error('kind must be EncryptionConfiguration');
  const forSecrets = (config.resources ?? []).find((r) => Array.isArray(r?.resources) && r.resources.includes('secrets'));
  if (!forSecrets) throw new Error('no resources entry names "secrets"');
  const aesgcm = (forSecrets.providers ?? []).find((p): p is { aesgcm: { keys: { name: string; secret: string }[] } } => 'aesgcm' in (p ?? {}));
  if (!aesgcm) throw new Error('the "secrets" entry has no aesgcm provider');
  const keys = (aesgcm.aesgcm.keys ?? []).map((k) => ({ name: String(k?.name ?? ''), secret: Buffer.from(String(k?.secret ?? ''), 'base64') }));
  checkAesGcmKeys(keys);
  return keys;
}

export interface SecretsEncryption {
  transformer: ValueTransformer;
  path: string;
  keyNames: string[];
}

/**
 * Reads the keys (making the file with one random key when it is missing, even when encryption
 * is off, so that turning it on later needs nothing more) and returns the transformer for the
 * Secrets' prefix. With `encrypt` false, new Secrets are stored plain, old ones still read.
 */
export function loadSecretsEncryption(options: { dataDir: string; encrypt: boolean }): SecretsEncryption {
  const path = encryptionConfigPath(options.dataDir);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
    chmodSync(path, 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new StartupError(`cannot read ${path}: ${(err as Error).message}`, { cause: err });
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    text = renderEncryptionConfig([{ name: 'key1', secret: randomBytes(32) }]);
    try {
      // 'wx': never replace keys another process wrote in the meantime; losing them loses every Secret.
      writeFileSync(path, text, { mode: 0o600, flag: 'wx' });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') return loadSecretsEncryption(options);
      throw new StartupError(`cannot write ${path}: ${(e as Error).message}`, { cause: e });
    }
  }
  let keys: AesGcmKey[];
  try {
    keys = parseEncryptionConfig(text);
  } catch (err) {
    throw new StartupError(`${path}: ${(err as Error).message}`, { cause: err });
  }
  return {
    transformer: forKeyPrefixes([storePrefix(secretKind)], new AesGcmTransformer({ keys, encrypt: options.encrypt })),
    path,
    keyNames: keys.map((k) => k.name),
  };
}

/**
 * Writes every Secret whose stored form is stale (plain text, or under a key that is no longer
 * the first) back through the transformer, so that after a restart with a new first key the
 * old key can be removed. Each write is a compare-and-swap on the revision read: a Secret
 * changed meanwhile was written with the current key already. Returns how many were rewritten.
 */
export async function rewriteStaleSecrets(etcd: Pick<EtcdStore, 'staleKeys' | 'get' | 'update'>): Promise<number> {
  let rewritten = 0;
  for (const { key, revision } of await etcd.staleKeys(storePrefix(secretKind))) {
    try {
      const entry = await etcd.get(key);
      if (entry.revision !== revision) continue;
      await etcd.update(key, entry.value, revision);
      rewritten++;
    } catch (err) {
      if (err instanceof ConflictError || err instanceof NotFoundError) continue;
      throw err;
    }
  }
  return rewritten;
}
