// Parses Kubernetes-style API paths into the kind, namespace, name and subresource they address.
import type { KindDefinition } from '../../core/api/kind.js';
import { kindByResource } from '../../core/api/registry.js';
import { BadRequestError, NotFoundError } from '../../core/errors.js';

export interface ResourceTarget {
  def: KindDefinition;
  /** Set for namespaced kinds addressed inside a namespace; undefined for all namespaces or cluster kinds. */
  namespace?: string;
  name?: string;
  subresource?: string;
}

/** Decodes one percent-encoded path segment or query part; a malformed escape is the client's error (400), not ours. */
export function decodeComponent(text: string, what = 'path'): string {
  if (!text.includes('%')) return text;
  try {
    return decodeURIComponent(text);
  } catch (err) {
    throw new BadRequestError(`invalid URL escape in the request ${what}: ${JSON.stringify(text.slice(0, 100))}`, { cause: err });
  }
}

/**
 * Kubernetes' rule for a name that travels as one path segment (IsValidPathSegmentName):
 * `.` and `..` would name another path once a client or proxy resolves them, and `/` or `%`
 * would split or re-encode it.
 */
export function pathSegmentNameProblems(name: string): string[] {
  if (name === '.' || name === '..') return [`may not be '${name}'`];
  const problems: string[] = [];
  if (name.includes('/')) problems.push("may not contain '/'");
  if (name.includes('%')) problems.push("may not contain '%'");
  return problems;
}

/**
 * Refuses a request target that a URL parser would rewrite before routing: a `.` or `..`
 * segment, raw or percent-encoded (`%2e%2e`), makes `pods/..` read as the namespace above it,
 * so the route and the authorization would judge another object than the client named. Also
 * refuses malformed percent-escapes in the path or query (400, not a 500 from the decoder).
 * `target` is the raw request target as it came off the socket (path and query).
 */
export function checkRequestTarget(target: string): void {
  const q = target.indexOf('?');
  const path = q < 0 ? target : target.slice(0, q);
  for (const segment of path.split('/')) {
    const decoded = decodeComponent(segment);
    if (decoded === '.' || decoded === '..') {
      throw new BadRequestError(`the request path may not contain '${decoded}' segments: ${JSON.stringify(path.slice(0, 200))}`);
    }
  }
  if (q < 0) return;
  for (const part of target.slice(q + 1).split('&')) decodeComponent(part.replaceAll('+', ' '), 'query');
}

/** Subresources this server knows, per kind predicate. */
function subresourceAllowed(def: KindDefinition, sub: string): boolean {
  if (sub === 'status') return def.statusSubresource;
  return false;
}

/**
 * `/api/v1/namespaces/default/pods/web/status` -> {Pod, default, web, status}.
 * Returns undefined for paths outside the resource API (discovery, health) so the caller can route them.
 * Throws NotFoundError for resource paths naming something that does not exist.
 */
export function parseResourcePath(path: string): ResourceTarget | undefined {
  const parts = path
    .split('/')
    .filter((p) => p.length > 0)
    .map((p) => decodeComponent(p));
  let group: string;
  let version: string;
  let rest: string[];
  if (parts[0] === 'api' && parts.length >= 3) {
    group = '';
    version = parts[1]!;
    rest = parts.slice(2);
  } else if (parts[0] === 'apis' && parts.length >= 4) {
    group = parts[1]!;
    version = parts[2]!;
    rest = parts.slice(3);
  } else {
    return undefined;
  }
  const notFound = () => new NotFoundError('the server could not find the requested resource');
  const checkName = (name: string | undefined, what: string) => {
    if (name === undefined) return;
    const problems = pathSegmentNameProblems(name);
    if (problems.length) throw new BadRequestError(`invalid ${what} name ${JSON.stringify(name)}: [${problems.join(', ')}]`);
  };

  // namespaces/{ns}/{resource}[/{name}[/{sub}]] when {resource} is a namespaced kind of this group/version.
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    const def = kindByResource(group, version, rest[2]!);
    if (def?.namespaced) {
      if (rest.length > 5) throw notFound();
      const target: ResourceTarget = { def, namespace: rest[1], name: rest[3], subresource: rest[4] };
      checkName(target.namespace, 'namespace');
      checkName(target.name, 'resource');
      if (target.subresource !== undefined && !subresourceAllowed(def, target.subresource)) throw notFound();
      return target;
    }
  }
  const def = kindByResource(group, version, rest[0]!);
  if (!def || rest.length > 3) throw notFound();
  const target: ResourceTarget = { def, name: rest[1], subresource: rest[2] };
  checkName(target.name, 'resource');
  if (target.subresource !== undefined && !subresourceAllowed(def, target.subresource)) throw notFound();
  return target;
}
