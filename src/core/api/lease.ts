// Lease (coordination.k8s.io/v1): a small object one holder renews to say it is alive; each node's kubelet renews one in kube-node-lease as its heartbeat.
import * as v from 'valibot';
import type { KindDefinition } from './kind.js';
import { kindSchema, type OwnerReference } from './meta.js';

/** Where node heartbeats live, one Lease per Node named after it (as in Kubernetes). */
export const NODE_LEASE_NAMESPACE = 'kube-node-lease';
/** Kubernetes' default node lease duration (--node-lease-duration-seconds of the kubelet). */
export const NODE_LEASE_DURATION_SECONDS = 40;

/** Kubernetes' MicroTime: RFC 3339 with six fraction digits, as leases' acquireTime and renewTime are written. */
export function microTime(at: Date): string {
  return at.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** A MicroTime (or any RFC 3339 time with or without a fraction). */
const microTimeSchema = v.pipe(v.string(), v.isoTimestamp('must be an RFC 3339 timestamp with microseconds, e.g. 2006-01-02T15:04:05.000000Z'));

const positiveSeconds = v.pipe(v.number(), v.integer('must be an integer'), v.minValue(1, 'must be greater than 0'));

export const leaseSchema = kindSchema('coordination.k8s.io/v1', 'Lease', {
  spec: v.optional(
    v.pipe(
      v.strictObject({
        holderIdentity: v.optional(v.nullable(v.string())),
        leaseDurationSeconds: v.optional(v.nullable(positiveSeconds)),
        acquireTime: v.optional(v.nullable(microTimeSchema)),
        renewTime: v.optional(v.nullable(microTimeSchema)),
        leaseTransitions: v.optional(v.nullable(v.pipe(v.number(), v.integer('must be an integer'), v.minValue(0, 'must be greater than or equal to 0')))),
        // Coordinated leader election's strategy; the only one Kubernetes defines.
        strategy: v.optional(v.nullable(v.picklist(['OldestEmulationVersion'], 'supported values: "OldestEmulationVersion"'))),
        preferredHolder: v.optional(v.nullable(v.string())),
      }),
      v.check((s) => !s.preferredHolder || !!s.strategy, 'preferredHolder may only be specified if strategy is defined'),
    ),
    {},
  ),
});
export type Lease = v.InferOutput<typeof leaseSchema>;

export const leaseKind: KindDefinition = {
  kind: 'Lease',
  group: 'coordination.k8s.io',
  version: 'v1',
  resource: 'leases',
  singular: 'lease',
  shortNames: [],
  namespaced: true,
  schema: leaseSchema,
  statusSubresource: false,
  columns: [{ name: 'HOLDER', value: (o) => (o as Lease).spec?.holderIdentity ?? '' }],
};

export interface NodeLeaseInput {
  nodeName: string;
  /** The Node's uid: the Lease is owned by it, so deleting the Node removes its Lease. */
  nodeUid?: string;
  now: Date;
  durationSeconds?: number;
}

/** The Lease a kubelet creates for its node: held by the node, renewed now. */
export function nodeLease(input: NodeLeaseInput): Lease {
  const owner: OwnerReference[] = input.nodeUid ? [{ apiVersion: 'v1', kind: 'Node', name: input.nodeName, uid: input.nodeUid }] : [];
  const now = microTime(input.now);
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: input.nodeName, namespace: NODE_LEASE_NAMESPACE, ...(owner.length ? { ownerReferences: owner } : {}) },
    spec: {
      holderIdentity: input.nodeName,
      leaseDurationSeconds: input.durationSeconds ?? NODE_LEASE_DURATION_SECONDS,
      renewTime: now,
    },
  };
}

/** The time the lease was last renewed, in ms since the epoch; undefined when it never was (or says nonsense). */
export function leaseRenewedAt(lease: Lease | undefined): number | undefined {
  const t = lease?.spec?.renewTime ? Date.parse(lease.spec.renewTime) : NaN;
  return Number.isFinite(t) ? t : undefined;
}
