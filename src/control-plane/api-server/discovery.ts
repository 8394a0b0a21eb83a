// Discovery documents (/api, /apis, /api/v1, /apis/GROUP/VERSION) built from the kind registry.
import { apiVersionOf, type KindDefinition } from '../../core/api/kind.js';
import { kinds } from '../../core/api/registry.js';

const VERBS = ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'];

/**
 * Resources that are questions rather than stored kinds (POST only, nothing kept): served by
 * their own routes, listed here so that discovery (`kubectl api-versions`, `api-resources`)
 * shows them as kube-apiserver does.
 */
const REVIEW_RESOURCES: readonly { group: string; version: string; name: string; kind: string; namespaced?: boolean }[] = [
  { group: 'authentication.k8s.io', version: 'v1', name: 'tokenreviews', kind: 'TokenReview' },
  { group: 'authentication.k8s.io', version: 'v1', name: 'selfsubjectreviews', kind: 'SelfSubjectReview' },
  { group: 'authorization.k8s.io', version: 'v1', name: 'selfsubjectaccessreviews', kind: 'SelfSubjectAccessReview' },
  { group: 'authorization.k8s.io', version: 'v1', name: 'selfsubjectrulesreviews', kind: 'SelfSubjectRulesReview' },
  { group: 'authorization.k8s.io', version: 'v1', name: 'subjectaccessreviews', kind: 'SubjectAccessReview' },
  { group: 'authorization.k8s.io', version: 'v1', name: 'localsubjectaccessreviews', kind: 'LocalSubjectAccessReview', namespaced: true },
];

function groupVersions(): { group: string; version: string }[] {
  const seen = new Map<string, { group: string; version: string }>();
  for (const k of [...kinds, ...REVIEW_RESOURCES]) seen.set(apiVersionOf(k), { group: k.group, version: k.version });
  return [...seen.values()];
}

export function coreVersions(): unknown {
  return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [] };
}

export function apiGroupList(): unknown {
  const groups = new Map<string, string[]>();
  for (const gv of groupVersions()) {
    if (!gv.group) continue;
    groups.set(gv.group, [...(groups.get(gv.group) ?? []), gv.version]);
  }
  return {
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: [...groups].map(([name, versions]) => ({
      name,
      versions: versions.map((version) => ({ groupVersion: `${name}/${version}`, version })),
      preferredVersion: { groupVersion: `${name}/${versions[0]}`, version: versions[0] },
    })),
  };
}

/** The resource list of one group/version, or undefined if nothing is served there. */
export function apiResourceList(group: string, version: string): unknown {
  const defs = kinds.filter((k) => k.group === group && k.version === version);
  const reviews = REVIEW_RESOURCES.filter((r) => r.group === group && r.version === version);
  if (defs.length === 0 && reviews.length === 0) return undefined;
  const resources: unknown[] = reviews.map((r) => ({ name: r.name, singularName: '', namespaced: r.namespaced ?? false, kind: r.kind, verbs: ['create'] }));
  for (const def of defs) {
    resources.push(resourceEntry(def));
    if (def.statusSubresource) {
      resources.push({ name: `${def.resource}/status`, singularName: '', namespaced: def.namespaced, kind: def.kind, verbs: ['get', 'patch', 'update'] });
    }
    for (const sub of def.subresources ?? []) {
      resources.push({
        name: `${def.resource}/${sub.name}`,
        singularName: '',
        namespaced: def.namespaced,
        ...(sub.group !== undefined ? { group: sub.group } : {}),
        ...(sub.version !== undefined ? { version: sub.version } : {}),
        kind: sub.kind,
        verbs: sub.verbs,
      });
    }
  }
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: apiVersionOf({ group, version }), resources };
}

function resourceEntry(def: KindDefinition): unknown {
  return {
    name: def.resource,
    singularName: def.singular,
    namespaced: def.namespaced,
    kind: def.kind,
    verbs: VERBS,
    ...(def.shortNames.length ? { shortNames: def.shortNames } : {}),
    ...(def.categories?.length ? { categories: def.categories } : {}),
  };
}
