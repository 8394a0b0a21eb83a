// RBAC escalation prevention: a Role or ClusterRole is written only with rules its writer holds (or the escalate verb), a binding only to a role whose rules its writer holds (or the bind verb), as Kubernetes' RBAC storage judges.
import { type PolicyRule, RBAC_GROUP } from '../../core/api/rbac.js';
import type { UserInfo } from '../api-server/auth.js';
import { describeGrant, uncoveredRules } from './policy-rule.js';
import type { RbacIndex } from './rbac-authorizer.js';
import { rbacUser } from './rbac-chain.js';

export const RBAC_ROLE_RESOURCES = new Set(['roles', 'clusterroles']);
export const RBAC_BINDING_RESOURCES = new Set(['rolebindings', 'clusterrolebindings']);

/** What the check reads of the object as the write would leave it. */
export interface RbacObject {
  rules?: PolicyRule[];
  aggregationRule?: unknown;
  roleRef?: { kind?: string; name?: string };
}

export interface EscalationQuestion {
  user: UserInfo;
  /** roles, clusterroles, rolebindings or clusterrolebindings. */
  resource: string;
  namespace?: string;
  name: string;
  object: RbacObject;
}

const EVERYTHING: PolicyRule[] = [
  { apiGroups: ['*'], resources: ['*'], verbs: ['*'] },
  { nonResourceURLs: ['*'], verbs: ['*'] },
];

/** Go's %q of a string slice, as Kubernetes prints a user's groups: `["a" "b"]`. */
function quotedList(xs: readonly string[]): string {
  return `[${xs.map((x) => JSON.stringify(x)).join(' ')}]`;
}

/** `clusterroles.rbac.authorization.k8s.io "x" is forbidden: ` */
function forbiddenPrefix(q: EscalationQuestion): string {
  return `${q.resource}.${RBAC_GROUP} "${q.name}" is forbidden: `;
}

function notHeld(q: EscalationQuestion, missing: ReturnType<typeof uncoveredRules>): string {
  const u = rbacUser(q.user);
  return `${forbiddenPrefix(q)}user "${u.name}" (groups=${quotedList(u.groups)}) is attempting to grant RBAC permissions not currently held:\n${missing.map(describeGrant).join('\n')}`;
}

/**
 * The refusal's message, or undefined when the write may go on. The writer's rules are those
 * RBAC gives it where the object applies: in the namespace for a Role or RoleBinding (its
 * ClusterRoleBindings included), cluster-wide for the cluster kinds.
 */
export function escalationRefusal(index: RbacIndex, q: EscalationQuestion): string | undefined {
  const user = rbacUser(q.user);
  const namespace = q.resource === 'roles' || q.resource === 'rolebindings' ? q.namespace : undefined;
  const held = index.rulesFor(user, namespace);
  if (RBAC_ROLE_RESOURCES.has(q.resource)) {
    const verb = { verb: 'escalate', group: RBAC_GROUP, resource: q.resource, name: q.name, ...(namespace !== undefined ? { namespace } : {}) };
    if (index.authorize(user, verb).allowed) return undefined;
    if (q.object.aggregationRule !== undefined && q.object.aggregationRule !== null && uncoveredRules(held, EVERYTHING).length > 0) {
      return `${forbiddenPrefix(q)}must have cluster-admin privileges to use the aggregationRule`;
    }
    const missing = uncoveredRules(held, q.object.rules ?? []);
    return missing.length > 0 ? notHeld(q, missing) : undefined;
  }
  if (RBAC_BINDING_RESOURCES.has(q.resource)) {
    const ref = q.object.roleRef;
    if (!ref?.kind || !ref.name) return undefined; // Validation refuses it with its own 422.
    const refResource = ref.kind === 'ClusterRole' ? 'clusterroles' : 'roles';
    const bind = { verb: 'bind', group: RBAC_GROUP, resource: refResource, name: ref.name, ...(namespace !== undefined ? { namespace } : {}) };
    if (index.authorize(user, bind).allowed) return undefined;
    const rules = index.roleRules({ kind: ref.kind, name: ref.name }, namespace);
    if (rules === undefined) return `${forbiddenPrefix(q)}${refResource}.${RBAC_GROUP} "${ref.name}" not found`;
    const missing = uncoveredRules(held, rules);
    return missing.length > 0 ? notHeld(q, missing) : undefined;
  }
  return undefined;
}
