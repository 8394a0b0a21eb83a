// TokenReview authentication: answers mapped to users, cached for the TTL, shared while in flight, failures not cached.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ApiClient } from '../../core/client/api-client.js';
import { tokenReviewAuthenticator, userFromReview } from './token-review.js';

function fakeClient(answer: (token: string) => unknown) {
  const calls: { method: string; path: string; body: unknown }[] = [];
  const client = {
    async request(method: string, path: string, options: { body?: unknown } = {}) {
      calls.push({ method, path, body: options.body });
      return answer((options.body as { spec: { token: string } }).spec.token);
    },
  };
  return { client: client as unknown as ApiClient, calls };
}

const ok = (username: string, groups: string[]) => ({ status: { authenticated: true, user: { username, groups } } });

describe('tokenReviewAuthenticator', () => {
  it('maps review answers to users', () => {
    assert.deepEqual(userFromReview(ok('admin', ['system:masters'])), { name: 'admin', groups: ['system:masters'] });
    assert.deepEqual(userFromReview({ status: { authenticated: true, user: { username: 'x' } } }), { name: 'x', groups: [] });
    for (const no of [undefined, {}, { status: { authenticated: false } }, { status: { authenticated: true, user: {} } }]) {
      assert.equal(userFromReview(no), undefined);
    }
  });

  it('posts a TokenReview and caches yes and no answers until the TTL passes', async () => {
    let now = 1000;
    const { client, calls } = fakeClient((t) => (t === 'good' ? ok('admin', ['system:masters']) : { status: { authenticated: false } }));
    const auth = tokenReviewAuthenticator(client, { cacheTtlMs: 100, now: () => now });
    assert.deepEqual(await auth('good'), { name: 'admin', groups: ['system:masters'] });
    assert.deepEqual(calls[0], {
      method: 'POST',
      path: '/apis/authentication.k8s.io/v1/tokenreviews',
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: 'good' } },
    });
    assert.equal(await auth('bad'), undefined);
    assert.equal((await auth('good')) !== undefined, true);
    assert.equal(await auth('bad'), undefined);
    assert.equal(calls.length, 2);
    now += 100;
    await auth('good');
    assert.equal(calls.length, 3);
    assert.equal(await auth(''), undefined);
    assert.equal(calls.length, 3);
  });

  it('shares one review among concurrent requests and does not cache failures', async () => {
    let fail = true;
    const { client, calls } = fakeClient(() => {
      if (fail) throw new Error('connection refused');
      return ok('admin', []);
    });
    const auth = tokenReviewAuthenticator(client, { cacheTtlMs: 60_000 });
    const results = await Promise.allSettled([auth('t'), auth('t'), auth('t')]);
    assert.ok(results.every((r) => r.status === 'rejected'));
    assert.equal(calls.length, 1);
    fail = false;
    assert.equal((await auth('t'))?.name, 'admin');
    assert.equal(calls.length, 2);
  });

  it('keeps at most maxEntries answers', async () => {
    const { client, calls } = fakeClient((t) => ok(t, []));
    const auth = tokenReviewAuthenticator(client, { cacheTtlMs: 60_000, maxEntries: 2 });
    await auth('a');
    await auth('b');
    await auth('c');
    await auth('b');
    assert.equal(calls.length, 3);
    await auth('a');
    assert.equal(calls.length, 4);
  });
});
