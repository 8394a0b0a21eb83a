// The kubelet's two heartbeats, as in Kubernetes: a small Lease renewed every 10 s, and the Node status written only when it changed or every 5 minutes.
import { deepEqual } from '../../core/api/canonical-json.js';
import { type Lease, leaseKind, microTime, NODE_LEASE_DURATION_SECONDS, NODE_LEASE_NAMESPACE, nodeLease } from '../../core/api/lease.js';
import type { NodeStatus } from '../../core/api/node.js';
import type { Client } from '../../core/client/client.js';
import { AlreadyExistsError, ConflictError, NotFoundError } from '../../core/errors.js';

/** Kubernetes' default nodeStatusReportFrequency: an unchanged status is still written this often. */
export const NODE_STATUS_REPORT_FREQUENCY_MS = 5 * 60_000;

/** A status without its heartbeat times: what "did anything change" compares. */
function withoutHeartbeats(status: NodeStatus | undefined): unknown {
  if (!status) return undefined;
  return { ...status, conditions: status.conditions?.map(({ lastHeartbeatTime: _, ...c }) => c) };
}

/**
 * Whether the kubelet's newly computed status says something the stored one does not. Only the
 * fields the kubelet computes are compared (others may be written by the master), and
 * heartbeat times never count: a fresh one alone is what the Lease is for.
 */
export function nodeStatusChanged(stored: NodeStatus | undefined, computed: NodeStatus): boolean {
  const a = withoutHeartbeats(stored) as Record<string, unknown> | undefined;
  const b = withoutHeartbeats(computed) as Record<string, unknown>;
  if (!a) return true;
  return Object.keys(b).some((k) => !deepEqual(JSON.parse(JSON.stringify(a[k] ?? null)), JSON.parse(JSON.stringify(b[k] ?? null))));
}

export interface StatusReportInput {
  /** The status as the API last answered (undefined: never written). */
  stored: NodeStatus | undefined;
  computed: NodeStatus;
  /** When this kubelet last wrote its status (ms, its own clock); undefined: not yet. */
  lastReportAt: number | undefined;
  now: number;
  /** False for the old way (no Lease): then every heartbeat writes the status. */
  leases: boolean;
  reportFrequencyMs?: number;
}

/** Whether this heartbeat writes the Node status (Kubernetes' kubelet: on change, or once the report frequency has passed). */
export function shouldReportStatus(input: StatusReportInput): boolean {
  if (!input.leases || input.lastReportAt === undefined) return true;
  if (input.now - input.lastReportAt >= (input.reportFrequencyMs ?? NODE_STATUS_REPORT_FREQUENCY_MS)) return true;
  return nodeStatusChanged(input.stored, input.computed);
}

export interface NodeLeaseRenewerOptions {
  client: Client;
  nodeName: string;
  durationSeconds?: number;
}

/**
 * Keeps a node's Lease in kube-node-lease: created on first use (owned by the Node, so that
 * deleting the Node removes it), then renewed by an update of the copy last written, so that a
 * renewal costs one request. A Lease changed or deleted behind our back is read (or made) again.
 */
export class NodeLeaseRenewer {
  readonly #o: NodeLeaseRenewerOptions;
  #lease: Lease | undefined;
  /** The Node's uid, for the owner reference; the Lease is made without one until it is known. */
  nodeUid: string | undefined;

  constructor(options: NodeLeaseRenewerOptions) {
    this.#o = options;
  }

  /** The Lease as last written. */
  get lease(): Lease | undefined {
    return this.#lease;
  }

  async renew(now: Date): Promise<Lease> {
    try {
      return await this.#renewOnce(now);
    } catch (err) {
      // Someone else wrote it (or deleted it) since: start again from what is stored, once.
      if (!(err instanceof ConflictError || err instanceof NotFoundError || err instanceof AlreadyExistsError)) throw err;
      this.#lease = undefined;
      return await this.#renewOnce(now);
    }
  }

  async #renewOnce(now: Date): Promise<Lease> {
    const { client, nodeName } = this.#o;
    const ref = { namespace: NODE_LEASE_NAMESPACE, name: nodeName };
    if (!this.#lease) {
      try {
        this.#lease = (await client.get(leaseKind, ref)) as Lease;
      } catch (err) {
        if (!(err instanceof NotFoundError)) throw err;
        const fresh = nodeLease({ nodeName, nodeUid: this.nodeUid, now, durationSeconds: this.#o.durationSeconds });
        this.#lease = (await client.create(leaseKind, fresh, { namespace: NODE_LEASE_NAMESPACE })) as Lease;
        return this.#lease;
      }
    }
    const current = this.#lease;
    const ownerless = !current.metadata.ownerReferences?.length && this.nodeUid;
    const next: Lease = {
      ...current,
      metadata: {
        ...current.metadata,
        ...(ownerless ? { ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: nodeName, uid: this.nodeUid! }] } : {}),
      },
      spec: {
        ...current.spec,
        holderIdentity: nodeName,
        leaseDurationSeconds: this.#o.durationSeconds ?? NODE_LEASE_DURATION_SECONDS,
        renewTime: microTime(now),
      },
    };
    this.#lease = (await client.replace(leaseKind, ref, next)) as Lease;
    return this.#lease;
  }
}
