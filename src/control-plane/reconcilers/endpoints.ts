// Endpoints reconciler: one Endpoints object per Service with a selector, listing the ready and not-ready pods it selects with their resolved ports, as Kubernetes' endpoints controller keeps them.
import { isDeepStrictEqual } from 'node:util';
import { endpointsKind, type EndpointAddress, type EndpointPort, type Endpoints, type EndpointSubset } from '../../core/api/endpoints.js';
import type { KubeObject } from '../../core/api/meta.js';
import { isPodReady, type Pod, podKind } from '../../core/api/pod.js';
import { selectorFromMap } from '../../core/api/selector.js';
import { serviceKind, type Service, type ServicePort } from '../../core/api/service.js';
import type { Client } from '../../core/client/client.js';
import { runController } from '../../core/controller/controller.js';
import { objectKey, splitKey, type Informer } from '../../core/controller/informer.js';
import type { InformerFactory } from '../../core/controller/informer-factory.js';
import { WorkQueue } from '../../core/controller/work-queue.js';
import { AlreadyExistsError, NotFoundError } from '../../core/errors.js';
import { getOrCreate } from '../../core/get-or-create.js';
import { recordEvent } from './record-event.js';

/** A selector as Kubernetes reads a Service's: every pair must be among the pod's labels. An empty one selects nothing here (no managed Endpoints). */
export function selects(selector: Readonly<Record<string, string>> | undefined, labels: Readonly<Record<string, string>> | undefined): boolean {
  if (!selector || Object.keys(selector).length === 0) return false;
  return Object.entries(selector).every(([k, v]) => labels?.[k] === v);
}

/** True for a Service whose Endpoints this reconciler owns: one with a (non-empty) selector. */
export function hasSelector(service: Service): boolean {
  return Object.keys(service.spec.selector ?? {}).length > 0;
}

/**
 * The pod port a service port sends to: a number as it is, a name looked up among the pod's
 * container ports of the same protocol. Undefined when the pod declares no such name.
 */
export function resolveTargetPort(pod: Pod, port: ServicePort): number | undefined {
  const target = port.targetPort ?? port.port;
  if (typeof target === 'number') return target;
  for (const c of pod.spec.containers) {
    for (const p of c.ports ?? []) {
      if (p.name === target && (p.protocol ?? 'TCP') === port.protocol) return p.containerPort;
    }
  }
  return undefined;
}

/** Why pods were left out of a service's Endpoints, for an event: names no selected pod's containers declare. */
export interface SubsetsResult {
  subsets: EndpointSubset[];
  /** `pod name -> port names it lacks`, for pods otherwise in the endpoints. */
  unresolved: Map<string, string[]>;
}

function addressOf(pod: Pod): EndpointAddress {
  return {
    ip: pod.status!.podIP!,
    ...(pod.spec.nodeName ? { nodeName: pod.spec.nodeName } : {}),
    targetRef: { kind: 'Pod', namespace: pod.metadata.namespace, name: pod.metadata.name, uid: pod.metadata.uid },
  };
}

function portKey(p: EndpointPort): string {
  return `${p.name ?? ''}/${p.port}/${p.protocol}`;
}

const byIP = (a: EndpointAddress, b: EndpointAddress) =>
  a.ip.localeCompare(b.ip, 'en', { numeric: true }) || (a.targetRef?.name ?? '').localeCompare(b.targetRef?.name ?? '');

/**
 * Pure: the subsets for `service` from the pods of its namespace. A pod counts when the
 * selector matches, it has an IP, it is not finished (Succeeded, Failed) and not being deleted
 * (a deleted replica leaves the rotation before it stops). Ready pods are `addresses`, others
 * `notReadyAddresses` (all ready with publishNotReadyAddresses). Pods are grouped into subsets by
 * the ports they resolve to (Kubernetes' repacking), everything sorted so that equal inputs
 * give equal objects.
 */
