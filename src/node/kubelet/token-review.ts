// Authenticates bearer tokens presented to the kubelet by asking the API server (TokenReview), with a short cache.
import { createHash } from 'node:crypto';
import type { ApiClient } from '../../core/client/api-client.js';

export interface KubeletUser {
  name: string;
  groups: readonly string[];
}

export interface TokenReviewOptions {
  /** How long an answer (yes or no) is reused; Kubernetes' webhook cache keeps them for minutes. */
  cacheTtlMs: number;
  /** Entries kept at most, so a flood of bad tokens cannot grow the cache without bound. */
  maxEntries?: number;
  now?: () => number;
}

interface TokenReviewAnswer {
  status?: { authenticated?: boolean; user?: { username?: string; groups?: string[] }; error?: string };
}

/** The user a TokenReview answer names, or undefined when the token was not accepted. */
export function userFromReview(answer: unknown): KubeletUser | undefined {
  const status = (answer as TokenReviewAnswer | undefined)?.status;
  if (!status?.authenticated || !status.user?.username) return undefined;
  return { name: status.user.username, groups: Array.isArray(status.user.groups) ? status.user.groups.map(String) : [] };
}

/**
 * Returns `authenticate(token)`. Answers are cached by the token's digest (never the token
 * itself) so that every log line or stats scrape does not cost a round trip; failures to
 * reach the API server are not cached and reject, so the caller can answer 503.
 */
export function tokenReviewAuthenticator(client: ApiClient, options: TokenReviewOptions): (token: string) => Promise<KubeletUser | undefined> {
  const now = options.now ?? Date.now;
  const maxEntries = options.maxEntries ?? 1000;
  const cache = new Map<string, { user: KubeletUser | undefined; expires: number }>();
  const inFlight = new Map<string, Promise<KubeletUser | undefined>>();

  const review = async (token: string, key: string): Promise<KubeletUser | undefined> => {
    const answer = await client.request('POST', '/apis/authentication.k8s.io/v1/tokenreviews', {
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } },
    });
    const user = userFromReview(answer);
    if (cache.size >= maxEntries) {
      // Maps iterate in insertion order: the first key is the oldest entry.
      const oldest = cache.keys().next();
      if (!oldest.done) cache.delete(oldest.value);
    }
    cache.set(key, { user, expires: now() + options.cacheTtlMs });
    return user;
  };

  return async (token: string) => {
    if (!token) return undefined;
    const key = createHash('sha256').update(token).digest('hex');
    const hit = cache.get(key);
    if (hit && hit.expires > now()) return hit.user;
    if (hit) cache.delete(key);
    // Concurrent requests with the same token share one review.
    let pending = inFlight.get(key);
    if (!pending) {
      pending = review(token, key).finally(() => inFlight.delete(key));
      inFlight.set(key, pending);
    }
    return pending;
  };
}
