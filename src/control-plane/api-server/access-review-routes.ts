// POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews: may I do this? The caller's own question, answered by the same authorize() that judges its requests (kubectl auth can-i).
import type { Hono } from 'hono';
import { BadRequestError } from '../../core/errors.js';
import type { UserInfo } from './auth.js';
import { authorize, type RequestAttributes } from './authorization.js';
import { parseJsonObject, readRequestText, requestContentType } from './body.js';

export const ACCESS_REVIEW_API_VERSION = 'authorization.k8s.io/v1';
export const SELF_ACCESS_REVIEW_PATH = `/apis/${ACCESS_REVIEW_API_VERSION}/selfsubjectaccessreviews`;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function optionalString(spec: Record<string, unknown>, field: string, where: string): string | undefined {
  const v = spec[field];
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') throw new BadRequestError(`${where}.${field} must be a string`);
  return v;
}

/**
 * The request a review asks about, as the attributes authorize() judges. Kubernetes leaves
 * lookups out of a review as well: a node asking about one Secret is answered for what it may
 * do without knowing which pods name it.
 */
export function reviewAttributes(spec: unknown): RequestAttributes {
  if (!isObject(spec)) throw new BadRequestError('SelfSubjectAccessReview needs a spec');
  const resource = spec.resourceAttributes;
  const nonResource = spec.nonResourceAttributes;
  if (isObject(resource) === isObject(nonResource)) {
    throw new BadRequestError('spec.resourceAttributes: Invalid value: exactly one of nonResourceAttributes or resourceAttributes must be specified');
  }
  if (isObject(nonResource)) {
    const verb = optionalString(nonResource, 'verb', 'spec.nonResourceAttributes') ?? '';
    const path = optionalString(nonResource, 'path', 'spec.nonResourceAttributes') ?? '';
    return { verb, path };
  }
  const r = resource as Record<string, unknown>;
  const where = 'spec.resourceAttributes';
  const verb = optionalString(r, 'verb', where) ?? '';
  const namespace = optionalString(r, 'namespace', where);
  const name = optionalString(r, 'name', where);
  const subresource = optionalString(r, 'subresource', where);
  return {
    verb,
    path: '',
    resource: {
      group: optionalString(r, 'group', where) ?? '',
      version: optionalString(r, 'version', where) ?? '',
      resource: optionalString(r, 'resource', where) ?? '',
      ...(namespace !== undefined ? { namespace } : {}),
      ...(name !== undefined ? { name } : {}),
      ...(subresource !== undefined ? { subresource } : {}),
    },
  };
}

/** Registered after authentication and authorization (every user but join-token holders gets this far). */
export function registerAccessReviewRoutes<E extends { Variables: { user: UserInfo } }>(app: Hono<E>): void {
  app.post(SELF_ACCESS_REVIEW_PATH, async (c) => {
    const body = parseJsonObject(await readRequestText(c), requestContentType(c));
    if (body.apiVersion !== undefined && body.apiVersion !== ACCESS_REVIEW_API_VERSION) {
      throw new BadRequestError(
        `SelfSubjectAccessReview must have apiVersion "${ACCESS_REVIEW_API_VERSION}", not ${JSON.stringify(body.apiVersion).slice(0, 64)}`,
      );
    }
    if (body.kind !== undefined && body.kind !== 'SelfSubjectAccessReview')
      throw new BadRequestError(`the body must be a SelfSubjectAccessReview, not ${JSON.stringify(body.kind).slice(0, 64)}`);
    const decision = authorize(c.get('user'), reviewAttributes(body.spec));
    const status = decision.allowed ? { allowed: true } : { allowed: false, ...(decision.reason ? { reason: decision.reason } : {}) };
    const answer = { apiVersion: ACCESS_REVIEW_API_VERSION, kind: 'SelfSubjectAccessReview', metadata: { creationTimestamp: null }, spec: body.spec, status };
    return c.body(JSON.stringify(answer), 201, { 'content-type': 'application/json' });
  });
}
