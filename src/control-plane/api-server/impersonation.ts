// Impersonation headers (Impersonate-User, Impersonate-Group): a user allowed the impersonate verb on users and groups acts as another, as kube-apiserver's impersonation filter does.
import type { MiddlewareHandler } from 'hono';
import { BadRequestError, ForbiddenError } from '../../core/errors.js';
import type { UserInfo } from './auth.js';
import { authorize, forbiddenMessage, type RbacAuthorizer, type RequestAttributes } from './authorization.js';

const SERVICE_ACCOUNT_PREFIX = 'system:serviceaccount:';

/** The user a request is impersonating, from its headers, or undefined when it names none. Groups without a user are a 400. */
export function impersonatedUser(userHeader: string | undefined, groupHeaders: readonly string[]): UserInfo | undefined {
  const name = userHeader?.trim();
  if (!name) {
    if (groupHeaders.length > 0) throw new BadRequestError(`requested ${JSON.stringify(groupHeaders)} without impersonating a user`);
    return undefined;
  }
  const groups = [...groupHeaders];
  // A ServiceAccount's user belongs to its groups, as its token would make it.
  if (name.startsWith(SERVICE_ACCOUNT_PREFIX) && groups.length === 0) {
    const namespace = name.slice(SERVICE_ACCOUNT_PREFIX.length).split(':')[0] ?? '';
    groups.push('system:serviceaccounts', `system:serviceaccounts:${namespace}`);
  }
  if (name !== 'system:anonymous' && !groups.includes('system:authenticated')) groups.push('system:authenticated');
  return { name, groups };
}

function impersonateAttributes(path: string, resource: 'users' | 'groups', name: string): RequestAttributes {
  return { verb: 'impersonate', path, resource: { group: '', version: 'v1', resource, name } };
}

/** After authentication: each name asked for is put to the authorizer, then the request goes on as the impersonated user. */
export function impersonationMiddleware(options: { rbac?: RbacAuthorizer }): MiddlewareHandler {
  return async (c, next) => {
    const user = c.get('user') as UserInfo | undefined;
    const userHeader = c.req.header('impersonate-user');
    if (!user || (userHeader === undefined && c.req.header('impersonate-group') === undefined)) return next();
    const groupHeaders = (c.req.raw.headers.get('impersonate-group') ?? '')
      .split(',')
      .map((g) => g.trim())
      .filter((g) => g.length > 0);
    const target = impersonatedUser(userHeader, groupHeaders);
    if (!target) return next();
    const asks: RequestAttributes[] = [
      impersonateAttributes(c.req.path, 'users', target.name),
      ...groupHeaders.map((g) => impersonateAttributes(c.req.path, 'groups', g)),
    ];
    for (const attrs of asks) {
      const decision = authorize(user, attrs, options.rbac);
      if (!decision.allowed) {
        const r = attrs.resource!;
        throw new ForbiddenError(forbiddenMessage(user, attrs, decision.reason), { kind: r.resource, name: r.name });
      }
    }
    c.set('user', target);
    return next();
  };
}
