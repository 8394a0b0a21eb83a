// Join tokens: format, digests in the store, expiry, revocation, and the default token file reused across starts.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NotFoundError } from '../../core/errors.js';
import { MemoryStore } from '../../core/store/memory-store.js';
import { ensureDefaultJoinToken, generateJoinToken, JOIN_TOKEN_PATTERN, JOIN_TOKEN_PREFIX, JoinTokenStore, parseJoinToken } from './join-tokens.js';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('join token format', () => {
  it('makes kubeadm-shaped tokens', () => {
    for (let i = 0; i < 50; i++) assert.match(generateJoinToken().token, JOIN_TOKEN_PATTERN);
    let n = 0;
    assert.deepEqual(
      generateJoinToken(() => n++ % 36),
      { id: 'abcdef', secret: 'ghijklmnopqrstuv', token: 'abcdef.ghijklmnopqrstuv' },
    );
  });

  it('parses only that shape', () => {
    assert.deepEqual(parseJoinToken('abcdef.0123456789abcdef'), { id: 'abcdef', secret: '0123456789abcdef' });
    for (const bad of [
      '',
      'abcdef',
      'abcdef.0123456789abcde',
      'ABCDEF.0123456789abcdef',
      'abcdef.0123456789abcdef0',
      ' abcdef.0123456789abcdef',
      'abcde.0123456789abcdefg',
      'a'.repeat(64),
    ]) {
      assert.equal(parseJoinToken(bad), undefined, bad);
    }
  });
});

describe('JoinTokenStore', () => {
  it('stores a digest, never the secret, and authenticates as system:bootstrap:<id>', async () => {
    const store = new MemoryStore();
    const tokens = new JoinTokenStore({ store });
    const { token, info } = await tokens.create({ description: 'for n1' });
    const [id, secret] = token.split('.');
    assert.equal(info.id, id);
    assert.equal(info.description, 'for n1');
    const raw = JSON.stringify((await store.list(JOIN_TOKEN_PREFIX)).items);
    assert.equal(raw.includes(secret!), false, 'the secret is not stored');
    assert.deepEqual(await tokens.authenticate(token), { name: `system:bootstrap:${id}`, groups: ['system:bootstrappers'] });
    assert.equal(await tokens.authenticate(`${id}.${'x'.repeat(16)}`), undefined, 'wrong secret');
    assert.equal(await tokens.authenticate('zzzzzz.0123456789abcdef'), undefined, 'unknown id');
    assert.equal(await tokens.authenticate('not-a-join-token'), undefined);
  });

  it('expires tokens after their TTL (default 24 h), and keeps ttlSeconds 0 for ever', async () => {
    let now = new Date('2026-01-01T00:00:00Z');
    const tokens = new JoinTokenStore({ store: new MemoryStore(), now: () => now });
    const day = await tokens.create();
    const minute = await tokens.create({ ttlSeconds: 60 });
    const never = await tokens.create({ ttlSeconds: 0 });
    assert.equal(day.info.expiresAt, '2026-01-02T00:00:00.000Z');
    assert.equal(never.info.expiresAt, undefined);
    now = new Date('2026-01-01T00:01:00Z');
    assert.equal(await tokens.authenticate(minute.token), undefined, 'expired at its expiry');
    assert.ok(await tokens.authenticate(day.token));
    now = new Date('2027-01-01T00:00:00Z');
    assert.equal(await tokens.authenticate(day.token), undefined);
    assert.ok(await tokens.authenticate(never.token));
    assert.equal(await tokens.removeExpired(), 2);
    assert.deepEqual(
      (await tokens.list()).map((t) => t.id),
      [never.info.id],
    );
  });

  it('lists without secrets, gets, and revokes', async () => {
    const tokens = new JoinTokenStore({ store: new MemoryStore() });
    const a = await tokens.create({ description: 'a' });
    const b = await tokens.create();
    const listed = await tokens.list();
    assert.deepEqual(listed.map((t) => t.id).sort(), [a.info.id, b.info.id].sort());
    assert.equal(JSON.stringify(listed).includes(a.token.split('.')[1]!), false);
    assert.deepEqual(await tokens.get(a.info.id), a.info);
    assert.deepEqual(await tokens.delete(a.info.id), a.info);
    assert.equal(await tokens.authenticate(a.token), undefined, 'revoked');
    await assert.rejects(tokens.delete(a.info.id), (err: unknown) => err instanceof NotFoundError && /jointokens.minik8s.io "\w+" not found/.test(err.message));
    await assert.rejects(tokens.get('../etc'), NotFoundError);
    assert.ok(await tokens.authenticate(b.token));
  });
});

describe('ensureDefaultJoinToken', () => {
  it('writes a token file (0600), reuses it while valid, and replaces it once revoked or expired', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'minik8s-join-token-'));
    dirs.push(dataDir);
    let now = new Date('2026-01-01T00:00:00Z');
    const tokens = new JoinTokenStore({ store: new MemoryStore(), now: () => now });
    const first = await ensureDefaultJoinToken({ tokens, dataDir });
    assert.equal(first.created, true);
    assert.equal(first.path, join(dataDir, 'join-token'));
    assert.equal(readFileSync(first.path, 'utf8'), `${first.token}\n`);
    assert.equal(statSync(first.path).mode & 0o777, 0o600);

    const again = await ensureDefaultJoinToken({ tokens, dataDir });
    assert.deepEqual(again, { ...first, created: false });

    await tokens.delete(first.token.slice(0, 6));
    const replaced = await ensureDefaultJoinToken({ tokens, dataDir });
    assert.equal(replaced.created, true);
    assert.notEqual(replaced.token, first.token);

    now = new Date('2026-01-03T00:00:00Z');
    const renewed = await ensureDefaultJoinToken({ tokens, dataDir });
    assert.equal(renewed.created, true);
    assert.notEqual(renewed.token, replaced.token);
    assert.equal((await tokens.list()).length, 1, 'the expired one was cleared out');

    writeFileSync(renewed.path, 'garbage\n');
    assert.equal((await ensureDefaultJoinToken({ tokens, dataDir })).created, true);
  });
});
