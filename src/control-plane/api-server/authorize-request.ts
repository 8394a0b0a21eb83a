// The authorization middleware: the request's attributes, the stored facts a node's writes are judged by, authorize(), and 403 Status on refusal.
import type { Context, MiddlewareHandler } from 'hono';
import type { KubeObject } from '../../core/api/meta.js';
import { nodeKind, type Node } from '../../core/api/node.js';
import { podKind, type Pod } from '../../core/api/pod.js';
import { ForbiddenError, NotFoundError } from '../../core/errors.js';
import type { UserInfo } from './auth.js';
import {
  authorize,
  forbiddenMessage,
  MASTERS_GROUP,
  needsBodyName,
  needsConfigMapLookup,
  needsNodeRestriction,
  needsPodLookup,
  needsSecretLookup,
  nodeNameOf,
  requestAttributes,
  type RequestAttributes,
} from './authorization.js';
import { BODY_TEXT_VARIABLE, readRequestText, requestContentType } from './body.js';
import { applyPatch, patchTypeOf } from './patch.js';
import { type NodeAddressPolicy, nodeRestriction } from './node-restriction.js';
import type { ObjectService } from './object-service.js';
import { admitRbacWrite, needsEscalationCheck } from '../rbac/escalation-admission.js';
import type { RbacIndex } from '../rbac/rbac-authorizer.js';
import { rbacChain } from '../rbac/rbac-chain.js';

