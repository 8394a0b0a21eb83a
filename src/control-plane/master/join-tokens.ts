// Join tokens (kubeadm's shape, ID.SECRET): made, listed and revoked by admins, kept in the store as digests, and the default one in DATA_DIR/join-token.
import { createHash, randomInt, timingSafeEqual } from 'node:crypto';
import { chmodSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AlreadyExistsError, NotFoundError } from '../../core/errors.js';
import { parsePinnedJoinToken, pinnedJoinToken } from '../../core/pki/join-token-pin.js';
import type { Store } from '../../core/store/store.js';
import type { Authenticator, UserInfo } from '../api-server/auth.js';
import { BOOTSTRAPPERS_GROUP } from '../api-server/authorization.js';

/** Records by token ID; only the secret's SHA-256 is stored, so a copy of etcd joins no node. */
export const JOIN_TOKEN_PREFIX = '/registry/minik8s.io/jointokens/';
export const JOIN_TOKEN_PATTERN = /^([a-z0-9]{6})\.([a-z0-9]{16})$/;
export const JOIN_TOKEN_ID_PATTERN = /^[a-z0-9]{6}$/;
/** kubeadm's default: a token printed at start should not open the cluster for ever. */
export const DEFAULT_JOIN_TOKEN_TTL_SECONDS = 24 * 60 * 60;
export const BOOTSTRAP_USER_PREFIX = 'system:bootstrap:';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

export interface JoinTokenRecord {
  id: string;
  /** Hex SHA-256 of the secret part. */
  secretDigest: string;
  description?: string;
  createdAt: string;
  /** Absent: never expires. */
  expiresAt?: string;
}

/** What may be shown about a token: everything but its secret. */
export interface JoinTokenInfo {
  id: string;
  description?: string;
  createdAt: string;
  expiresAt?: string;
}

export interface CreateJoinTokenOptions {
  /** 0: never expires; default 24 h. */
  ttlSeconds?: number;
  description?: string;
}

function randomString(length: number, pick: (max: number) => number): string {
  let s = '';
  for (let i = 0; i < length; i++) s += ALPHABET[pick(ALPHABET.length)];
  return s;
}

/** A fresh `abcdef.0123456789abcdef`; `pick` is injectable for tests. */
export function generateJoinToken(pick: (max: number) => number = (max) => randomInt(max)): { id: string; secret: string; token: string } {
  const id = randomString(6, pick);
  const secret = randomString(16, pick);
  return { id, secret, token: `${id}.${secret}` };
}

export function parseJoinToken(text: string): { id: string; secret: string } | undefined {
  const m = JOIN_TOKEN_PATTERN.exec(text);
  return m ? { id: m[1]!, secret: m[2]! } : undefined;
}

export function joinTokenUser(id: string): UserInfo {
  return { name: `${BOOTSTRAP_USER_PREFIX}${id}`, groups: [BOOTSTRAPPERS_GROUP] };
}

