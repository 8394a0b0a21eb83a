// The RBAC link of the authorization chain: request attributes put to an RbacIndex, with the groups Kubernetes gives every authenticated user.
import type { UserInfo } from '../api-server/auth.js';
import type { Decision, RbacAuthorizer, RequestAttributes } from '../api-server/authorization.js';
import type { RbacIndex, RbacRequest, RbacUser } from './rbac-authorizer.js';

/** Every authenticated user is in this group (system:basic-user and system:discovery are bound to it). */
export const AUTHENTICATED_GROUP = 'system:authenticated';
export const UNAUTHENTICATED_GROUP = 'system:unauthenticated';

/** The user as RBAC judges it: its groups plus system:authenticated, as Kubernetes' authenticators add it. */
export function rbacUser(user: UserInfo): RbacUser {
  return { name: user.name, groups: user.groups.includes(AUTHENTICATED_GROUP) ? user.groups : [...user.groups, AUTHENTICATED_GROUP] };
}

/** Attributes -> what RBAC matches: group, resource, subresource, name, namespace; or a path. */
export function rbacRequest(attrs: RequestAttributes): RbacRequest {
  const r = attrs.resource;
  if (!r) return { verb: attrs.verb, path: attrs.path };
  return {
    verb: attrs.verb,
    group: r.group,
    resource: r.resource,
    ...(r.subresource !== undefined ? { subresource: r.subresource } : {}),
    ...(r.name !== undefined ? { name: r.name } : {}),
    ...(r.namespace !== undefined ? { namespace: r.namespace } : {}),
  };
}

/** RBAC says allow or nothing: its refusals carry no reason, so the Node rules' reasons (or none) explain a denial, as in Kubernetes. */
export function rbacChain(index: RbacIndex): RbacAuthorizer {
  return {
    authorize(user: UserInfo, attrs: RequestAttributes): Decision {
      return index.authorize(rbacUser(user), rbacRequest(attrs)).allowed ? { allowed: true } : { allowed: false };
    },
  };
}
