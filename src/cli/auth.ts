// `minik8s auth can-i VERB RESOURCE[/NAME]`: asks the server with a SelfSubjectAccessReview and prints yes or no, as kubectl auth can-i does.
import { kindByName } from '../core/api/registry.js';
import { CliError } from './cli-error.js';
import type { CliContext } from './context.js';

export interface CanIArgs {
  verb: string;
  /** RESOURCE, RESOURCE/NAME, RESOURCE.GROUP, or a non-resource URL such as /healthz. */
  resource?: string;
  name?: string;
  subresource?: string;
  allNamespaces?: boolean;
  quiet?: boolean;
  /** Ask as this user (Impersonate-User), which needs the impersonate verb. */
  as?: string;
  /** And these groups (Impersonate-Group). */
  asGroups?: readonly string[];
}

interface ReviewStatus {
  allowed?: boolean;
  reason?: string;
  evaluationError?: string;
}

/** The review's spec: resource attributes for a resource (its group found from the kind list), non-resource ones for a URL. */
export function reviewSpec(args: CanIArgs, namespace: string, warn: (text: string) => void): Record<string, unknown> {
  const target = args.resource ?? '';
  if (target.startsWith('/')) return { nonResourceAttributes: { verb: args.verb, path: target } };
  const slash = target.indexOf('/');
  const [typeName, name] = slash >= 0 ? [target.slice(0, slash), target.slice(slash + 1)] : [target, args.name];
  const attributes: Record<string, unknown> = { namespace: args.allNamespaces ? '' : namespace, verb: args.verb };
  if (typeName === '*') {
    attributes.resource = '*';
    attributes.group = '*';
  } else {
    const def = kindByName(typeName);
    if (def) {
      attributes.group = def.group;
      attributes.resource = def.resource;
    } else {
      warn(`Warning: the server doesn't have a resource type '${typeName}'\n\n`);
      const dot = typeName.indexOf('.');
      attributes.resource = dot > 0 ? typeName.slice(0, dot) : typeName;
      attributes.group = dot > 0 ? typeName.slice(dot + 1) : '';
    }
  }
  if (name) attributes.name = name;
  if (args.subresource) attributes.subresource = args.subresource;
  return { resourceAttributes: attributes };
}

/** Impersonation headers for --as and --as-group; groups alone are refused as kubectl refuses them. */
export function impersonationHeaders(as: string | undefined, groups: readonly string[] = []): Record<string, string> {
  if (!as && groups.length > 0) throw new CliError('requesting groups without impersonating a user: give --as USER with --as-group');
  if (!as) return {};
  return { 'impersonate-user': as, ...(groups.length > 0 ? { 'impersonate-group': groups.join(', ') } : {}) };
}

export async function runCanI(ctx: CliContext, args: CanIArgs): Promise<number> {
  const spec = reviewSpec(args, ctx.namespace, ctx.err);
  const review = (await ctx.client().request('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
    body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec },
    headers: impersonationHeaders(args.as, args.asGroups),
  })) as { status?: ReviewStatus };
  const status = review?.status ?? {};
  if (!args.quiet) {
    if (status.allowed) ctx.out('yes\n');
    else ctx.out(`no${status.reason ? ` - ${status.reason}` : ''}${status.evaluationError ? ` - ${status.evaluationError}` : ''}\n`);
  }
  return status.allowed ? 0 : 1;
}