function digestHex(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export function joinTokenKey(id: string): string {
  return `${JOIN_TOKEN_PREFIX}${id}`;
}

function infoOf(record: JoinTokenRecord): JoinTokenInfo {
  return {
    id: record.id,
    ...(record.description ? { description: record.description } : {}),
    createdAt: record.createdAt,
    ...(record.expiresAt ? { expiresAt: record.expiresAt } : {}),
  };
}

export function isExpired(record: Pick<JoinTokenRecord, 'expiresAt'>, now: Date): boolean {
  return record.expiresAt !== undefined && Date.parse(record.expiresAt) <= now.getTime();
}

export interface JoinTokenStoreOptions {
  store: Store;
  now?: () => Date;
}

/** The join tokens in the store, and the authenticator that accepts them (as system:bootstrap:<id>). */
export class JoinTokenStore implements Authenticator {
  readonly #store: Store;
  readonly #now: () => Date;

  constructor(options: JoinTokenStoreOptions) {
    this.#store = options.store;
    this.#now = options.now ?? (() => new Date());
  }

  /** A new token; the only time its secret is seen. */
  async create(options: CreateJoinTokenOptions = {}): Promise<{ token: string; info: JoinTokenInfo }> {
    const ttl = options.ttlSeconds ?? DEFAULT_JOIN_TOKEN_TTL_SECONDS;
    const now = this.#now();
    for (;;) {
      const { id, secret, token } = generateJoinToken();
      const record: JoinTokenRecord = {
        id,
        secretDigest: digestHex(secret),
        ...(options.description ? { description: options.description } : {}),
        createdAt: now.toISOString(),
        ...(ttl > 0 ? { expiresAt: new Date(now.getTime() + ttl * 1000).toISOString() } : {}),
      };
      try {
        await this.#store.create(joinTokenKey(id), record);
        return { token, info: infoOf(record) };
      } catch (err) {
        // One ID in 2 billion: draw again rather than overwrite someone's token.
        if (!(err instanceof AlreadyExistsError)) throw err;
      }
    }
  }

  /** Every token, expired ones included (marked by their expiry), by ID. */
  async list(): Promise<JoinTokenInfo[]> {
    return (await this.#store.list<JoinTokenRecord>(JOIN_TOKEN_PREFIX)).items.map((e) => infoOf(e.value));
  }

  async get(id: string): Promise<JoinTokenInfo> {
    return infoOf(await this.#read(id));
  }

  /** Revokes a token; NotFoundError when there is none with that ID. */
  async delete(id: string): Promise<JoinTokenInfo> {
    if (!JOIN_TOKEN_ID_PATTERN.test(id)) throw notFound(id);
    try {
      const removed = await this.#store.delete<JoinTokenRecord>(joinTokenKey(id));
      return infoOf(removed.value);
    } catch (err) {
      if (err instanceof NotFoundError) throw notFound(id, err);
      throw err;
    }
  }

  /** Deletes tokens past their expiry; returns how many. */
  async removeExpired(): Promise<number> {
    const now = this.#now();
    let removed = 0;
    for (const entry of (await this.#store.list<JoinTokenRecord>(JOIN_TOKEN_PREFIX)).items) {
      if (!isExpired(entry.value, now)) continue;
      try {
        await this.#store.delete(entry.key, entry.revision);
        removed++;
      } catch {
        // Changed or gone meanwhile: left for the next start.
      }
    }
    return removed;
  }

  /** Only strings shaped like a join token reach the store, so other credentials cost no round trip. */
  async authenticate(token: string): Promise<UserInfo | undefined> {
    const parsed = parseJoinToken(token);
    if (!parsed) return undefined;
    let record: JoinTokenRecord;
    try {
      record = (await this.#store.get<JoinTokenRecord>(joinTokenKey(parsed.id))).value;
    } catch (err) {
      if (err instanceof NotFoundError) return undefined;
      throw err;
    }
    const want = Buffer.from(record.secretDigest, 'hex');
    const got = Buffer.from(digestHex(parsed.secret), 'hex');
    if (want.length !== got.length || !timingSafeEqual(want, got)) return undefined;
    if (isExpired(record, this.#now())) return undefined;
    return joinTokenUser(parsed.id);
  }

  async #read(id: string): Promise<JoinTokenRecord> {
    if (!JOIN_TOKEN_ID_PATTERN.test(id)) throw notFound(id);
    try {
      return (await this.#store.get<JoinTokenRecord>(joinTokenKey(id))).value;
    } catch (err) {
      if (err instanceof NotFoundError) throw notFound(id, err);
      throw err;
    }
  }
}

function notFound(id: string, cause?: unknown): NotFoundError {
  return new NotFoundError(`jointokens.minik8s.io "${id}" not found`, { cause, kind: 'jointokens', group: 'minik8s.io', name: id });
}

export function joinTokenPath(dataDir: string): string {
  return join(dataDir, 'join-token');
}

/**
 * The token printed at start: the one in DATA_DIR/join-token while the store still accepts it,
 * else a new one (24 h) written there (0600). Expired tokens are cleared out on the way.
 */
export async function ensureDefaultJoinToken(options: {
  tokens: JoinTokenStore;
  dataDir: string;
  /** With TLS: the file holds the pinned form, K10<caHash>::id.secret (what workers are given). */
  caHash?: string;
}): Promise<{ token: string; path: string; created: boolean }> {
  const path = joinTokenPath(options.dataDir);
  await options.tokens.removeExpired();
  const shown = (t: string) => (options.caHash ? pinnedJoinToken(options.caHash, t) : t);
  let existing: string | undefined;
  try {
    existing = parsePinnedJoinToken(readFileSync(path, 'utf8')).token;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  let token: string;
  if (existing && (await options.tokens.authenticate(existing))) {
    token = existing;
  } else {
    token = (await options.tokens.create({ description: 'made by the master at start' })).token;
  }
  const created = token !== existing;
  if (!created && readFileSync(path, 'utf8').trim() === shown(token)) {
    chmodSync(path, 0o600);
    return { token: shown(token), path, created };
  }
  // Write then rename: a reader never sees half a token.
  writeFileSync(`${path}.tmp`, `${shown(token)}\n`, { mode: 0o600 });
  chmodSync(`${path}.tmp`, 0o600);
  renameSync(`${path}.tmp`, path);
  return { token: shown(token), path, created };
}
