// Parses Kubernetes-style API paths into the kind, namespace, name and subresource they address.
import type { KindDefinition } from '../../core/api/kind.js';
import { kindByResource } from '../../core/api/registry.js';
import { NotFoundError } from '../../core/errors.js';

export interface ResourceTarget {
  def: KindDefinition;
  /** Set for namespaced kinds addressed inside a namespace; undefined for all namespaces or cluster kinds. */
  namespace?: string;
  name?: string;
  subresource?: string;
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
    .map((p) => decodeURIComponent(p));
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

  // namespaces/{ns}/{resource}[/{name}[/{sub}]] when {resource} is a namespaced kind of this group/version.
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    const def = kindByResource(group, version, rest[2]!);
    if (def?.namespaced) {
      if (rest.length > 5) throw notFound();
      const target: ResourceTarget = { def, namespace: rest[1], name: rest[3], subresource: rest[4] };
      if (target.subresource !== undefined && !subresourceAllowed(def, target.subresource)) throw notFound();
      return target;
    }
  }
  const def = kindByResource(group, version, rest[0]!);
  if (!def || rest.length > 3) throw notFound();
  const target: ResourceTarget = { def, name: rest[1], subresource: rest[2] };
  if (target.subresource !== undefined && !subresourceAllowed(def, target.subresource)) throw notFound();
  return target;
}
