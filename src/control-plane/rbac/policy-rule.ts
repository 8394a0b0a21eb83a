// Whether a PolicyRule grants a request, and whether one set of rules covers another (RBAC's escalation check), as Kubernetes' RBAC authorizer judges them.
import type { PolicyRule } from '../../core/api/rbac.js';

/** What RBAC reads of a request: a resource request (with group, resource, subresource, name) or a non-resource path. */
export type RuleRequest = { verb: string; group: string; resource: string; subresource?: string; name?: string } | { verb: string; path: string };

const ALL = '*';

function hasVerb(rule: PolicyRule, verb: string): boolean {
  return rule.verbs.some((v) => v === ALL || v === verb);
}

/** `pods`, `pods/log`, `*`, and a star before a subresource (any resource's scale, say) as Kubernetes matches them. */
function hasResource(rule: PolicyRule, resource: string, subresource: string | undefined): boolean {
  const wanted = subresource ? `${resource}/${subresource}` : resource;
  return (rule.resources ?? []).some((r) => r === ALL || r === wanted || (subresource !== undefined && r === `*/${subresource}`));
}

/** A rule naming resources applies only to requests for one of those names: never to a list or a create without a name. */
function hasName(rule: PolicyRule, name: string | undefined): boolean {
  const names = rule.resourceNames ?? [];
  return names.length === 0 || (name !== undefined && names.includes(name));
}

/** `/healthz`, or a prefix ending in `*` (`/apis/*`), or `*` itself. */
function hasPath(rule: PolicyRule, path: string): boolean {
  return (rule.nonResourceURLs ?? []).some((u) => u === ALL || u === path || (u.endsWith('*') && path.startsWith(u.slice(0, -1))));
}

export function ruleAllows(rule: PolicyRule, request: RuleRequest): boolean {
  if (!hasVerb(rule, request.verb)) return false;
  if ('path' in request) return hasPath(rule, request.path);
  return (
    (rule.apiGroups ?? []).some((g) => g === ALL || g === request.group) &&
    hasResource(rule, request.resource, request.subresource) &&
    hasName(rule, request.name)
  );
}

export function rulesAllow(rules: readonly PolicyRule[], request: RuleRequest): boolean {
  return rules.some((r) => ruleAllows(r, request));
}

/**
 * Breaks a rule into single grants (one verb, one group, one resource, one name or none, or one
 * path): a set of rules covers another when it allows each grant of the other. A `*` asked for is
 * covered only by a `*` held (matched as a literal value), so holding every named verb never
 * covers `*`, as Kubernetes' Covers judges.
 */
function grantsOf(rule: PolicyRule): RuleRequest[] {
  const out: RuleRequest[] = [];
  for (const verb of rule.verbs) {
    for (const path of rule.nonResourceURLs ?? []) out.push({ verb, path });
    for (const group of rule.apiGroups ?? []) {
      for (const res of rule.resources ?? []) {
        const slash = res.indexOf('/');
        const resource = slash < 0 ? res : res.slice(0, slash);
        const subresource = slash < 0 ? undefined : res.slice(slash + 1);
        const names = rule.resourceNames?.length ? rule.resourceNames : [undefined];
        for (const name of names)
          out.push({ verb, group, resource, ...(subresource !== undefined ? { subresource } : {}), ...(name !== undefined ? { name } : {}) });
      }
    }
  }
  return out;
}

/** Judges a grant whose parts may be `*` against held rules, `*` matching only `*` or a held wildcard. */
function heldAllows(held: readonly PolicyRule[], grant: RuleRequest): boolean {
  return held.some((rule) => {
    if (!hasVerb(rule, grant.verb)) return false;
    if ('path' in grant) return hasPath(rule, grant.path);
    if (!(rule.apiGroups ?? []).some((g) => g === ALL || g === grant.group)) return false;
    const resources = rule.resources ?? [];
    const wanted = grant.subresource !== undefined ? `${grant.resource}/${grant.subresource}` : grant.resource;
    const resourceOk = resources.some(
      (r) => r === ALL || r === wanted || (grant.subresource !== undefined && grant.resource !== ALL && r === `*/${grant.subresource}`),
    );
    if (!resourceOk) return false;
    const names = rule.resourceNames ?? [];
    return names.length === 0 || (grant.name !== undefined && names.includes(grant.name));
  });
}

/** The grants of `wanted` that `held` does not cover (empty: covered). */
export function uncoveredRules(held: readonly PolicyRule[], wanted: readonly PolicyRule[]): RuleRequest[] {
  return wanted.flatMap(grantsOf).filter((g) => !heldAllows(held, g));
}

/** Kubernetes' wording of one rule in an escalation error: `{APIGroups:["apps"], Resources:["deployments"], Verbs:["create"]}`. */
export function describeGrant(g: RuleRequest): string {
  const list = (xs: string[]) => `[${xs.map((x) => JSON.stringify(x)).join(' ')}]`;
  if ('path' in g) return `{NonResourceURLs:${list([g.path])}, Verbs:${list([g.verb])}}`;
  const resource = g.subresource !== undefined ? `${g.resource}/${g.subresource}` : g.resource;
  const names = g.name !== undefined ? `, ResourceNames:${list([g.name])}` : '';
  return `{APIGroups:${list([g.group])}, Resources:${list([resource])}${names}, Verbs:${list([g.verb])}}`;
}
