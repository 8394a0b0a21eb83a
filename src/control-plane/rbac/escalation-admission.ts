// Puts a request that writes a Role, ClusterRole or binding to the escalation check: the object as the write would leave it (the body, or the stored object with the patch applied).
import type { Context } from 'hono';
import type { KindDefinition } from '../../core/api/kind.js';
import { clusterRoleBindingKind, clusterRoleKind, RBAC_GROUP, roleBindingKind, roleKind } from '../../core/api/rbac.js';
import { ForbiddenError, NotFoundError } from '../../core/errors.js';
import type { UserInfo } from '../api-server/auth.js';
import { MASTERS_GROUP, type RequestAttributes } from '../api-server/authorization.js';
import { BODY_TEXT_VARIABLE, readRequestText, requestContentType } from '../api-server/body.js';
import type { ObjectService } from '../api-server/object-service.js';
import { applyPatch, parsePatchBody, patchTypeOf } from '../api-server/patch.js';
import { escalationRefusal, type RbacObject } from './escalation.js';
import type { RbacIndex } from './rbac-authorizer.js';

const KINDS: Record<string, KindDefinition> = {
  roles: roleKind,
  clusterroles: clusterRoleKind,
  rolebindings: roleBindingKind,
  clusterrolebindings: clusterRoleBindingKind,
};

/** Creates, updates and patches of the four RBAC kinds by anyone but system:masters (who hold everything). */
export function needsEscalationCheck(user: UserInfo, attrs: RequestAttributes): boolean {
  const r = attrs.resource;
  return (
    (attrs.verb === 'create' || attrs.verb === 'update' || attrs.verb === 'patch') &&
    r?.group === RBAC_GROUP &&
    r.subresource === undefined &&
    KINDS[r.resource] !== undefined &&
    !user.groups.includes(MASTERS_GROUP)
  );
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Throws Kubernetes' 403 when the write would grant what the user does not hold; leaves the body read for the route. */
export async function admitRbacWrite(
  c: Context,
  options: { index: RbacIndex; service: ObjectService },
  user: UserInfo,
  attrs: RequestAttributes,
): Promise<void> {
  const r = attrs.resource!;
  const text = await readRequestText(c);
  c.set(BODY_TEXT_VARIABLE, text);
  let object: unknown;
  try {
    if (attrs.verb === 'patch') {
      const type = patchTypeOf(requestContentType(c));
      let stored: unknown;
      try {
        stored = await options.service.get(KINDS[r.resource]!, r.namespace, r.name ?? '');
      } catch (err) {
        if (!(err instanceof NotFoundError)) throw err;
        // An apply may create; another patch of nothing answers 404 in the route.
        if (type !== 'apply') return;
        stored = {};
      }
      object = applyPatch(KINDS[r.resource]!, type, stored, parsePatchBody(text, type));
    } else object = JSON.parse(text);
  } catch (err) {
    if (err instanceof ForbiddenError) throw err;
    return; // A malformed body or patch: the route refuses it with its own 4xx, having written nothing.
  }
  if (!isObject(object)) return;
  const name = r.name ?? (isObject(object.metadata) && typeof object.metadata.name === 'string' ? object.metadata.name : '');
  const refusal = escalationRefusal(options.index, { user, resource: r.resource, namespace: r.namespace, name, object: object as RbacObject });
  if (refusal !== undefined) throw new ForbiddenError(refusal, { kind: r.resource, group: RBAC_GROUP, name });
}
