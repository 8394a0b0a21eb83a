// The API server's Service IP and node-port allocator: one store record per address and per port, written in the same transaction as the Service, so none is ever given twice or leaked.
import type { KubeObject } from '../../core/api/meta.js';
import { serviceKind, type Service } from '../../core/api/service.js';
import { invalidError } from '../../core/api/validate.js';
import { storePrefix } from '../../core/api/registry.js';
import { AlreadyExistsError, ConflictError, NotFoundError } from '../../core/errors.js';
import type { Store, StoreOp } from '../../core/store/store.js';
import {
  carryOverAllocations,
  planRepair,
  planServiceAllocation,
  releasesOf,
  type HeldAllocations,
  type Holder,
  type ServiceRanges,
} from './service-allocation.js';

/** One key per cluster IP and per node port, created only if absent: the store refuses a second holder. */
export const SERVICE_IP_PREFIX = '/registry/minik8s.io/serviceips/';
export const NODE_PORT_PREFIX = '/registry/minik8s.io/servicenodeports/';

export interface AllocationRecord extends Holder {
  /** The address or the port (as text) the record holds. */
  value: string;
  allocatedAt: string;
}

export function serviceIPKey(ip: string): string {
  return `${SERVICE_IP_PREFIX}${ip}`;
}

export function nodePortKey(port: number): string {
  return `${NODE_PORT_PREFIX}${port}`;
}

/**
 * Store writes a kind's objects carry with them (here: what a Service holds), made in the same
 * transaction as the object's own write. The object service calls it on create, update and removal.
 */
export interface AllocationHook {
  /** Before validation of an update: values the client left out that the stored object holds. */
  carryOver(existing: KubeObject, body: Record<string, unknown>): Record<string, unknown>;
  /** The object as it will be stored and the operations that record what it newly holds or frees; throws InvalidError for a request it cannot grant. */
  plan(next: KubeObject, previous: KubeObject | undefined): Promise<{ object: KubeObject; ops: StoreOp[] }>;
  /** The operations that free what a removed object holds. */
  release(existing: KubeObject): Promise<StoreOp[]>;
}

export interface ServiceAllocatorOptions {
  store: Store;
  ranges: ServiceRanges;
  /** In [0, 1): where searches for a free value start (tests pass a fixed one). */
  random?: () => number;
  now?: () => Date;
}

interface HeldState {
  held: HeldAllocations;
  /** Record key -> its revision, for deletes that must remove only the record as read. */
  revisions: Map<string, number>;
}

export class ServiceAllocator implements AllocationHook {
  readonly ranges: ServiceRanges;
  readonly #store: Store;
  readonly #random: () => number;
  readonly #now: () => Date;

  constructor(options: ServiceAllocatorOptions) {
    this.#store = options.store;
    this.ranges = options.ranges;
    this.#random = options.random ?? Math.random;
    this.#now = options.now ?? (() => new Date());
  }

  carryOver(existing: KubeObject, body: Record<string, unknown>): Record<string, unknown> {
    return carryOverAllocations(existing as Service, body);
  }

