// CertificateSigningRequest routes beside the generic ones: the requester's identity written into each new request, and the /approval subresource (kubectl certificate approve|deny) with its `approve` check on the signer.
import type { Context } from 'hono';
import { type CertificateSigningRequest, certificateSigningRequestKind, CSR_GROUP } from '../../core/api/certificate-signing-request.js';
import type { Condition } from '../../core/api/meta.js';
import { ForbiddenError, InvalidError, MethodNotAllowedError, type StatusCause } from '../../core/errors.js';
import type { UserInfo } from '../api-server/auth.js';
import { authorize, type RbacAuthorizer } from '../api-server/authorization.js';
import { BODY_TEXT_VARIABLE, parseJsonObject, readRequestText, requestContentType } from '../api-server/body.js';
import type { ObjectService } from '../api-server/object-service.js';
import type { ApiHono } from '../api-server/server.js';

export const CSR_COLLECTION_PATH = `/apis/${CSR_GROUP}/v1/certificatesigningrequests`;
export const CSR_APPROVAL_PATH = `${CSR_COLLECTION_PATH}/:name/approval`;
/** The conditions an approver sets (Failed is the signer's, through /status). */
const DECISIONS = new Set(['Approved', 'Denied']);

export interface CsrRoutesOptions {
  service: ObjectService;
  /** RBAC's half of the chain, for the `approve` verb on signers; absent: only cluster admins approve. */
  rbac?: RbacAuthorizer;
  now?: () => Date;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** May this user approve (or deny) requests for this signer: `approve` on `signers` named the signer or its `domain/*` (Kubernetes' rule). */
export function mayApprove(user: UserInfo, signerName: string, rbac?: RbacAuthorizer): boolean {
  const domain = `${signerName.split('/')[0]}/*`;
  return [signerName, domain].some(
    (name) => authorize(user, { verb: 'approve', path: '', resource: { group: CSR_GROUP, version: '*', resource: 'signers', name } }, rbac).allowed,
  );
}

/**
 * The conditions an approval asks for, judged against the stored ones (Kubernetes' rules): Approved
 * and Denied exclude each other, and neither may be taken away once set. 422 otherwise.
 */
export function approvalConditions(name: string, stored: readonly Condition[], asked: unknown, now: string): Condition[] {
  const causes: StatusCause[] = [];
  const list = Array.isArray(asked) ? asked : [];
  const out: Condition[] = [];
  list.forEach((raw, i) => {
    const c = isObject(raw) ? raw : {};
    if (typeof c.type !== 'string' || c.type === '') {
      causes.push({ reason: 'FieldValueRequired', field: `status.conditions[${i}].type`, message: 'Required value' });
      return;
    }
    if (c.status !== 'True' && c.status !== 'False' && c.status !== 'Unknown') {
      causes.push({
        reason: 'FieldValueNotSupported',
        field: `status.conditions[${i}].status`,
        message: `Unsupported value: ${JSON.stringify(c.status ?? '')}: supported values: "False", "True", "Unknown"`,
      });
      return;
    }
    const before = stored.find((s) => s.type === c.type);
    const cond: Condition = {
      type: c.type,
      status: c.status,
      ...(typeof c.reason === 'string' ? { reason: c.reason } : {}),
      ...(typeof c.message === 'string' ? { message: c.message } : {}),
      lastUpdateTime: typeof c.lastUpdateTime === 'string' ? c.lastUpdateTime : now,
      lastTransitionTime: before && before.status === c.status ? (before.lastTransitionTime ?? now) : now,
    };
    out.push(cond);
  });
  const isTrue = (t: string) => out.some((c) => c.type === t && c.status === 'True');
  if (isTrue('Approved') && isTrue('Denied')) {
    const i = out.findIndex((c) => c.type === 'Denied');
    causes.push({
      reason: 'FieldValueInvalid',
      field: `status.conditions[${i}].type`,
      message: 'Invalid value: "Denied": Approved and Denied conditions are mutually exclusive',
    });
  }
  for (const s of stored) {
    if (DECISIONS.has(s.type) && s.status === 'True' && !out.some((c) => c.type === s.type && c.status === 'True')) {
      causes.push({ reason: 'FieldValueForbidden', field: 'status.conditions', message: `Forbidden: updates may not remove a condition of type "${s.type}"` });
    }
  }
  if (causes.length) {
    throw new InvalidError(`CertificateSigningRequest.${CSR_GROUP} "${name}" is invalid: ${causes.map((c) => `${c.field}: ${c.message}`).join(', ')}`, {
      kind: 'CertificateSigningRequest',
      group: CSR_GROUP,
      name,
      causes,
    });
  }
  return out;
}

async function approve(c: Context, options: CsrRoutesOptions): Promise<Response> {
  const name = c.req.param('name')!;
  const user = c.get('user') as UserInfo;
  const body = parseJsonObject(await readRequestText(c), requestContentType(c));
  const stored = (await options.service.get(certificateSigningRequestKind, undefined, name)) as CertificateSigningRequest;
  const now = (options.now?.() ?? new Date()).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const before = stored.status?.conditions ?? [];
  const conditions = approvalConditions(name, before, isObject(body.status) ? body.status.conditions : undefined, now);
  const decisionChanged = [...DECISIONS].some((t) => {
    const a = before.find((x) => x.type === t)?.status;
    const b = conditions.find((x) => x.type === t)?.status;
    return a !== b;
  });
  if (decisionChanged && !mayApprove(user, stored.spec.signerName, options.rbac)) {
    throw new ForbiddenError(
      `certificatesigningrequests.${CSR_GROUP} "${name}" is forbidden: user not permitted to approve requests with signerName "${stored.spec.signerName}"`,
      { kind: 'certificatesigningrequests', group: CSR_GROUP, name },
    );
  }
  const meta = isObject(body.metadata) ? body.metadata : {};
  const next = {
    ...stored,
    metadata: { ...stored.metadata, ...(typeof meta.resourceVersion === 'string' ? { resourceVersion: meta.resourceVersion } : {}) },
    status: { ...stored.status, conditions },
  };
  const written = await options.service.replace(certificateSigningRequestKind, undefined, name, next as unknown as Record<string, unknown>, {
    subresource: 'status',
  });
  return c.body(JSON.stringify(written), 200, { 'content-type': 'application/json' });
}

/** Registered after authentication and authorization (update of certificatesigningrequests/approval), ahead of the generic resource routes. */
export function registerCsrRoutes(app: ApiHono, options: CsrRoutesOptions): void {
  // Kubernetes fills in who asked: spec.username, groups (and uid, extra) come from the requester, never from the body.
  app.post(CSR_COLLECTION_PATH, async (c, next) => {
    const user = c.get('user');
    const body = parseJsonObject(await readRequestText(c), requestContentType(c));
    const spec = isObject(body.spec) ? body.spec : {};
    const { uid: _uid, extra: _extra, ...rest } = spec;
    body.spec = { ...rest, username: user.name, groups: [...user.groups] };
    c.set(BODY_TEXT_VARIABLE as never, JSON.stringify(body) as never);
    await next();
  });
  app.get(CSR_APPROVAL_PATH, async (c) => {
    const csr = await options.service.get(certificateSigningRequestKind, undefined, c.req.param('name'));
    return c.body(JSON.stringify(csr), 200, { 'content-type': 'application/json' });
  });
  app.put(CSR_APPROVAL_PATH, (c) => approve(c as unknown as Context, options));
  app.all(CSR_APPROVAL_PATH, () => {
    throw new MethodNotAllowedError('the server does not allow this method on the requested resource');
  });
}
