// Node (v1): a worker machine; spec for scheduling (taints, pod CIDR), status reported by the kubelet.
import * as v from 'valibot';
import type { KindDefinition } from './kind.js';
import { nodePatchMeta } from './patch-meta.js';
import { conditionSchema, kindSchema, timestampSchema, type Condition } from './meta.js';
import { intSchema } from './pod.js';
import { resourceListSchema } from './quantity.js';

export const taintSchema = v.strictObject({
  key: v.pipe(v.string(), v.minLength(1, 'must not be empty')),
  value: v.optional(v.string()),
  effect: v.picklist(['NoSchedule', 'PreferNoSchedule', 'NoExecute']),
  timeAdded: v.optional(v.nullable(timestampSchema)),
});
export type Taint = v.InferOutput<typeof taintSchema>;

export const nodeSpecSchema = v.strictObject({
  podCIDR: v.optional(v.string()),
  podCIDRs: v.optional(v.array(v.string())),
  providerID: v.optional(v.string()),
  unschedulable: v.optional(v.boolean()),
  taints: v.optional(v.array(taintSchema)),
});
export type NodeSpec = v.InferOutput<typeof nodeSpecSchema>;

export const nodeStatusSchema = v.strictObject({
  capacity: v.optional(resourceListSchema),
  allocatable: v.optional(resourceListSchema),
  phase: v.optional(v.picklist(['Pending', 'Running', 'Terminated'])),
  conditions: v.optional(v.array(conditionSchema)),
  addresses: v.optional(
    v.array(
      v.strictObject({
        type: v.picklist(['Hostname', 'InternalIP', 'ExternalIP', 'InternalDNS', 'ExternalDNS']),
        address: v.string(),
      }),
    ),
  ),
  daemonEndpoints: v.optional(
    v.strictObject({
      kubeletEndpoint: v.optional(v.strictObject({ Port: intSchema({ min: 0, max: 65535 }) })),
    }),
  ),
  nodeInfo: v.optional(
    v.strictObject({
      machineID: v.optional(v.string()),
      systemUUID: v.optional(v.string()),
      bootID: v.optional(v.string()),
      kernelVersion: v.optional(v.string()),
      osImage: v.optional(v.string()),
      containerRuntimeVersion: v.optional(v.string()),
      kubeletVersion: v.optional(v.string()),
      kubeProxyVersion: v.optional(v.string()),
      operatingSystem: v.optional(v.string()),
      architecture: v.optional(v.string()),
    }),
  ),
  images: v.optional(v.array(v.strictObject({ names: v.optional(v.array(v.string())), sizeBytes: v.optional(v.number()) }))),
});
export type NodeStatus = v.InferOutput<typeof nodeStatusSchema>;

export const nodeSchema = kindSchema('v1', 'Node', {
  spec: v.optional(nodeSpecSchema, {}),
  status: v.optional(nodeStatusSchema, {}),
});
export type Node = v.InferOutput<typeof nodeSchema>;

/**
 * kubectl's node STATUS: Ready when the Ready condition is True, NotReady when it is False or
 * Unknown (a node that stopped heartbeating), Unknown only without one; plus SchedulingDisabled.
 */
export function nodeDisplayStatus(node: Node): string {
  const ready = nodeReadyCondition(node);
  const base = !ready ? 'Unknown' : ready.status === 'True' ? 'Ready' : 'NotReady';
  return node.spec?.unschedulable ? `${base},SchedulingDisabled` : base;
}

const ROLE_PREFIX = 'node-role.kubernetes.io/';

/** Roles from `node-role.kubernetes.io/<role>` labels (and the older `kubernetes.io/role`). */
export function nodeRoles(node: Node): string {
  const labels = node.metadata.labels ?? {};
  const roles = new Set<string>();
  for (const [k, val] of Object.entries(labels)) {
    if (k.startsWith(ROLE_PREFIX) && k.length > ROLE_PREFIX.length) roles.add(k.slice(ROLE_PREFIX.length));
    else if (k === 'kubernetes.io/role' && val) roles.add(val);
  }
  return roles.size ? [...roles].sort().join(',') : '<none>';
}

const info = (o: unknown) => (o as Node).status?.nodeInfo;

export const nodeKind: KindDefinition = {
  patchMeta: nodePatchMeta,
  kind: 'Node',
  group: '',
  version: 'v1',
  resource: 'nodes',
  singular: 'node',
  shortNames: ['no'],
  namespaced: false,
  schema: nodeSchema,
  statusSubresource: true,
  fieldSelectors: ['spec.unschedulable'],
  columns: [
    { name: 'STATUS', value: (o) => nodeDisplayStatus(o as Node) },
    { name: 'ROLES', value: (o) => nodeRoles(o as Node) },
    { name: 'VERSION', value: (o) => info(o)?.kubeletVersion || '' },
    { name: 'INTERNAL-IP', wide: true, value: (o) => (o as Node).status?.addresses?.find((a) => a.type === 'InternalIP')?.address ?? '<none>' },
    { name: 'OS-IMAGE', wide: true, value: (o) => info(o)?.osImage || '<unknown>' },
    { name: 'KERNEL-VERSION', wide: true, value: (o) => info(o)?.kernelVersion || '<unknown>' },
    { name: 'CONTAINER-RUNTIME', wide: true, value: (o) => info(o)?.containerRuntimeVersion || '<unknown>' },
  ],
};

/**
 * The cause reason on the join's 503 when every pod /24 is taken: the worker reads it as a final
 * answer (exit with the master's message) rather than as a master still starting (retry).
 */
export const POD_CIDR_RANGE_FULL = 'PodCIDRRangeFull';

/** The node's Ready condition, if it has one. */
export function nodeReadyCondition(node: Node): Condition | undefined {
  return node.status?.conditions?.find((c) => c.type === 'Ready');
}

/** Ready=True: the kubelet heartbeats and its runtime answers (the scheduler and the API server's node proxy agree on this one rule). */
export function isNodeReady(node: Node): boolean {
  return nodeReadyCondition(node)?.status === 'True';
}
