// EndpointSlice mirror: each Endpoints object's subsets as EndpointSlices (one per port set and address type), as Kubernetes' endpointslice controllers keep them for readers that want slices: pure plan, thin shell.
import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { endpointsKind, type EndpointAddress, type Endpoints } from '../../core/api/endpoints.js';
import {
  endpointSliceKind,
  MANAGED_BY_LABEL,
  SERVICE_NAME_LABEL,
  type EndpointSlice,
  type SliceEndpoint,
  type SlicePort,
} from '../../core/api/endpointslice.js';
import { serviceKind, type Service } from '../../core/api/service.js';
import { selectorFromMap } from '../../core/api/selector.js';
import type { Client } from '../../core/client/client.js';
import { runController } from '../../core/controller/controller.js';
import { objectKey, splitKey, type Informer } from '../../core/controller/informer.js';
import type { InformerFactory } from '../../core/controller/informer-factory.js';
import { WorkQueue } from '../../core/controller/work-queue.js';
import { AlreadyExistsError, NotFoundError } from '../../core/errors.js';
import { getOrCreate } from '../../core/get-or-create.js';

/** The managed-by value of the slices this controller keeps (Kubernetes' controller's own). */
export const MANAGED_BY = 'endpointslice-controller.k8s.io';

export interface SlicePlan {
  create: EndpointSlice[];
  update: EndpointSlice[];
  /** Names of managed slices no longer wanted. */
  delete: string[];
}

function addressType(ip: string): 'IPv4' | 'IPv6' {
  return ip.includes(':') ? 'IPv6' : 'IPv4';
}

function sliceEndpoint(a: EndpointAddress, ready: boolean): SliceEndpoint {
  return {
    addresses: [a.ip],
    conditions: { ready, serving: ready, terminating: false },
    ...(a.hostname ? { hostname: a.hostname } : {}),
    ...(a.nodeName ? { nodeName: a.nodeName } : {}),
    ...(a.targetRef ? { targetRef: a.targetRef } : {}),
  };
}

/** A stable name per Service, port set and address type, so that an update lands on the same slice. */
function sliceName(service: string, signature: string): string {
  return `${service}-${createHash('sha256').update(signature).digest('hex').slice(0, 5)}`;
}

/**
 * Pure: the slices an Endpoints object stands for. Each subset (one set of ports) becomes a slice
 * per address type, ready addresses ready and serving, the others neither; an Endpoints with no
 * addresses keeps one empty slice, as Kubernetes keeps a placeholder.
 */
export function desiredSlices(endpoints: Endpoints, service: Service | undefined): EndpointSlice[] {
  const name = endpoints.metadata.name!;
  const labels = { ...(service?.metadata.labels ?? endpoints.metadata.labels ?? {}), [SERVICE_NAME_LABEL]: name, [MANAGED_BY_LABEL]: MANAGED_BY };
  const owner = service?.metadata.uid
    ? [{ apiVersion: 'v1', kind: 'Service', name, uid: service.metadata.uid, controller: true, blockOwnerDeletion: true }]
    : undefined;
  const slice = (signature: string, type: 'IPv4' | 'IPv6', endpointsOfSlice: SliceEndpoint[], ports: SlicePort[] | undefined): EndpointSlice => ({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: sliceName(name, signature), namespace: endpoints.metadata.namespace, labels, ...(owner ? { ownerReferences: owner } : {}) },
    addressType: type,
    endpoints: endpointsOfSlice,
    ...(ports ? { ports } : {}),
  });
  const out: EndpointSlice[] = [];
  for (const subset of endpoints.subsets ?? []) {
    const ports = subset.ports?.map((p) => ({
      name: p.name ?? '',
      port: p.port,
      protocol: p.protocol,
      ...(p.appProtocol ? { appProtocol: p.appProtocol } : {}),
    }));
    const portSignature = JSON.stringify(ports ?? []);
    const byType = new Map<'IPv4' | 'IPv6', SliceEndpoint[]>();
    const add = (a: EndpointAddress, ready: boolean) => {
      getOrCreate(byType, addressType(a.ip), () => []).push(sliceEndpoint(a, ready));
    };
    for (const a of subset.addresses ?? []) add(a, true);
    for (const a of subset.notReadyAddresses ?? []) add(a, false);
    for (const [type, list] of byType) out.push(slice(`${type}/${portSignature}`, type, list, ports));
  }
  if (out.length === 0) out.push(slice('IPv4/empty', 'IPv4', [], undefined));
  return out.sort((a, b) => a.metadata.name!.localeCompare(b.metadata.name!));
}

