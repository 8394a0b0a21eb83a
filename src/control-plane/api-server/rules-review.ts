// What a user may do in a namespace, as SelfSubjectRulesReview lists it: every resource and verb the cluster serves, put to authorize() itself, so the list cannot drift from the policy.
import { kinds } from '../../core/api/registry.js';
import type { PolicyRule } from '../../core/api/rbac.js';
import type { UserInfo } from './auth.js';
import { authorize, JOIN_GROUP, JOIN_RESOURCE, JOIN_TOKENS_RESOURCE, MASTERS_GROUP, nodeNameOf, type RequestAttributes } from './authorization.js';

export interface ResourceRule {
  verbs: string[];
  apiGroups: string[];
  resources: string[];
  resourceNames?: string[];
}

export interface NonResourceRule {
  verbs: string[];
  nonResourceURLs: string[];
}

export interface RulesReviewStatus {
  resourceRules: ResourceRule[];
  nonResourceRules: NonResourceRule[];
  incomplete: boolean;
  evaluationError?: string;
}

/** A resource (or `resource/subresource`) to ask about, with the verbs it serves. */
interface Candidate {
  group: string;
  resource: string;
  namespaced: boolean;
  verbs: readonly string[];
}

const OBJECT_VERBS = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'] as const;
/** Verbs about one object, which a rule may restrict to some names; the others are about collections. */
const NAMED_VERBS = new Set(['get', 'update', 'patch', 'delete']);
const SUBRESOURCE_VERBS: Record<string, readonly string[]> = { status: ['get', 'update', 'patch'] };

/** Paths anyone reaches without credentials (health and version), as Kubernetes' system:public-info-viewer grants them. */
const PUBLIC_PATHS = ['/healthz', '/livez', '/readyz', '/version', '/version/'];

/** Resources served by their own routes rather than a kind: joining, join tokens, token and access reviews. */
const SPECIAL: readonly Candidate[] = [
  { group: JOIN_GROUP, resource: JOIN_RESOURCE, namespaced: false, verbs: ['create'] },
  { group: JOIN_GROUP, resource: JOIN_TOKENS_RESOURCE, namespaced: false, verbs: ['get', 'list', 'create', 'delete'] },
  { group: 'authentication.k8s.io', resource: 'tokenreviews', namespaced: false, verbs: ['create'] },
  { group: 'authorization.k8s.io', resource: 'selfsubjectaccessreviews', namespaced: false, verbs: ['create'] },
  { group: 'authorization.k8s.io', resource: 'selfsubjectrulesreviews', namespaced: false, verbs: ['create'] },
  { group: 'authorization.k8s.io', resource: 'subjectaccessreviews', namespaced: false, verbs: ['create'] },
  { group: 'authorization.k8s.io', resource: 'localsubjectaccessreviews', namespaced: true, verbs: ['create'] },
];

/** Every resource and subresource the API serves, with their verbs. */
export function reviewCandidates(): Candidate[] {
  const out: Candidate[] = [];
  for (const k of kinds) {
    out.push({ group: k.group, resource: k.resource, namespaced: k.namespaced, verbs: OBJECT_VERBS });
    if (k.statusSubresource) out.push({ group: k.group, resource: `${k.resource}/status`, namespaced: k.namespaced, verbs: SUBRESOURCE_VERBS.status! });
    for (const sub of k.subresources ?? []) out.push({ group: k.group, resource: `${k.resource}/${sub.name}`, namespaced: k.namespaced, verbs: sub.verbs });
  }
  return [...out, ...SPECIAL];
}

function attributes(c: Candidate, verb: string, namespace: string, name: string | undefined): RequestAttributes {
  const slash = c.resource.indexOf('/');
  const [resource, subresource] = slash < 0 ? [c.resource, undefined] : [c.resource.slice(0, slash), c.resource.slice(slash + 1)];
  return {
    verb,
    path: '',
    resource: {
      group: c.group,
      version: '',
      resource,
      ...(subresource !== undefined ? { subresource } : {}),
      ...(c.namespaced ? { namespace } : {}),
      ...(name !== undefined ? { name } : {}),
    },
  };
}

/**
 * The rules of one user in one namespace (cluster-scoped resources included, as Kubernetes lists
 * them). Admins get the wildcard. For the others each (resource, verb) is put to authorize(): allowed
 * for any name, or else for the one object the user speaks for (its Node and Lease, its job).
 * Rules that depend on stored objects (a pod bound to the node, a Secret its pods use) cannot be
 * listed; the review then says it is incomplete, as Kubernetes' node authorizer does.
 */
export function rulesReview(user: UserInfo, namespace: string, rbacRules?: (user: UserInfo, namespace: string) => PolicyRule[]): RulesReviewStatus {
  if (user.groups.includes(MASTERS_GROUP)) {
    return {
      resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
      nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
      incomplete: false,
    };
  }
  const ownNames = [nodeNameOf(user)].filter((n): n is string => n !== undefined);
  const rules = new Map<string, ResourceRule>();
  const add = (c: Candidate, verb: string, name?: string) => {
    const key = `${c.group}\0${c.resource}\0${name ?? ''}`;
    const rule = rules.get(key) ?? { verbs: [], apiGroups: [c.group], resources: [c.resource], ...(name !== undefined ? { resourceNames: [name] } : {}) };
    rule.verbs.push(verb);
    rules.set(key, rule);
  };
  for (const c of reviewCandidates()) {
    for (const verb of c.verbs) {
      if (authorize(user, attributes(c, verb, namespace, undefined)).allowed) add(c, verb);
      else if (NAMED_VERBS.has(verb) || verb === 'create') {
        for (const name of ownNames) if (authorize(user, attributes(c, verb, namespace, name)).allowed) add(c, verb, name);
      }
    }
  }
  const nonResourceRules: NonResourceRule[] = [{ verbs: ['get'], nonResourceURLs: PUBLIC_PATHS }];
  // Discovery: judged for one path, since the policy treats every non-resource path alike.
  if (authorize(user, { verb: 'get', path: '/api' }).allowed) nonResourceRules.unshift({ verbs: ['get'], nonResourceURLs: ['*'] });
  const conditional = nodeNameOf(user) !== undefined;
  // RBAC's rules as its roles state them (names and wildcards kept), after the built-in ones.
  const granted = rbacRules?.(user, namespace) ?? [];
  for (const rule of granted) {
    if (rule.nonResourceURLs?.length) nonResourceRules.push({ verbs: [...rule.verbs], nonResourceURLs: [...rule.nonResourceURLs] });
    if (rule.resources?.length) {
      const key = `rbac\0${JSON.stringify(rule)}`;
      rules.set(key, {
        verbs: [...rule.verbs],
        apiGroups: [...(rule.apiGroups ?? [])],
        resources: [...rule.resources],
        ...(rule.resourceNames?.length ? { resourceNames: [...rule.resourceNames] } : {}),
      });
    }
  }
  return {
    resourceRules: [...rules.values()],
    nonResourceRules,
    incomplete: conditional,
    ...(conditional
      ? {
          evaluationError:
            "some of this user's rights depend on stored objects (pods bound to a node, the Secrets they use, a GPU job's phase), which a rules review does not list",
        }
      : {}),
  };
}
