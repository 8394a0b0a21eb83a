// Bound tokens: what issue() signs, and each reason verify() or the authenticator refuses one.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import type { KubeObject } from '../../core/api/meta.js';
import { ServiceAccountAuthenticator } from './authenticator.js';
import { DEFAULT_AUDIENCE, loadOrCreateSigningKey, ServiceAccountTokens, TokenRejected } from './tokens.js';

const key = () => generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
const T0 = new Date('2026-01-01T00:00:00Z');
const SA = { name: 'robot', uid: 'sa-uid' };
const POD = { name: 'web', uid: 'pod-uid' };

function obj(name: string, uid: string): KubeObject {
  return { apiVersion: 'v1', kind: 'X', metadata: { name, namespace: 'team', uid } };
}

describe('ServiceAccountTokens', () => {
  it("signs Kubernetes' claims with ES256 and the key's id", async () => {
    const tokens = new ServiceAccountTokens({ privateKey: key(), now: () => T0 });
    const issued = await tokens.issue({ namespace: 'team', serviceAccount: SA, pod: POD, node: { name: 'n1' }, expirationSeconds: 3607 });
    assert.equal(issued.expirationTimestamp, '2026-01-01T01:00:07Z');
    const header = decodeProtectedHeader(issued.token);
    assert.equal(header.alg, 'ES256');
    assert.ok(header.kid);
    const claims = decodeJwt(issued.token);
    assert.equal(claims.sub, 'system:serviceaccount:team:robot');
    assert.deepEqual(claims.aud, [DEFAULT_AUDIENCE]);
    assert.equal(claims.iss, DEFAULT_AUDIENCE);
    assert.equal(claims.iat, T0.getTime() / 1000);
    assert.equal(claims.nbf, T0.getTime() / 1000);
    assert.equal(claims.exp, T0.getTime() / 1000 + 3607);
    assert.deepEqual(claims['kubernetes.io'], { namespace: 'team', serviceaccount: SA, pod: POD, node: { name: 'n1' } });
  });

  it('verifies its own token until it expires', async () => {
    let now = T0;
    const tokens = new ServiceAccountTokens({ privateKey: key(), now: () => now });
    const { token } = await tokens.issue({ namespace: 'team', serviceAccount: SA, expirationSeconds: 600 });
    assert.equal((await tokens.verify(token)).claim.serviceaccount.name, 'robot');
    now = new Date(T0.getTime() + 601_000);
    await assert.rejects(tokens.verify(token), (err: Error) => err instanceof TokenRejected && /expired/.test(err.message));
  });

  it('refuses a token for another audience', async () => {
    const tokens = new ServiceAccountTokens({ privateKey: key(), now: () => T0 });
    const { token } = await tokens.issue({ namespace: 'team', serviceAccount: SA, audiences: ['vault'] });
    await assert.rejects(tokens.verify(token), (err: Error) => err instanceof TokenRejected && /aud/.test(err.message));
  });

  it('refuses a token signed by another key', async () => {
    const theirs = new ServiceAccountTokens({ privateKey: key(), now: () => T0 });
    const ours = new ServiceAccountTokens({ privateKey: key(), now: () => T0 });
    const { token } = await theirs.issue({ namespace: 'team', serviceAccount: SA });
    await assert.rejects(ours.verify(token), TokenRejected);
    // One changed character of the payload breaks the signature too.
    const [h, p, s] = (await ours.issue({ namespace: 'team', serviceAccount: SA })).token.split('.');
    const forged = JSON.parse(Buffer.from(p!, 'base64url').toString());
    forged.sub = 'system:serviceaccount:kube-system:admin';
    await assert.rejects(ours.verify(`${h}.${Buffer.from(JSON.stringify(forged)).toString('base64url')}.${s}`), TokenRejected);
  });

  it('keeps its key in pki/sa.key, 0600, and reads the same one back', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sa-key-'));
    try {
      const first = loadOrCreateSigningKey(join(dir, 'pki'));
      assert.equal(statSync(join(dir, 'pki', 'sa.key')).mode & 0o777, 0o600);
      const again = loadOrCreateSigningKey(join(dir, 'pki'));
      assert.deepEqual(again.export({ type: 'pkcs8', format: 'der' }), first.export({ type: 'pkcs8', format: 'der' }));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('ServiceAccountAuthenticator', () => {
  const tokens = new ServiceAccountTokens({ privateKey: key() });
  const setup = (objects: { sa?: KubeObject; pod?: KubeObject }) =>
    new ServiceAccountAuthenticator({
      tokens,
      serviceAccount: async (_ns, name) => (objects.sa?.metadata.name === name ? objects.sa : undefined),
      pod: async (_ns, name) => (objects.pod?.metadata.name === name ? objects.pod : undefined),
    });

  it('names the service account user and its groups', async () => {
    const { token } = await tokens.issue({ namespace: 'team', serviceAccount: SA, pod: POD });
    const user = await setup({ sa: obj('robot', 'sa-uid'), pod: obj('web', 'pod-uid') }).authenticate(token);
    assert.deepEqual(user, {
      name: 'system:serviceaccount:team:robot',
      groups: ['system:serviceaccounts', 'system:serviceaccounts:team', 'system:authenticated'],
    });
  });

  it('stops a token once its pod is deleted, or replaced by one of the same name', async () => {
    const { token } = await tokens.issue({ namespace: 'team', serviceAccount: SA, pod: POD });
    assert.equal(await setup({ sa: obj('robot', 'sa-uid') }).authenticate(token), undefined);
    assert.equal(await setup({ sa: obj('robot', 'sa-uid'), pod: obj('web', 'another-uid') }).authenticate(token), undefined);
  });

  it('stops a token once its service account is deleted or recreated', async () => {
    const { token } = await tokens.issue({ namespace: 'team', serviceAccount: SA });
    assert.equal(await setup({}).authenticate(token), undefined);
    assert.equal(await setup({ sa: obj('robot', 'new-uid') }).authenticate(token), undefined);
  });

  it('leaves tokens that are no JWT to the other authenticators', async () => {
    assert.equal(await setup({ sa: obj('robot', 'sa-uid') }).authenticate('0123456789abcdef'), undefined);
  });
});
