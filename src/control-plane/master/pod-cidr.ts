// Pod CIDRs: the lowest free /24 of the cluster CIDR (pure), and one store record per allocated /24 so that no two nodes ever get the same one.
import { AlreadyExistsError, ConflictError, NotFoundError, ServiceUnavailableError } from '../../core/errors.js';
import { compareCidrs, formatIpv4Cidr, ipv4RangeSize, parseIpv4Cidr } from '../../core/api/ipv4.js';
import { POD_CIDR_RANGE_FULL } from '../../core/api/node.js';
import type { Store } from '../../core/store/store.js';

/** One key per CIDR, created only if absent: the store itself refuses a second owner, whatever the callers do. */
export const POD_CIDR_PREFIX = '/registry/minik8s.io/podcidrs/';

/** Each node's share of the cluster CIDR. */
export const NODE_CIDR_BITS = 24;

/** How many node ranges the cluster CIDR holds. */
export function podCIDRCapacity(clusterCIDR: string): number {
  const cluster = parseIpv4Cidr(clusterCIDR);
  if (!cluster || cluster.bits > NODE_CIDR_BITS) return 0;
  return 2 ** (NODE_CIDR_BITS - cluster.bits);
}

/**
 * The lowest /24 of `clusterCIDR` that overlaps nothing in `inUse`, or undefined when there is
 * none. `inUse` may hold ranges of any size and outside the cluster CIDR (a Node given a
 * podCIDR by hand): each blocks the /24s it overlaps; unparsable entries block nothing.
 */
export function pickPodCIDR(clusterCIDR: string, inUse: Iterable<string>): string | undefined {
  const cluster = parseIpv4Cidr(clusterCIDR);
  if (!cluster || cluster.bits > NODE_CIDR_BITS) return undefined;
  const step = 2 ** (32 - NODE_CIDR_BITS);
  const count = podCIDRCapacity(clusterCIDR);
  const taken = new Set<number>();
  for (const text of inUse) {
    const r = parseIpv4Cidr(text);
    if (!r) continue;
    const start = Math.max(r.base, cluster.base);
    const end = Math.min(r.base + ipv4RangeSize(r), cluster.base + ipv4RangeSize(cluster));
    for (let a = start - ((start - cluster.base) % step); a < end; a += step) taken.add((a - cluster.base) / step);
  }
  for (let i = 0; i < count; i++) {
    if (!taken.has(i)) return formatIpv4Cidr({ base: cluster.base + i * step, bits: NODE_CIDR_BITS });
  }
  return undefined;
}

export interface PodCIDRRecord {
  cidr: string;
  nodeName: string;
  allocatedAt: string;
}

export function podCIDRKey(cidr: string): string {
  return `${POD_CIDR_PREFIX}${cidr.replace('/', '-')}`;
}

export interface PodCIDRAllocatorOptions {
  store: Store;
  clusterCIDR: string;
  now?: () => Date;
}

/** The persisted allocations. Callers serialise their own decisions (joins); the records stay correct even if they do not. */
export class PodCIDRAllocator {
  readonly #store: Store;
  readonly #now: () => Date;
  readonly clusterCIDR: string;

  constructor(options: PodCIDRAllocatorOptions) {
    this.#store = options.store;
    this.clusterCIDR = options.clusterCIDR;
    this.#now = options.now ?? (() => new Date());
  }

  async list(): Promise<PodCIDRRecord[]> {
    return (await this.#store.list<PodCIDRRecord>(POD_CIDR_PREFIX)).items.map((e) => e.value);
  }

  /**
   * Records the lowest free /24 for `nodeName` and returns it. `alsoInUse` are ranges taken
   * without a record (Nodes given a podCIDR by hand). A record that appears between our read and
   * our create (another writer) just moves us on to the next range.
   */
  async allocate(nodeName: string, alsoInUse: readonly string[] = []): Promise<string> {
    const taken = new Set([...alsoInUse, ...(await this.list()).map((r) => r.cidr)]);
    for (;;) {
      const cidr = pickPodCIDR(this.clusterCIDR, taken);
      if (cidr === undefined) {
        const capacity = podCIDRCapacity(this.clusterCIDR);
        const message = `no pod CIDR left for node "${nodeName}": all ${capacity} /${NODE_CIDR_BITS} ranges of the cluster CIDR ${this.clusterCIDR} are allocated; delete nodes that are gone, or start the master with a larger --cluster-cidr`;
        throw new ServiceUnavailableError(message, {
          kind: 'nodes',
          name: nodeName,
          causes: [{ reason: POD_CIDR_RANGE_FULL, field: 'spec.podCIDR', message }],
        });
      }
      try {
        await this.#store.create(podCIDRKey(cidr), this.#record(cidr, nodeName));
        return cidr;
      } catch (err) {
        if (!(err instanceof AlreadyExistsError)) throw err;
        taken.add(cidr);
      }
    }
  }

  /** Makes sure `cidr` is recorded as `nodeName`'s (a Node that already has one); ConflictError when another node holds it. */
  async claim(cidr: string, nodeName: string): Promise<void> {
    try {
      await this.#store.create(podCIDRKey(cidr), this.#record(cidr, nodeName));
    } catch (err) {
      if (!(err instanceof AlreadyExistsError)) throw err;
      const holder = (await this.#store.get<PodCIDRRecord>(podCIDRKey(cidr))).value.nodeName;
      if (holder !== nodeName) {
        throw new ConflictError(`pod CIDR ${cidr} of node "${nodeName}" is allocated to node "${holder}"`, { kind: 'nodes', name: nodeName });
      }
    }
  }

  /** The lowest range recorded for `nodeName`, if any (a node re-joining before its old Node's release). */
  async heldBy(nodeName: string): Promise<string | undefined> {
    return (await this.list())
      .filter((r) => r.nodeName === nodeName)
      .map((r) => r.cidr)
      .sort(compareCidrs)[0];
  }

  /** Frees one range if `nodeName` holds it. */
  async release(cidr: string, nodeName: string): Promise<boolean> {
    try {
      const entry = await this.#store.get<PodCIDRRecord>(podCIDRKey(cidr));
      if (entry.value.nodeName !== nodeName) return false;
      await this.#store.delete(entry.key, entry.revision);
      return true;
    } catch (err) {
      if (err instanceof NotFoundError || err instanceof ConflictError) return false;
      throw err;
    }
  }

  /** Frees every range held by `nodeName`; returns them. */
  async releaseNode(nodeName: string): Promise<string[]> {
    const freed: string[] = [];
    for (const entry of (await this.#store.list<PodCIDRRecord>(POD_CIDR_PREFIX)).items) {
      if (entry.value.nodeName !== nodeName) continue;
      try {
        // Only the record as read: one re-allocated meanwhile belongs to someone else now.
        await this.#store.delete(entry.key, entry.revision);
        freed.push(entry.value.cidr);
      } catch (err) {
        if (!(err instanceof NotFoundError) && !(err instanceof ConflictError)) throw err;
      }
    }
    return freed;
  }

  #record(cidr: string, nodeName: string): PodCIDRRecord {
    return { cidr, nodeName, allocatedAt: this.#now().toISOString() };
  }
}