export function desiredSubsets(service: Service, pods: readonly Pod[]): SubsetsResult {
  const unresolved = new Map<string, string[]>();
  const groups = new Map<string, { ports: EndpointPort[]; ready: EndpointAddress[]; notReady: EndpointAddress[] }>();
  const publishNotReady = service.spec.publishNotReadyAddresses === true;
  for (const pod of pods) {
    if (pod.metadata.namespace !== service.metadata.namespace || !selects(service.spec.selector, pod.metadata.labels)) continue;
    if (!pod.status?.podIP || pod.metadata.deletionTimestamp) continue;
    if (pod.status.phase === 'Succeeded' || pod.status.phase === 'Failed') continue;
    const ports: EndpointPort[] = [];
    const missing: string[] = [];
    for (const sp of service.spec.ports) {
      const port = resolveTargetPort(pod, sp);
      if (port === undefined) {
        missing.push(String(sp.targetPort));
        continue;
      }
      ports.push({ ...(sp.name ? { name: sp.name } : {}), port, protocol: sp.protocol, ...(sp.appProtocol ? { appProtocol: sp.appProtocol } : {}) });
    }
    if (missing.length) unresolved.set(pod.metadata.name!, missing);
    // A headless service without ports lists bare addresses; otherwise a pod with no port resolved is left out.
    if (ports.length === 0 && service.spec.ports.length > 0) continue;
    ports.sort((a, b) => portKey(a).localeCompare(portKey(b)));
    const key = ports.map(portKey).join(',');
    const group = groups.get(key) ?? { ports, ready: [], notReady: [] };
    groups.set(key, group);
    (publishNotReady || isPodReady(pod) ? group.ready : group.notReady).push(addressOf(pod));
  }
  const subsets = [...groups.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([, g]) => {
      const subset: EndpointSubset = {};
      if (g.ready.length) subset.addresses = g.ready.sort(byIP);
      if (g.notReady.length) subset.notReadyAddresses = g.notReady.sort(byIP);
      if (g.ports.length) subset.ports = g.ports;
      return subset;
    });
  return { subsets, unresolved };
}

export type EndpointsAction = { type: 'none' } | { type: 'create'; endpoints: Endpoints } | { type: 'update'; endpoints: Endpoints } | { type: 'delete' };

/**
 * Pure decision for one service key. No Service: its Endpoints go (Kubernetes does the same).
 * A Service without a selector: its Endpoints are someone else's (the user's, the master's).
 * Otherwise the Endpoints must hold exactly the desired subsets, with the Service's labels.
 */
export function planEndpoints(service: Service | undefined, current: Endpoints | undefined, pods: readonly Pod[]): EndpointsAction {
  if (!service) return current ? { type: 'delete' } : { type: 'none' };
  if (!hasSelector(service)) return { type: 'none' };
  const { subsets } = desiredSubsets(service, pods);
  const labels = service.metadata.labels ?? {};
  if (!current) {
    return {
      type: 'create',
      endpoints: {
        apiVersion: 'v1',
        kind: 'Endpoints',
        metadata: { name: service.metadata.name, namespace: service.metadata.namespace, ...(Object.keys(labels).length ? { labels } : {}) },
        subsets,
      },
    };
  }
  if (isDeepStrictEqual(current.subsets ?? [], subsets) && isDeepStrictEqual(current.metadata.labels ?? {}, labels)) return { type: 'none' };
  const { labels: _old, ...meta } = current.metadata;
  return { type: 'update', endpoints: { ...current, metadata: { ...meta, ...(Object.keys(labels).length ? { labels } : {}) }, subsets } };
}

/**
 * Which services select a pod, without scanning every service per pod event: each service is
 * indexed under one of its selector's pairs (`ns`, `key=value`); a pod can only match services
 * indexed under one of its own labels.
 */
export class SelectorIndex {
  readonly #byPair = new Map<string, Map<string, Readonly<Record<string, string>>>>();
  readonly #pairOf = new Map<string, string>();

  static #pair(namespace: string, key: string, value: string): string {
    return `${namespace}\u0000${key}=${value}`;
  }

  set(service: Service): void {
    const key = objectKey(service);
    this.delete(key);
    const selector = service.spec.selector ?? {};
    const first = Object.keys(selector).sort()[0];
    if (first === undefined) return;
    const pair = SelectorIndex.#pair(service.metadata.namespace ?? '', first, selector[first]!);
    this.#pairOf.set(key, pair);
    getOrCreate(this.#byPair, pair, () => new Map()).set(key, selector);
  }

  delete(serviceKey: string): void {
    const pair = this.#pairOf.get(serviceKey);
    if (pair === undefined) return;
    this.#pairOf.delete(serviceKey);
    const bucket = this.#byPair.get(pair)!;
    bucket.delete(serviceKey);
    if (bucket.size === 0) this.#byPair.delete(pair);
  }

  /** Keys of the services whose selector matches `pod`'s labels. */
  servicesFor(pod: Pick<Pod, 'metadata'>): string[] {
    const out: string[] = [];
    const labels = pod.metadata.labels ?? {};
    for (const [k, v] of Object.entries(labels)) {
      const bucket = this.#byPair.get(SelectorIndex.#pair(pod.metadata.namespace ?? '', k, v));
      for (const [key, selector] of bucket ?? []) if (selects(selector, labels)) out.push(key);
    }
    return out;
  }
}

export interface EndpointsReconcilerOptions {
  client: Client;
  /** The process's shared informers: Services, Pods (selected through the label index) and Endpoints. */
  informers: InformerFactory;
  log?: (message: string) => void;
}

