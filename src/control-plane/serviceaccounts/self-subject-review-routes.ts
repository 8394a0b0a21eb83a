// POST /apis/authentication.k8s.io/v1/selfsubjectreviews: who the caller is authenticated as (kubectl auth whoami), for every user.
import type { Hono } from 'hono';
import { BadRequestError } from '../../core/errors.js';
import type { UserInfo } from '../api-server/auth.js';
import { parseJsonObject, readRequestText, requestContentType } from '../api-server/body.js';

export const SELF_SUBJECT_REVIEW_API_VERSION = 'authentication.k8s.io/v1';
export const SELF_SUBJECT_REVIEW_PATH = `/apis/${SELF_SUBJECT_REVIEW_API_VERSION}/selfsubjectreviews`;

export function registerSelfSubjectReviewRoutes<E extends { Variables: { user: UserInfo } }>(app: Hono<E>): void {
  app.post(SELF_SUBJECT_REVIEW_PATH, async (c) => {
    const body = parseJsonObject(await readRequestText(c), requestContentType(c));
    if (body.kind !== undefined && body.kind !== 'SelfSubjectReview') {
      throw new BadRequestError(`the kind in the data (${String(body.kind).slice(0, 64)}) does not match the expected kind (SelfSubjectReview)`);
    }
    const user = c.get('user');
    const answer = {
      apiVersion: SELF_SUBJECT_REVIEW_API_VERSION,
      kind: 'SelfSubjectReview',
      metadata: { creationTimestamp: null },
      status: { userInfo: { username: user.name, groups: [...user.groups] } },
    };
    return c.body(JSON.stringify(answer), 201, { 'content-type': 'application/json' });
  });
}
