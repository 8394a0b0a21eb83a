// POST /apis/authentication.k8s.io/v1/tokenreviews: tells a kubelet who a bearer token belongs to, as Kubernetes' TokenReview does.
import type { Hono } from 'hono';
import { BadRequestError } from '../../core/errors.js';
import type { Authenticator, UserInfo } from './auth.js';
import { parseJsonObject, readRequestText, requestContentType } from './body.js';

export const TOKEN_REVIEW_API_VERSION = 'authentication.k8s.io/v1';
export const TOKEN_REVIEW_PATH = `/apis/${TOKEN_REVIEW_API_VERSION}/tokenreviews`;

/** The review's answer for a token: the user, or not authenticated. */
export async function reviewToken(authenticator: Authenticator, token: string): Promise<Record<string, unknown>> {
  const user = await authenticator.authenticate(token);
  return user ? { authenticated: true, user: { username: user.name, groups: [...user.groups] } } : { authenticated: false };
}

/** Registered after authentication and authorization (admins and nodes get this far). */
export function registerTokenReviewRoutes<E extends { Variables: { user: UserInfo } }>(app: Hono<E>, options: { authenticator: Authenticator }): void {
  app.post(TOKEN_REVIEW_PATH, async (c) => {
    const body = parseJsonObject(await readRequestText(c), requestContentType(c));
    if (body.apiVersion !== undefined && body.apiVersion !== TOKEN_REVIEW_API_VERSION) {
      throw new BadRequestError(`TokenReview must have apiVersion "${TOKEN_REVIEW_API_VERSION}", not ${JSON.stringify(body.apiVersion).slice(0, 64)}`);
    }
    if (body.kind !== undefined && body.kind !== 'TokenReview')
      throw new BadRequestError(`the body must be a TokenReview, not ${JSON.stringify(body.kind).slice(0, 64)}`);
    const spec = body.spec as { token?: unknown } | undefined;
    if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) throw new BadRequestError('TokenReview needs spec.token');
    // Kubernetes' own words for an empty token.
    if (typeof spec.token !== 'string' || spec.token === '') throw new BadRequestError('token is required for TokenReview in authentication');
    const answer = {
      apiVersion: TOKEN_REVIEW_API_VERSION,
      kind: 'TokenReview',
      metadata: { creationTimestamp: null },
      spec,
      status: await reviewToken(options.authenticator, spec.token),
    };
    return c.body(JSON.stringify(answer), 201, { 'content-type': 'application/json' });
  });
}
