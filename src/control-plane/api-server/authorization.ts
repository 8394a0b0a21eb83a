// Who may do what: request attributes from method and path, one pure authorize() over the cluster's three kinds of users, and Kubernetes' 403 wording.
import { NODE_LEASE_NAMESPACE } from '../../core/api/lease.js';
import { isTrueWord } from '../../core/api/query-bool.js';
import type { UserInfo } from './auth.js';

/** The RBAC half of the chain (src/control-plane/rbac/rbac-chain.ts adapts an RbacIndex to it); absent: Node rules and masters only. */
export interface RbacAuthorizer {
  authorize(user: UserInfo, attrs: RequestAttributes): Decision;
}

/** Cluster admins: everything. */
export const MASTERS_GROUP = 'system:masters';
/** Kubelets, with a node credential: read everything, write their own Node, their pods' status, events. */
export const NODES_GROUP = 'system:nodes';
/** Holders of a join token: nothing but the join itself. */
export const BOOTSTRAPPERS_GROUP = 'system:bootstrappers';
/** A node's user name is this prefix and the node's name, as in Kubernetes. */
export const NODE_USER_PREFIX = 'system:node:';

export const JOIN_GROUP = 'minik8s.io';
export const JOIN_RESOURCE = 'join';
export const JOIN_TOKENS_RESOURCE = 'jointokens';

export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';

/** The API object a request is about (Kubernetes' RequestInfo for resource requests). */
export interface ResourceAttributes {
  group: string;
  version: string;
  resource: string;
  subresource?: string;
  namespace?: string;
  /** From the path; for a create, the route layer may fill it in from the body. */
  name?: string;
}

export interface RequestAttributes {
  /** A Kubernetes verb for resource requests; the lower-case HTTP method for other paths. */
  verb: string;
  path: string;
  /** Absent for non-resource paths (discovery, /version, unknown paths). */
  resource?: ResourceAttributes;
  /**
   * For a node's writes to pods, which need the stored object: the node the pod is bound to
   * ('' when unscheduled), null when no such pod exists (the request then answers 404), and
   * undefined when nobody looked (denied, since the rule cannot be judged).
   */
  podNodeName?: string | null;
  /**
   * For a node's read of one Secret: whether a pod bound to that node names it (Kubernetes'
   * node authorizer's rule); undefined when nobody looked (denied).
   */
  secretUsedByNodePod?: boolean;
  /** The same for a node's read of one ConfigMap (env, envFrom, configMap and projected volumes). */
  configMapUsedByNodePod?: boolean;
}

export type Decision = { allowed: true } | { allowed: false; reason?: string };

const ALLOW: Decision = { allowed: true };
const READ_VERBS = new Set(['get', 'list', 'watch']);
const WRITE_VERBS = new Set(['create', 'update', 'patch']);
const NODE_LEASE_VERBS = new Set(['create', 'update', 'patch', 'delete']);

/**
 * Method and path -> attributes, the way Kubernetes' RequestInfoFactory reads them, without
 * consulting the kind registry: paths of kinds served by special routes (join, token reviews,
 * metrics) and of unknown kinds are judged alike.
 */
