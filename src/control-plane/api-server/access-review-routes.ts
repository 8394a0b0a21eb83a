// POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews (may I do this?), selfsubjectrulesreviews (what may I do here?) and subjectaccessreviews (may this user do this?, for those allowed to ask): answered by the same authorize() chain that judges requests (kubectl auth can-i, can-i --list).
import type { Context, Hono } from 'hono';
import { BadRequestError } from '../../core/errors.js';
import type { UserInfo } from './auth.js';
import { authorize, type RequestAttributes } from './authorization.js';
import { parseJsonObject, readRequestText, requestContentType } from './body.js';
import { rulesReview } from './rules-review.js';
import type { RbacIndex } from '../rbac/rbac-authorizer.js';
import { rbacChain, rbacUser } from '../rbac/rbac-chain.js';

export const ACCESS_REVIEW_API_VERSION = 'authorization.k8s.io/v1';
export const SELF_ACCESS_REVIEW_PATH = `/apis/${ACCESS_REVIEW_API_VERSION}/selfsubjectaccessreviews`;
export const SELF_RULES_REVIEW_PATH = `/apis/${ACCESS_REVIEW_API_VERSION}/selfsubjectrulesreviews`;
export const SUBJECT_ACCESS_REVIEW_PATH = `/apis/${ACCESS_REVIEW_API_VERSION}/subjectaccessreviews`;
export const LOCAL_SUBJECT_ACCESS_REVIEW_PATH = `/apis/${ACCESS_REVIEW_API_VERSION}/namespaces/:namespace/localsubjectaccessreviews`;

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

/** The body of a review: a JSON object of this kind (apiVersion and kind may be left out). */
async function reviewBody(c: Context, kind: string): Promise<Record<string, unknown>> {
  const body = parseJsonObject(await readRequestText(c), requestContentType(c));
  if (body.apiVersion !== undefined && body.apiVersion !== ACCESS_REVIEW_API_VERSION) {
    throw new BadRequestError(`${kind} must have apiVersion "${ACCESS_REVIEW_API_VERSION}", not ${JSON.stringify(body.apiVersion).slice(0, 64)}`);
  }
  if (body.kind !== undefined && body.kind !== kind) throw new BadRequestError(`the body must be a ${kind}, not ${JSON.stringify(body.kind).slice(0, 64)}`);
  return body;
}

/** The user a SubjectAccessReview asks about: spec.user and spec.groups (at least one of them). */
function reviewedUser(spec: unknown): UserInfo {
  const s = isObject(spec) ? spec : {};
  const name = optionalString(s, 'user', 'spec') ?? '';
  const groups = s.groups ?? [];
  if (!Array.isArray(groups) || groups.some((g) => typeof g !== 'string')) throw new BadRequestError('spec.groups must be a list of strings');
  if (!name && groups.length === 0) throw new BadRequestError('spec.user: Invalid value: "": at least one of user or group must be specified');
  return { name, groups: groups as string[] };
}

export interface AccessReviewRoutesOptions {
  /** The cluster's RBAC (the master's index): reviews are answered by the Node rules and RBAC, as requests are. */
  rbac?: RbacIndex;
}

/** Registered after authentication and authorization (every user but join-token holders gets this far; SubjectAccessReviews only those allowed to create them). */
export function registerAccessReviewRoutes<E extends { Variables: { user: UserInfo } }>(app: Hono<E>, options: AccessReviewRoutesOptions = {}): void {
  const rbac = options.rbac ? rbacChain(options.rbac) : undefined;
  const subjectReview = (kind: string) => async (c: Context) => {
    const body = await reviewBody(c, kind);
    const attrs = reviewAttributes(body.spec);
    const namespace = c.req.param('namespace');
    if (namespace !== undefined && attrs.resource?.namespace !== namespace) {
      throw new BadRequestError(
        `spec.resourceAttributes.namespace: Invalid value: ${JSON.stringify(attrs.resource?.namespace ?? '')}: must match metadata.namespace`,
      );
    }
    const decision = authorize(reviewedUser(body.spec), attrs, rbac);
    const status = decision.allowed ? { allowed: true } : { allowed: false, ...(decision.reason ? { reason: decision.reason } : {}) };
    const metadata = { creationTimestamp: null, ...(namespace !== undefined ? { namespace } : {}) };
    return c.body(JSON.stringify({ apiVersion: ACCESS_REVIEW_API_VERSION, kind, metadata, spec: body.spec, status }), 201, {
      'content-type': 'application/json',
    });
  };
  app.post(SUBJECT_ACCESS_REVIEW_PATH, subjectReview('SubjectAccessReview'));
  app.post(LOCAL_SUBJECT_ACCESS_REVIEW_PATH, subjectReview('LocalSubjectAccessReview'));
  app.post(SELF_ACCESS_REVIEW_PATH, async (c) => {
    const body = await reviewBody(c, 'SelfSubjectAccessReview');
    const decision = authorize(c.get('user'), reviewAttributes(body.spec), rbac);
    const status = decision.allowed ? { allowed: true } : { allowed: false, ...(decision.reason ? { reason: decision.reason } : {}) };
    const answer = { apiVersion: ACCESS_REVIEW_API_VERSION, kind: 'SelfSubjectAccessReview', metadata: { creationTimestamp: null }, spec: body.spec, status };
    return c.body(JSON.stringify(answer), 201, { 'content-type': 'application/json' });
  });
  app.post(SELF_RULES_REVIEW_PATH, async (c) => {
    const body = await reviewBody(c, 'SelfSubjectRulesReview');
    const spec = isObject(body.spec) ? body.spec : {};
    const namespace = spec.namespace ?? '';
    if (typeof namespace !== 'string') throw new BadRequestError('spec.namespace must be a string');
    // Kubernetes answers for the cluster-scoped rules and those of one namespace; with none given, the rules of every namespace.
    const answer = {
      apiVersion: ACCESS_REVIEW_API_VERSION,
      kind: 'SelfSubjectRulesReview',
      metadata: { creationTimestamp: null },
      spec: { namespace },
      status: rulesReview(c.get('user'), namespace, options.rbac ? (u, ns) => options.rbac!.rulesFor(rbacUser(u), ns || undefined) : undefined),
    };
    return c.body(JSON.stringify(answer), 201, { 'content-type': 'application/json' });
  });
}
