// Which Node labels a node may set on itself: Kubernetes' kubelet label set and NodeRestriction's forbidden namespaces.

/** Labels in the kubernetes.io and k8s.io namespaces that a kubelet sets about its own machine. */
const KUBELET_LABELS = new Set([
  'kubernetes.io/hostname',
  'kubernetes.io/os',
  'kubernetes.io/arch',
  'beta.kubernetes.io/os',
  'beta.kubernetes.io/arch',
  'beta.kubernetes.io/instance-type',
  'node.kubernetes.io/instance-type',
  'topology.kubernetes.io/zone',
  'topology.kubernetes.io/region',
  'failure-domain.beta.kubernetes.io/zone',
  'failure-domain.beta.kubernetes.io/region',
]);

/** Namespaces (and their subdomains) whose every label a kubelet may set. */
const KUBELET_NAMESPACES = ['kubelet.kubernetes.io', 'node.kubernetes.io'];

/** Labels only admins set: a node that could set them would pick the workloads meant for other machines. */
export const NODE_RESTRICTION_NAMESPACE = 'node-restriction.kubernetes.io';
export const NODE_ROLE_PREFIX = 'node-role.kubernetes.io/';
export const CONTROL_PLANE_ROLE_LABEL = `${NODE_ROLE_PREFIX}control-plane`;

function within(namespace: string, domain: string): boolean {
  return namespace === domain || namespace.endsWith(`.${domain}`);
}

/**
 * Whether a node may set, change or remove this label on its own Node, as Kubernetes'
 * NodeRestriction admission decides: never under node-restriction.kubernetes.io; under
 * kubernetes.io and k8s.io (node-role.kubernetes.io included) only the kubelet's own labels;
 * anything else (the operator's `--labels gpu=a100`) freely.
 */
export function nodeMaySetLabel(key: string): boolean {
  const slash = key.indexOf('/');
  if (slash < 0) return true;
  const namespace = key.slice(0, slash);
  if (within(namespace, NODE_RESTRICTION_NAMESPACE)) return false;
  if (!within(namespace, 'kubernetes.io') && !within(namespace, 'k8s.io')) return true;
  return KUBELET_LABELS.has(key) || KUBELET_NAMESPACES.some((ns) => within(namespace, ns));
}