/** What makes two slices the same for this controller: what it writes, not what the server adds. */
function sameSlice(a: EndpointSlice, b: EndpointSlice): boolean {
  return (
    a.addressType === b.addressType &&
    isDeepStrictEqual(a.endpoints ?? [], b.endpoints ?? []) &&
    isDeepStrictEqual(a.ports ?? [], b.ports ?? []) &&
    isDeepStrictEqual(a.metadata.labels ?? {}, b.metadata.labels ?? {}) &&
    isDeepStrictEqual(a.metadata.ownerReferences ?? [], b.metadata.ownerReferences ?? [])
  );
}

/**
 * Pure decision for one Service's slices: `current` are the slices this controller manages for it.
 * No Endpoints: every managed slice goes.
 */
export function planSlices(endpoints: Endpoints | undefined, service: Service | undefined, current: readonly EndpointSlice[]): SlicePlan {
  const plan: SlicePlan = { create: [], update: [], delete: [] };
  const wanted = endpoints ? desiredSlices(endpoints, service) : [];
  const byName = new Map(current.map((s) => [s.metadata.name!, s]));
  for (const slice of wanted) {
    const existing = byName.get(slice.metadata.name!);
    if (!existing) plan.create.push(slice);
    else if (!sameSlice(existing, slice))
      plan.update.push({ ...slice, metadata: { ...existing.metadata, labels: slice.metadata.labels, ownerReferences: slice.metadata.ownerReferences } });
    byName.delete(slice.metadata.name!);
  }
  plan.delete = [...byName.keys()].sort();
  return plan;
}

/** The slices are keyed by their Service's name (the label), in the slice's namespace. */
function serviceKeyOf(slice: EndpointSlice): string | undefined {
  const name = slice.metadata.labels?.[SERVICE_NAME_LABEL];
  return name ? `${slice.metadata.namespace}/${name}` : undefined;
}

export interface EndpointSliceMirrorOptions {
  client: Client;
  informers: InformerFactory;
  log?: (message: string) => void;
}

export class EndpointSliceMirror {
  readonly queue = new WorkQueue();
  readonly endpoints: Informer<Endpoints>;
  readonly slices: Informer<EndpointSlice>;
  readonly services: Informer<Service>;
  readonly #client: Client;
  readonly #log: (message: string) => void;

  constructor(options: EndpointSliceMirrorOptions) {
    this.#client = options.client;
    this.#log = options.log ?? (() => {});
    this.endpoints = options.informers.informer<Endpoints>(endpointsKind);
    this.slices = options.informers.informer<EndpointSlice>(endpointSliceKind);
    this.services = options.informers.informer<Service>(serviceKind);
    const byKey = (o: Endpoints | Service) => this.queue.add(objectKey(o));
    this.endpoints.addHandlers({ onAdd: byKey, onUpdate: (_old, e) => byKey(e), onDelete: byKey });
    // A Service's labels and uid go onto its slices.
    this.services.addHandlers({ onAdd: byKey, onUpdate: (_old, s) => byKey(s), onDelete: byKey });
    // Slices changed or deleted by anyone else are put back (level-triggered).
    const bySlice = (s: EndpointSlice) => {
      const key = serviceKeyOf(s);
      if (key && s.metadata.labels?.[MANAGED_BY_LABEL] === MANAGED_BY) this.queue.add(key);
    };
    this.slices.addHandlers({ onAdd: bySlice, onUpdate: (_old, s) => bySlice(s), onDelete: bySlice });
  }

  async start(signal: AbortSignal): Promise<void> {
    await runController(
      {
        name: 'endpointslice-mirror',
        queue: this.queue,
        informers: [this.endpoints, this.slices, this.services],
        reconcile: (key) => this.reconcile(key),
        log: this.#log,
      },
      signal,
    );
  }

  async reconcile(key: string): Promise<void> {
    const { namespace, name } = splitKey(key);
    const current = this.slices.select(selectorFromMap({ [SERVICE_NAME_LABEL]: name, [MANAGED_BY_LABEL]: MANAGED_BY }), namespace);
    const plan = planSlices(this.endpoints.get(key), this.services.get(key), current);
    for (const slice of plan.create) {
      try {
        await this.#client.create(endpointSliceKind, slice, { namespace });
      } catch (err) {
        if (!(err instanceof AlreadyExistsError)) throw err; // the cache was behind: its event brings the key back
      }
    }
    for (const slice of plan.update) await this.#client.replace(endpointSliceKind, { namespace, name: slice.metadata.name! }, slice);
    for (const sliceName of plan.delete) {
      try {
        await this.#client.delete(endpointSliceKind, { namespace, name: sliceName });
      } catch (err) {
        if (!(err instanceof NotFoundError)) throw err;
      }
    }
  }
}