  async plan(next: KubeObject, previous: KubeObject | undefined): Promise<{ object: KubeObject; ops: StoreOp[] }> {
    const service = next as Service;
    const { held, revisions } = await this.#read();
    const result = planServiceAllocation({ service, previous: previous as Service | undefined, held, ranges: this.ranges, random: this.#random });
    if (result.problems) throw invalidError(serviceKind, service.metadata.name ?? '', result.problems);
    const { plan } = result;
    const holder: Holder = { namespace: service.metadata.namespace ?? '', name: service.metadata.name ?? '', uid: service.metadata.uid ?? '' };
    const allocatedAt = this.#now().toISOString();
    const ops: StoreOp[] = [
      ...plan.claimIPs.map(
        (ip): StoreOp => ({ type: 'create', key: serviceIPKey(ip), value: { ...holder, value: ip, allocatedAt } satisfies AllocationRecord }),
      ),
      ...plan.claimPorts.map(
        (port): StoreOp => ({ type: 'create', key: nodePortKey(port), value: { ...holder, value: String(port), allocatedAt } satisfies AllocationRecord }),
      ),
      ...deletes(plan.releaseIPs.map(serviceIPKey), revisions),
      ...deletes(plan.releasePorts.map(nodePortKey), revisions),
    ];
    return { object: plan.service, ops };
  }

  async release(existing: KubeObject): Promise<StoreOp[]> {
    const { held, revisions } = await this.#read();
    const freed = releasesOf(existing as Service, held);
    return [...deletes(freed.ips.map(serviceIPKey), revisions), ...deletes(freed.ports.map(nodePortKey), revisions)];
  }

  /**
   * Makes the records match the stored services (see planRepair); run at master start before
   * the API serves. Returns what it did and found, for the log.
   */
  async repair(): Promise<string[]> {
    const services = (await this.#store.list<Service>(storePrefix(serviceKind))).items.map((e) => e.value);
    const { held, revisions } = await this.#read();
    const plan = planRepair(services, held, this.ranges);
    const notes = [...plan.warnings];
    const allocatedAt = this.#now().toISOString();
    const write = async (what: string, op: () => Promise<unknown>) => {
      try {
        await op();
        notes.push(what);
      } catch (err) {
        if (!(err instanceof AlreadyExistsError || err instanceof NotFoundError || err instanceof ConflictError)) throw err;
      }
    };
    for (const { ip, holder } of plan.claimIPs) {
      await write(`recorded cluster IP ${ip} of service ${holder.namespace}/${holder.name}`, () =>
        this.#store.create(serviceIPKey(ip), { ...holder, value: ip, allocatedAt } satisfies AllocationRecord),
      );
    }
    for (const { port, holder } of plan.claimPorts) {
      await write(`recorded node port ${port} of service ${holder.namespace}/${holder.name}`, () =>
        this.#store.create(nodePortKey(port), { ...holder, value: String(port), allocatedAt } satisfies AllocationRecord),
      );
    }
    for (const ip of plan.releaseIPs)
      await write(`freed cluster IP ${ip} (its service is gone)`, () => this.#store.delete(serviceIPKey(ip), revisions.get(serviceIPKey(ip))));
    for (const port of plan.releasePorts)
      await write(`freed node port ${port} (its service is gone)`, () => this.#store.delete(nodePortKey(port), revisions.get(nodePortKey(port))));
    return notes;
  }

  /** Every record, as the allocations the planner checks against. */
  async held(): Promise<HeldAllocations> {
    return (await this.#read()).held;
  }

  async #read(): Promise<HeldState> {
    const [ips, ports] = await Promise.all([this.#store.list<AllocationRecord>(SERVICE_IP_PREFIX), this.#store.list<AllocationRecord>(NODE_PORT_PREFIX)]);
    const revisions = new Map<string, number>();
    const holder = (r: AllocationRecord): Holder => ({ namespace: r.namespace, name: r.name, uid: r.uid });
    const ipMap = new Map<string, Holder>();
    for (const e of ips.items) {
      ipMap.set(e.key.slice(SERVICE_IP_PREFIX.length), holder(e.value));
      revisions.set(e.key, e.revision);
    }
    const portMap = new Map<number, Holder>();
    for (const e of ports.items) {
      portMap.set(Number(e.key.slice(NODE_PORT_PREFIX.length)), holder(e.value));
      revisions.set(e.key, e.revision);
    }
    return { held: { ips: ipMap, ports: portMap }, revisions };
  }
}

/** Deletes of records as read (a record changed since is someone else's now: the transaction fails and is planned again). */
function deletes(keys: readonly string[], revisions: ReadonlyMap<string, number>): StoreOp[] {
  return keys.filter((k) => revisions.has(k)).map((key) => ({ type: 'delete', key, expectedRevision: revisions.get(key)! }));
}