export class EndpointsReconciler {
  readonly services: Informer<Service>;
  readonly pods: Informer<Pod>;
  readonly endpoints: Informer<Endpoints>;
  readonly queue = new WorkQueue();
  readonly #client: Client;
  readonly #log: (message: string) => void;
  readonly #index = new SelectorIndex();
  /** Per service, the named ports last reported missing, so that the warning is not repeated at every pod event. */
  readonly #warned = new Map<string, string>();

  constructor(options: EndpointsReconcilerOptions) {
    this.#client = options.client;
    this.#log = options.log ?? (() => {});
    this.services = options.informers.informer<Service>(serviceKind);
    this.pods = options.informers.informer<Pod>(podKind);
    this.endpoints = options.informers.informer<Endpoints>(endpointsKind);

    const onService = (s: Service) => {
      this.#index.set(s);
      this.queue.add(objectKey(s));
    };
    this.services.addHandlers({
      onAdd: onService,
      onUpdate: (_old, s) => onService(s),
      onDelete: (s) => {
        this.#index.delete(objectKey(s));
        this.#warned.delete(objectKey(s));
        this.queue.add(objectKey(s));
      },
    });
    const enqueueFor = (pod: Pod) => {
      for (const key of this.#index.servicesFor(pod)) this.queue.add(key);
    };
    this.pods.addHandlers({
      onAdd: enqueueFor,
      onUpdate: (old, pod) => {
        // Old labels too: a pod relabelled out of a selector must leave its endpoints.
        enqueueFor(old);
        enqueueFor(pod);
      },
      onDelete: enqueueFor,
    });
    // Endpoints changed or deleted by anyone else are put back (level-triggered); orphans at start go.
    this.endpoints.addHandlers({
      onUpdate: (_old, ep) => this.queue.add(objectKey(ep)),
      onDelete: (ep) => this.queue.add(objectKey(ep)),
    });
  }

  /** Runs the worker and the sweep of orphans once the informers (started by the process's factory) have synced. */
  async start(signal: AbortSignal): Promise<void> {
    await Promise.all([
      runController(
        {
          name: 'endpoints',
          queue: this.queue,
          informers: [this.services, this.pods, this.endpoints],
          reconcile: (key) => this.reconcile(key),
          log: this.#log,
        },
        signal,
      ),
      this.#sweep(signal),
    ]);
  }

  async reconcile(key: string): Promise<void> {
    const { namespace, name } = splitKey(key);
    const service = this.services.get(key);
    const current = this.endpoints.get(key);
    // Only the pods the selector picks, from the label index: the plan would look at no others.
    const pods = service && hasSelector(service) ? this.pods.select(selectorFromMap(service.spec.selector!), namespace) : [];
    const action = planEndpoints(service, current, pods);
    if (service && hasSelector(service)) await this.#warnUnresolved(service, pods);
    try {
      if (action.type === 'create') await this.#client.create(endpointsKind, action.endpoints, { namespace });
      else if (action.type === 'update') await this.#client.replace(endpointsKind, { namespace, name }, action.endpoints);
      else if (action.type === 'delete') await this.#client.delete(endpointsKind, { namespace, name });
    } catch (err) {
      // The cache was behind: its event is on the way and brings this key back.
      if (action.type === 'create' && err instanceof AlreadyExistsError) return;
      if (action.type === 'delete' && err instanceof NotFoundError) return;
      throw err;
    }
  }

  /** One Warning event when the named target ports of a service resolve in none, or not all, of its pods. */
  async #warnUnresolved(service: Service, pods: readonly Pod[]): Promise<void> {
    const key = objectKey(service);
    const { unresolved } = desiredSubsets(service, pods);
    const names = [...new Set([...unresolved.values()].flat())].sort();
    const signature = names.join(',');
    if (signature === (this.#warned.get(key) ?? '')) return;
    this.#warned.set(key, signature);
    if (names.length === 0) return;
    const podNames = [...unresolved.keys()].sort();
    const shown = podNames.slice(0, 5).join(', ') + (podNames.length > 5 ? ` and ${podNames.length - 5} more` : '');
    await recordEvent(
      {
        client: this.#client,
        object: service,
        type: 'Warning',
        reason: 'FailedToResolvePort',
        message: `target port ${names.map((n) => `"${n}"`).join(', ')} is not a container port name of pod ${shown}: left out of the endpoints`,
        component: 'endpoint-controller',
      },
      this.#log,
    );
  }

  /** Endpoints whose Service went while the master was down: looked at once the caches are in. */
  async #sweep(signal: AbortSignal): Promise<void> {
    await Promise.race([
      Promise.all([this.services.whenSynced(), this.endpoints.whenSynced()]),
      new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true })),
    ]);
    if (signal.aborted) return;
    for (const ep of this.endpoints.list()) {
      const key = objectKey(ep as KubeObject);
      if (!this.services.get(key)) this.queue.add(key);
    }
  }
}
