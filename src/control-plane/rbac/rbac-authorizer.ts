// The RBAC authorizer: an index of roles and bindings (kept current from informers) that answers whether a user may make a request, and by which binding.
import type { ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding, Subject } from '../../core/api/rbac.js';
import type { KubeObject } from '../../core/api/meta.js';
import { type RuleRequest, rulesAllow } from './policy-rule.js';

export interface RbacUser {
  name: string;
  groups: readonly string[];
}

/** A request as RBAC sees it: a resource request in a namespace (or cluster-wide), or a non-resource path. */
export type RbacRequest = RuleRequest & { namespace?: string };

export type RbacDecision = { allowed: true; reason: string } | { allowed: false };

/** The user name Kubernetes gives a ServiceAccount's tokens. */
export function serviceAccountUser(namespace: string, name: string): string {
  return `system:serviceaccount:${namespace}:${name}`;
}

/** The keys under which a binding is found for a subject, and under which a user looks. */
function subjectKeys(subject: Subject, bindingNamespace: string | undefined): string[] {
  switch (subject.kind) {
    case 'User':
      return [`u:${subject.name}`];
    case 'Group':
      return [`g:${subject.name}`];
    case 'ServiceAccount': {
      // A RoleBinding's ServiceAccount without a namespace means one of the binding's namespace.
      const ns = subject.namespace ?? bindingNamespace;
      return ns ? [`u:${serviceAccountUser(ns, subject.name)}`] : [];
    }
  }
}

function userKeys(user: RbacUser): string[] {
  return [`u:${user.name}`, ...user.groups.map((g) => `g:${g}`)];
}

type Binding = (RoleBinding | ClusterRoleBinding) & { metadata: { name?: string; namespace?: string } };

/**
 * Roles and bindings by name, and bindings by subject: a request looks up only the bindings
 * that name its user or one of the user's groups (a few, however many bindings exist), then the
 * rules of the roles they refer to.
 */
export class RbacIndex {
  readonly #roles = new Map<string, PolicyRule[]>();
  readonly #clusterRoles = new Map<string, PolicyRule[]>();
  /** Subject key -> bindings naming it: ClusterRoleBindings under '', RoleBindings under their namespace. */
  readonly #bySubject = new Map<string, Map<string, Binding>>();
  /** Binding identity -> the subject keys it was filed under, so that an update or delete unfiles it. */
  readonly #filed = new Map<string, string[]>();

  setRole(role: Role): void {
    this.#roles.set(`${role.metadata.namespace}/${role.metadata.name}`, role.rules ?? []);
  }

  deleteRole(role: Pick<Role, 'metadata'>): void {
    this.#roles.delete(`${role.metadata.namespace}/${role.metadata.name}`);
  }

  setClusterRole(role: ClusterRole): void {
    this.#clusterRoles.set(role.metadata.name ?? '', role.rules ?? []);
  }

  deleteClusterRole(role: Pick<ClusterRole, 'metadata'>): void {
    this.#clusterRoles.delete(role.metadata.name ?? '');
  }

  setBinding(binding: RoleBinding | ClusterRoleBinding): void {
    this.deleteBinding(binding);
    const b = binding as Binding;
    const id = bindingId(b);
    const keys = [...new Set((b.subjects ?? []).flatMap((s) => subjectKeys(s, b.kind === 'RoleBinding' ? b.metadata.namespace : undefined)))];
    for (const key of keys) {
      let filed = this.#bySubject.get(key);
      if (!filed) {
        filed = new Map();
        this.#bySubject.set(key, filed);
      }
      filed.set(id, b);
    }
    this.#filed.set(id, keys);
  }

  deleteBinding(binding: Pick<KubeObject, 'kind' | 'metadata'>): void {
    const id = bindingId(binding as Binding);
    for (const key of this.#filed.get(id) ?? []) {
      const filed = this.#bySubject.get(key);
      filed?.delete(id);
      if (filed?.size === 0) this.#bySubject.delete(key);
    }
    this.#filed.delete(id);
  }

  /** The rules a binding grants (none while its role does not exist, as Kubernetes treats a dangling roleRef). */
  #rulesOf(binding: Binding): PolicyRule[] {
    const ref = binding.roleRef;
    if (ref.kind === 'ClusterRole') return this.#clusterRoles.get(ref.name) ?? [];
    return this.#roles.get(`${binding.metadata.namespace}/${ref.name}`) ?? [];
  }

  /** The rules of the role a roleRef names (a Role in `namespace`), undefined when it does not exist. */
  roleRules(ref: { kind: string; name: string }, namespace: string | undefined): PolicyRule[] | undefined {
    return ref.kind === 'ClusterRole' ? this.#clusterRoles.get(ref.name) : this.#roles.get(`${namespace}/${ref.name}`);
  }

  /** The bindings that apply to a user for a request in `namespace` (ClusterRoleBindings always; RoleBindings of that namespace). */
  *#bindingsFor(user: RbacUser, namespace: string | undefined): Generator<Binding> {
    for (const key of userKeys(user)) {
      for (const b of this.#bySubject.get(key)?.values() ?? []) {
        if (b.kind === 'ClusterRoleBinding' || (namespace !== undefined && b.metadata.namespace === namespace)) yield b;
      }
    }
  }

  authorize(user: RbacUser, request: RbacRequest): RbacDecision {
    // A non-resource path is judged by ClusterRoleBindings only, as in Kubernetes.
    const namespace = 'path' in request ? undefined : request.namespace;
    for (const b of this.#bindingsFor(user, namespace)) {
      if (rulesAllow(this.#rulesOf(b), request)) return { allowed: true, reason: allowedReason(b, user) };
    }
    return { allowed: false };
  }

  /** Every rule the user holds in `namespace` (with cluster-wide ones), for SelfSubjectRulesReview and the escalation check. */
  rulesFor(user: RbacUser, namespace: string | undefined): PolicyRule[] {
    return [...this.#bindingsFor(user, namespace)].flatMap((b) => this.#rulesOf(b));
  }
}

function bindingId(b: Binding): string {
  return b.kind === 'ClusterRoleBinding' ? `crb/${b.metadata.name}` : `rb/${b.metadata.namespace}/${b.metadata.name}`;
}

/** Kubernetes' audit reason: `RBAC: allowed by ClusterRoleBinding "x" of ClusterRole "y" to User "z"`. */
function allowedReason(b: Binding, user: RbacUser): string {
  const where = b.kind === 'RoleBinding' ? ` in namespace "${b.metadata.namespace}"` : '';
  const subject = (b.subjects ?? []).find((s) => subjectKeys(s, b.metadata.namespace).some((k) => userKeys(user).includes(k)));
  const to = subject ? ` to ${subject.kind} "${subject.name}"` : '';
  return `RBAC: allowed by ${b.kind} "${b.metadata.name}" of ${b.roleRef.kind} "${b.roleRef.name}"${to}${where}`;
}
