// The authorization middleware: the request's attributes, the stored facts a node's writes are judged by, authorize(), and 403 Status on refusal.
import type { Context, MiddlewareHandler } from 'hono';
import { gpuJobKind, type GpuJob } from '../../core/api/gpujob.js';
import type { KubeObject } from '../../core/api/meta.js';
import { nodeKind } from '../../core/api/node.js';
import { podKind } from '../../core/api/pod.js';
import { ForbiddenError, NotFoundError } from '../../core/errors.js';
import type { UserInfo } from './auth.js';
import {
  authorize,
  forbiddenMessage,
  MASTERS_GROUP,
  needsBodyName,
  needsGpuJobLookup,
  needsNodeSpecCheck,
  needsPodLookup,
  requestAttributes,
  type RequestAttributes,
} from './authorization.js';
import { BODY_TEXT_VARIABLE, readRequestText } from './body.js';
import type { ObjectService } from './object-service.js';

export interface AuthorizationMiddlewareOptions {
  service: ObjectService;
}

/** The node the stored pod is bound to, '' when unscheduled, null when there is no such pod. */
async function podNode(service: ObjectService, namespace: string, name: string): Promise<string | null> {
  try {
    const pod = (await service.get(podKind, namespace, name)) as KubeObject & { spec?: { nodeName?: string } };
    return pod.spec?.nodeName ?? '';
  } catch (err) {
    if (err instanceof NotFoundError) return null;
    throw err;
  }
}

/** The stored GpuJob's uid and phase, null when there is no such job (a job token is good for that one object only). */
async function gpuJobFacts(service: ObjectService, namespace: string, name: string): Promise<{ uid: string; phase?: string } | null> {
  try {
    const job = (await service.get(gpuJobKind, namespace, name)) as GpuJob;
    return { uid: job.metadata.uid ?? '', phase: job.status?.phase };
  } catch (err) {
    if (err instanceof NotFoundError) return null;
    throw err;
  }
}

/** Whether a Node write's body sets spec.podCIDR(s) to other values than the stored Node holds (none, when there is no such Node). */
async function changesPodCIDR(service: ObjectService, name: string | undefined, text: string): Promise<boolean> {
  let spec: { podCIDR?: unknown; podCIDRs?: unknown } | undefined;
  try {
    spec = (JSON.parse(text) as { spec?: typeof spec } | null)?.spec ?? undefined;
  } catch {
    return false;
  }
  if (!spec || typeof spec !== 'object' || (!('podCIDR' in spec) && !('podCIDRs' in spec))) return false;
  let stored: { podCIDR?: unknown; podCIDRs?: unknown } = {};
  if (name !== undefined) {
    try {
      stored = ((await service.get(nodeKind, undefined, name)) as KubeObject & { spec?: typeof stored }).spec ?? {};
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err;
    }
  }
  const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
  return ('podCIDR' in spec && !same(spec.podCIDR, stored.podCIDR)) || ('podCIDRs' in spec && !same(spec.podCIDRs, stored.podCIDRs));
}

/** metadata.name of a JSON body, if it has one; a malformed body is left for the route to refuse. */
function bodyName(text: string): string | undefined {
  try {
    const name = (JSON.parse(text) as { metadata?: { name?: unknown } } | null)?.metadata?.name;
    return typeof name === 'string' ? name : undefined;
  } catch {
    return undefined;
  }
}

/** Runs after authentication, which sets the `user` variable on every path but the public ones. */
export function authorizationMiddleware(options: AuthorizationMiddlewareOptions): MiddlewareHandler {
  return async (c: Context, next) => {
    const user = c.get('user') as UserInfo | undefined;
    // No user: a public path (health, version), which authentication let through unauthenticated.
    // Admins may do everything: spare their requests (nearly all of them) the parsing.
    if (!user || user.groups.includes(MASTERS_GROUP)) return next();
    const attrs: RequestAttributes = requestAttributes(c.req.method, c.req.path, { watch: c.req.query('watch') });
    if (needsPodLookup(user, attrs)) {
      attrs.podNodeName = await podNode(options.service, attrs.resource!.namespace!, attrs.resource!.name!);
    }
    if (needsGpuJobLookup(user, attrs)) {
      attrs.gpuJob = await gpuJobFacts(options.service, attrs.resource!.namespace!, attrs.resource!.name!);
    }
    if (needsBodyName(user, attrs)) {
      const text = await readRequestText(c);
      c.set(BODY_TEXT_VARIABLE, text);
      const name = bodyName(text);
      if (name !== undefined) attrs.resource = { ...attrs.resource!, name };
    }
    if (needsNodeSpecCheck(user, attrs)) {
      const text = await readRequestText(c);
      c.set(BODY_TEXT_VARIABLE, text);
      attrs.changesPodCIDR = await changesPodCIDR(options.service, attrs.resource!.name, text);
    }
    const decision = authorize(user, attrs);
    if (!decision.allowed) {
      const r = attrs.resource;
      throw new ForbiddenError(forbiddenMessage(user, attrs, decision.reason), r ? { kind: r.resource, group: r.group, name: r.name } : {});
    }
    return next();
  };
}