export interface AuthorizationMiddlewareOptions {
  service: ObjectService;
  /** Which node addresses node restriction accepts (default: no loopback, none shared). */
  nodeAddresses?: NodeAddressPolicy;
  /** RBAC's roles and bindings: consulted after the Node rules, and for the escalation check of RBAC writes. */
  rbac?: RbacIndex;
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

/** Whether a pod bound to `nodeName` in `namespace` names the Secret (env secretKeyRef or envFrom, or a secret volume). */
async function secretUsedByNodePod(service: ObjectService, nodeName: string, namespace: string, name: string): Promise<boolean> {
  const pods = (await service.list(podKind, namespace, { fieldSelector: `spec.nodeName=${nodeName}` })).items as Pod[];
  return pods.some((pod) => podSecretNames(pod).has(name));
}

/** Whether a pod bound to `nodeName` in `namespace` names the ConfigMap. */
async function configMapUsedByNodePod(service: ObjectService, nodeName: string, namespace: string, name: string): Promise<boolean> {
  const pods = (await service.list(podKind, namespace, { fieldSelector: `spec.nodeName=${nodeName}` })).items as Pod[];
  return pods.some((pod) => podConfigMapNames(pod).has(name));
}

/** The Secrets a pod refers to. */
function podSecretNames(pod: Pod): Set<string> {
  const names = new Set<string>();
  const spec = pod.spec as Pod['spec'] & { volumes?: { secret?: { secretName?: string } }[] };
  for (const c of [...(spec.initContainers ?? []), ...spec.containers]) {
    for (const e of c.env ?? []) if (e.valueFrom?.secretKeyRef?.name) names.add(e.valueFrom.secretKeyRef.name);
    for (const f of (c as { envFrom?: { secretRef?: { name?: string } }[] }).envFrom ?? []) if (f.secretRef?.name) names.add(f.secretRef.name);
  }
  for (const v of spec.volumes ?? []) if (v.secret?.secretName) names.add(v.secret.secretName);
  for (const name of projectedNames(pod, 'secret')) names.add(name);
  return names;
}

/** The ConfigMaps a pod refers to: env configMapKeyRef, envFrom configMapRef, configMap volumes and projected sources. */
function podConfigMapNames(pod: Pod): Set<string> {
  const names = new Set<string>();
  for (const c of [...(pod.spec.initContainers ?? []), ...pod.spec.containers]) {
    for (const e of c.env ?? []) if (e.valueFrom?.configMapKeyRef?.name) names.add(e.valueFrom.configMapKeyRef.name);
    for (const f of c.envFrom ?? []) if (f.configMapRef?.name) names.add(f.configMapRef.name);
  }
  for (const v of pod.spec.volumes ?? []) if (v.configMap?.name) names.add(v.configMap.name);
  for (const name of projectedNames(pod, 'configMap')) names.add(name);
  return names;
}

/** The names a pod's projected volumes take from one kind of source. */
function projectedNames(pod: Pod, source: 'configMap' | 'secret'): string[] {
  const volumes = (pod.spec.volumes ?? []) as { projected?: { sources?: Record<string, { name?: string } | undefined>[] } }[];
  return volumes.flatMap((v) => (v.projected?.sources ?? []).map((s) => s[source]?.name).filter((n): n is string => !!n));
}

/** The stored Node, undefined when there is none. */
async function storedNode(service: ObjectService, name: string): Promise<{ node: Node; resourceVersion?: string } | undefined> {
  try {
    const node = (await service.get(nodeKind, undefined, name)) as Node;
    return { node, resourceVersion: node.metadata.resourceVersion };
  } catch (err) {
    if (err instanceof NotFoundError) return undefined;
    throw err;
  }
}

/** IP addresses the other Nodes report (read only when a node's addresses change, which is rare). */
async function otherNodeAddresses(service: ObjectService, name: string): Promise<Set<string>> {
  const nodes = (await service.list(nodeKind, undefined)).items as Node[];
  return new Set(nodes.filter((n) => n.metadata.name !== name).flatMap((n) => (n.status?.addresses ?? []).map((a) => a.address)));
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Node restriction for a node's write to a Node: the Node as the write would leave it, judged
 * against the stored one. Returns the body to hand on: a write that touches what is restricted
 * and names no resourceVersion is pinned to the version judged, so that it cannot land on a
 * Node an admin changed in between (it answers 409 then, and the node retries).
 */
async function admitNodeWrite(
  options: AuthorizationMiddlewareOptions,
  nodeName: string,
  attrs: RequestAttributes,
  text: string,
  contentType: string | undefined,
): Promise<string> {
  // An apply's YAML body is not judged here: a node writes its Node with the other patch types.
  if (attrs.verb === 'patch' && patchTypeOf(contentType) === 'apply') {
    throw new ForbiddenError(`nodes "${attrs.resource?.name ?? ''}" is forbidden: a node may not server-side apply its Node`, {
      kind: 'nodes',
      name: attrs.resource?.name,
    });
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return text; // The route refuses a malformed body with its own 400.
  }
  // A JSON patch is a list of operations; judged like the others, by the Node it would leave.
  const patchType = attrs.verb === 'patch' ? patchTypeOf(contentType) : undefined;
  if (patchType === 'json') return admitNodeJsonPatch(options, nodeName, attrs, body);
  if (!isObject(body)) return text;
  const r = attrs.resource!;
  const name = r.name ?? (isObject(body.metadata) && typeof body.metadata.name === 'string' ? body.metadata.name : undefined);
  const stored = name !== undefined && attrs.verb !== 'create' ? await storedNode(options.service, name) : undefined;
  // No such Node: the write answers 404 (or, for a create, goes on to be judged whole).
  if (attrs.verb !== 'create' && !stored) return text;
  const old = stored?.node;
  const status = r.subresource === 'status';
  let next: Node;
  if (attrs.verb === 'create') next = body as unknown as Node;
  else {
    const written = (patchType ? applyPatch(nodeKind, patchType, old, body) : body) as Node;
    if (!isObject(written)) return text;
    next = status ? { ...old!, status: written.status } : { ...written, metadata: { ...written.metadata, name }, status: old!.status };
  }
  const addressesChanged = JSON.stringify(next.status?.addresses ?? []) !== JSON.stringify(old?.status?.addresses ?? []);
  const reason = nodeRestriction({
    nodeName,
    old,
    next,
    subresource: r.subresource,
    otherNodeAddresses: addressesChanged ? await otherNodeAddresses(options.service, name ?? '') : new Set(),
    allowLoopback: options.nodeAddresses?.allowLoopback,
    allowShared: options.nodeAddresses?.allowShared,
  });
  if (reason !== undefined) throw new ForbiddenError(`nodes "${name ?? ''}" is forbidden: ${reason}`, { kind: 'nodes', name });
  const meta = isObject(body.metadata) ? body.metadata : undefined;
  if (status || !stored?.resourceVersion || meta?.resourceVersion !== undefined) return text;
  const touchesRestricted =
    attrs.verb === 'update' || body.spec !== undefined || (meta !== undefined && ('labels' in meta || 'finalizers' in meta || 'ownerReferences' in meta));
  if (!touchesRestricted) return text;
  return JSON.stringify({ ...body, metadata: { ...meta, resourceVersion: stored.resourceVersion } });
}

/**
 * Node restriction for a node's JSON patch to a Node: the operations applied to the stored Node,
 * and the result judged; the patch is then pinned to the version judged with a leading `test`
 * of metadata.resourceVersion (a JSON patch has no metadata of its own to carry it).
 */
async function admitNodeJsonPatch(options: AuthorizationMiddlewareOptions, nodeName: string, attrs: RequestAttributes, body: unknown): Promise<string> {
  const r = attrs.resource!;
  const name = r.name ?? '';
  const stored = await storedNode(options.service, name);
  if (!stored || !Array.isArray(body)) return JSON.stringify(body); // 404, or the route's own 400.
  const old = stored.node;
  const written = applyPatch(nodeKind, 'json', old, body);
  if (!isObject(written)) throw new ForbiddenError(`nodes "${name}" is forbidden: the patch does not leave a Node`, { kind: 'nodes', name });
  const status = r.subresource === 'status';
  const next = (status ? { ...old, status: written.status } : { ...written, metadata: { ...(written.metadata as object), name }, status: old.status }) as Node;
  const addressesChanged = JSON.stringify(next.status?.addresses ?? []) !== JSON.stringify(old.status?.addresses ?? []);
  const reason = nodeRestriction({
    nodeName,
    old,
    next,
    subresource: r.subresource,
    otherNodeAddresses: addressesChanged ? await otherNodeAddresses(options.service, name) : new Set(),
    allowLoopback: options.nodeAddresses?.allowLoopback,
    allowShared: options.nodeAddresses?.allowShared,
  });
  if (reason !== undefined) throw new ForbiddenError(`nodes "${name}" is forbidden: ${reason}`, { kind: 'nodes', name });
  if (!stored.resourceVersion) return JSON.stringify(body);
  return JSON.stringify([{ op: 'test', path: '/metadata/resourceVersion', value: stored.resourceVersion }, ...body]);
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
  const rbac = options.rbac ? rbacChain(options.rbac) : undefined;
  return async (c: Context, next) => {
    const user = c.get('user') as UserInfo | undefined;
    // No user: a public path (health, version), which authentication let through unauthenticated.
    // Admins may do everything: spare their requests (nearly all of them) the parsing.
    if (!user || user.groups.includes(MASTERS_GROUP)) return next();
    const attrs: RequestAttributes = requestAttributes(c.req.method, c.req.path, { watch: c.req.query('watch') });
    if (needsPodLookup(user, attrs)) {
      attrs.podNodeName = await podNode(options.service, attrs.resource!.namespace!, attrs.resource!.name!);
    }
    if (needsSecretLookup(user, attrs)) {
      const r = attrs.resource!;
      attrs.secretUsedByNodePod = await secretUsedByNodePod(options.service, nodeNameOf(user)!, r.namespace!, r.name!);
    }
    if (needsConfigMapLookup(user, attrs)) {
      const r = attrs.resource!;
      attrs.configMapUsedByNodePod = await configMapUsedByNodePod(options.service, nodeNameOf(user)!, r.namespace!, r.name!);
    }
    if (needsBodyName(user, attrs)) {
      const text = await readRequestText(c);
      c.set(BODY_TEXT_VARIABLE, text);
      const name = bodyName(text);
      if (name !== undefined) attrs.resource = { ...attrs.resource!, name };
    }
    const decision = authorize(user, attrs, rbac);
    if (!decision.allowed) {
      const r = attrs.resource;
      throw new ForbiddenError(forbiddenMessage(user, attrs, decision.reason), r ? { kind: r.resource, group: r.group, name: r.name } : {});
    }
    if (options.rbac && needsEscalationCheck(user, attrs)) await admitRbacWrite(c, { index: options.rbac, service: options.service }, user, attrs);
    const nodeName = nodeNameOf(user);
    if (nodeName !== undefined && needsNodeRestriction(user, attrs)) {
      c.set(BODY_TEXT_VARIABLE, await admitNodeWrite(options, nodeName, attrs, await readRequestText(c), requestContentType(c)));
    }
    return next();
  };
}