export function requestAttributes(method: string, path: string, query: { watch?: string | null } = {}): RequestAttributes {
  const upper = method.toUpperCase();
  const parts = path
    .split('/')
    .filter((p) => p.length > 0)
    .map((p) => {
      try {
        return decodeURIComponent(p);
      } catch {
        return p;
      }
    });
  let group: string;
  let version: string;
  let rest: string[];
  if (parts[0] === 'api' && parts.length >= 3) {
    [group, version, rest] = ['', parts[1]!, parts.slice(2)];
  } else if (parts[0] === 'apis' && parts.length >= 4) {
    [group, version, rest] = [parts[1]!, parts[2]!, parts.slice(3)];
  } else {
    return { verb: upper.toLowerCase(), path };
  }
  let namespace: string | undefined;
  // namespaces/{ns}/{resource}...; but namespaces/{name} and namespaces/{name}/status address the Namespace itself.
  if (rest[0] === 'namespaces' && rest.length >= 3 && rest[2] !== 'status' && rest[2] !== 'finalize') {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  const [resource, name, subresource] = rest as [string, string | undefined, string | undefined];
  const attrs: ResourceAttributes = { group, version, resource };
  if (namespace !== undefined) attrs.namespace = namespace;
  if (name !== undefined) attrs.name = name;
  if (subresource !== undefined) attrs.subresource = rest.slice(2).join('/');
  let verb: string;
  switch (upper) {
    case 'GET':
    case 'HEAD':
      verb = name === undefined ? (isTrueWord(query.watch) ? 'watch' : 'list') : 'get';
      break;
    case 'POST':
      verb = 'create';
      break;
    case 'PUT':
      verb = 'update';
      break;
    case 'PATCH':
      verb = 'patch';
      break;
    case 'DELETE':
      verb = name === undefined ? 'deletecollection' : 'delete';
      break;
    default:
      verb = upper.toLowerCase();
  }
  return { verb, path, resource: attrs };
}

/** The node a user speaks for: `system:node:<name>` in group system:nodes. */
export function nodeNameOf(user: UserInfo): string | undefined {
  if (!user.groups.includes(NODES_GROUP) || !user.name.startsWith(NODE_USER_PREFIX)) return undefined;
  const name = user.name.slice(NODE_USER_PREFIX.length);
  return name || undefined;
}

/** True when judging this request for this user needs the stored pod (see RequestAttributes.podNodeName). */
export function needsPodLookup(user: UserInfo, attrs: RequestAttributes): boolean {
  const r = attrs.resource;
  if (r?.group !== '' || r.resource !== 'pods' || r.name === undefined || r.namespace === undefined) return false;
  if (user.groups.includes(MASTERS_GROUP) || nodeNameOf(user) === undefined) return false;
  return (r.subresource === 'status' && (attrs.verb === 'update' || attrs.verb === 'patch')) || (r.subresource === undefined && attrs.verb === 'delete');
}

/**
 * True when an allowed request must also pass node restriction (node-restriction.ts): a node
 * writing a Node or its status, judged on the stored and the resulting object.
 */
export function needsNodeRestriction(user: UserInfo, attrs: RequestAttributes): boolean {
  const r = attrs.resource;
  return (
    WRITE_VERBS.has(attrs.verb) &&
    r?.group === '' &&
    r.resource === 'nodes' &&
    (r.subresource === undefined || r.subresource === 'status') &&
    !user.groups.includes(MASTERS_GROUP) &&
    nodeNameOf(user) !== undefined
  );
}

/** True when judging this request needs the pods bound to the node (a node reading one Secret). */
export function needsSecretLookup(user: UserInfo, attrs: RequestAttributes): boolean {
  const r = attrs.resource;
  return (
    attrs.verb === 'get' &&
    r?.group === '' &&
    r.resource === 'secrets' &&
    r.subresource === undefined &&
    r.name !== undefined &&
    r.namespace !== undefined &&
    !user.groups.includes(MASTERS_GROUP) &&
    nodeNameOf(user) !== undefined
  );
}

/** True when judging this request needs the pods bound to the node (a node reading one ConfigMap). */
export function needsConfigMapLookup(user: UserInfo, attrs: RequestAttributes): boolean {
  const r = attrs.resource;
  return (
    attrs.verb === 'get' &&
    r?.group === '' &&
    r.resource === 'configmaps' &&
    r.subresource === undefined &&
    r.name !== undefined &&
    r.namespace !== undefined &&
    !user.groups.includes(MASTERS_GROUP) &&
    nodeNameOf(user) !== undefined
  );
}

/** True when judging this request needs the name from the body (a node creating a Node or its Lease). */
export function needsBodyName(user: UserInfo, attrs: RequestAttributes): boolean {
  const r = attrs.resource;
  return (
    attrs.verb === 'create' &&
    ((r?.group === '' && r.resource === 'nodes') || (r?.group === 'coordination.k8s.io' && r.resource === 'leases')) &&
    r.name === undefined &&
    !user.groups.includes(MASTERS_GROUP) &&
    nodeNameOf(user) !== undefined
  );
}

function authorizeNode(nodeName: string | undefined, attrs: RequestAttributes): Decision {
  const r = attrs.resource;
  const { verb } = attrs;
  if (!r) {
    // Discovery and /version: every node reads them.
    return verb === 'get' || verb === 'head' ? ALLOW : { allowed: false };
  }
  if (r.group === '' && r.resource === 'pods' && (r.subresource === 'log' || r.subresource === 'exec')) {
    return { allowed: false, reason: 'only cluster admins may read logs or run commands in pods' };
  }
  if (r.group === JOIN_GROUP && (r.resource === JOIN_TOKENS_RESOURCE || r.resource === JOIN_RESOURCE)) {
    return { allowed: false, reason: 'join tokens are for cluster admins' };
  }
  // As Kubernetes' node authorizer: a node reads one Secret at a time, and only one a pod bound to it names (its env's secretKeyRef).
  if (r.group === '' && r.resource === 'secrets') {
    if (verb === 'get' && r.name !== undefined && attrs.secretUsedByNodePod) return ALLOW;
    return { allowed: false, reason: 'a node may only read Secrets that pods bound to it use' };
  }
  // ConfigMaps likewise: one at a time, only those a pod bound to the node uses.
  if (r.group === '' && r.resource === 'configmaps') {
    if (verb === 'get' && r.name !== undefined && attrs.configMapUsedByNodePod) return ALLOW;
    return { allowed: false, reason: 'a node may only read ConfigMaps that pods bound to it use' };
  }
  // The submission inlines the SSH private key of the job's cluster: only the job's own token (and admins) read it.
  if (r.group === 'minik8s.io' && r.resource === 'gpujobs' && r.subresource === 'submission') {
    return { allowed: false, reason: "a GPU job's submission holds its cluster's credentials: only the job's own service account reads it" };
  }
  if (READ_VERBS.has(verb)) return ALLOW;
  if (nodeName === undefined) return { allowed: false, reason: 'the user is in group system:nodes but is not named system:node:<name>' };

  if (r.group === '' && r.resource === 'nodes') {
    if (verb === 'delete' || verb === 'deletecollection') return { allowed: false, reason: 'a node may not delete Node objects' };
    if (!WRITE_VERBS.has(verb) || (r.subresource !== undefined && r.subresource !== 'status')) return { allowed: false };
    if (r.name !== nodeName) return { allowed: false, reason: `node "${nodeName}" may only change its own Node object` };
    return ALLOW;
  }
  // Its heartbeat: a node keeps one Lease, named after it in kube-node-lease (Kubernetes' node authorizer and NodeRestriction together).
  if (r.group === 'coordination.k8s.io' && r.resource === 'leases') {
    if (r.namespace !== NODE_LEASE_NAMESPACE || r.subresource !== undefined || !NODE_LEASE_VERBS.has(verb)) {
      return { allowed: false, reason: `a node may only write its own Lease in namespace ${NODE_LEASE_NAMESPACE}` };
    }
    if (r.name !== nodeName) return { allowed: false, reason: 'can only access node lease with the same name as the requesting node' };
    return ALLOW;
  }
  if (r.group === '' && r.resource === 'pods') {
    const podWrite = (r.subresource === 'status' && (verb === 'update' || verb === 'patch')) || (r.subresource === undefined && verb === 'delete');
    if (!podWrite) return { allowed: false, reason: 'a node may only write the status of pods bound to it, and delete them' };
    // No such pod: let the request through to answer 404, which tells the kubelet the deletion is done.
    if (attrs.podNodeName === null) return ALLOW;
    if (attrs.podNodeName !== undefined && attrs.podNodeName === nodeName) return ALLOW;
    return { allowed: false, reason: `the pod is not bound to node "${nodeName}"` };
  }
  if (r.group === '' && r.resource === 'events' && WRITE_VERBS.has(verb)) return ALLOW;
  // Tokens for its pods' projected volumes; the TokenRequest route checks the pod is bound to this node (serviceaccounts/token-request-routes.ts).
  if (r.group === '' && r.resource === 'serviceaccounts' && r.subresource === 'token' && verb === 'create') return ALLOW;
  if (r.group === 'authentication.k8s.io' && r.resource === 'tokenreviews' && verb === 'create') return ALLOW;
  return { allowed: false };
}

function authorizeBootstrapper(attrs: RequestAttributes): Decision {
  const r = attrs.resource;
  if (attrs.verb === 'create' && r?.group === JOIN_GROUP && r.resource === JOIN_RESOURCE && r.name === undefined && r.namespace === undefined) return ALLOW;
  return { allowed: false, reason: 'a join token may only be used to join a node' };
}

/**
 * The whole policy, as kube-apiserver's `Node,RBAC` chain: system:masters always, then the
 * built-in rules of nodes and join tokens, then RBAC (GPU job submitters' included: gpujob-access.ts) (when given). A user is
 * allowed when any of them allows the request; the reason of the first refusal that has one
 * explains a denial.
 */
export function authorize(user: UserInfo, attrs: RequestAttributes, rbac?: RbacAuthorizer): Decision {
  if (user.groups.includes(MASTERS_GROUP)) return ALLOW;
  // Asking what one may do (one request, or the whole list) is every user's right (Kubernetes' system:basic-user), a join token's aside.
  if (isSelfAccessReview(attrs) && user.groups.some((g) => g !== BOOTSTRAPPERS_GROUP)) return ALLOW;
  let reason: string | undefined;
  const consider = (d: Decision): boolean => {
    if (d.allowed) return true;
    reason ??= d.reason;
    return false;
  };
  if (user.groups.includes(NODES_GROUP) && consider(authorizeNode(nodeNameOf(user), attrs))) return ALLOW;
  if (user.groups.includes(BOOTSTRAPPERS_GROUP) && consider(authorizeBootstrapper(attrs))) return ALLOW;
  if (rbac && consider(rbac.authorize(user, attrs))) return ALLOW;
  return reason === undefined ? { allowed: false } : { allowed: false, reason };
}

function isSelfAccessReview(attrs: RequestAttributes): boolean {
  const r = attrs.resource;
  return (
    attrs.verb === 'create' &&
    ((r?.group === 'authorization.k8s.io' && (r.resource === 'selfsubjectaccessreviews' || r.resource === 'selfsubjectrulesreviews')) ||
      // Who am I (kubectl auth whoami): Kubernetes' system:basic-user grants it to everyone too.
      (r?.group === 'authentication.k8s.io' && r.resource === 'selfsubjectreviews')) &&
    r.name === undefined
  );
}

/** `pods "web" is forbidden: User "system:node:n1" cannot patch resource "pods/status" in API group "" in the namespace "default": ...` */
export function forbiddenMessage(user: UserInfo, attrs: RequestAttributes, reason?: string): string {
  const who = `User "${user.name}"`;
  const why = reason ? `: ${reason}` : '';
  const r = attrs.resource;
  if (!r) return `forbidden: ${who} cannot ${attrs.verb} path "${attrs.path}"${why}`;
  const qualified = r.group ? `${r.resource}.${r.group}` : r.resource;
  const subject = r.name !== undefined ? `${qualified} "${r.name}"` : qualified;
  const resource = r.subresource ? `${r.resource}/${r.subresource}` : r.resource;
  const scope = r.namespace !== undefined ? `in the namespace "${r.namespace}"` : 'at the cluster scope';
  return `${subject} is forbidden: ${who} cannot ${attrs.verb} resource "${resource}" in API group "${r.group}" ${scope}${why}`;
}
