// The scheduler: informers on pods, nodes and namespaces feed its cache and queue; decisions run one at a time, bindings many at once.
import { isDeepStrictEqual } from 'node:util';
import { eventKind } from '../../core/api/event.js';
import { namespaceKind, type Namespace } from '../../core/api/namespace.js';
import { nodeKind, type Node } from '../../core/api/node.js';
import { podKind, type Pod } from '../../core/api/pod.js';
import { withPodScheduled } from '../../core/api/pod-scheduled.js';
import type { Client } from '../../core/client/client.js';
import type { InformerFactory } from '../../core/controller/informer-factory.js';
import { abortableDelay, type Informer } from '../../core/controller/informer.js';
import { ConflictError, NotFoundError } from '../../core/errors.js';
import { nodeAllocatable } from './node-info.js';
import { isNodeReady } from '../../core/api/node.js';
import { podInfo } from './pod-info.js';
import { schedule, type SchedulingState } from './schedule.js';
import { podIsTerminated, podKey, SchedulerCache } from './scheduler-cache.js';
import { SCHEDULER_NAME, SchedulerEvents } from './scheduler-events.js';
import { SchedulingQueue, type SchedulingQueueOptions } from './scheduling-queue.js';
import type { SchedulerPolicy } from './scores.js';
import { WritePump } from './write-pump.js';

export interface SchedulerOptions {
  /** Events and the PodScheduled=False status writes. */
  client: Client;
  /** Where the pod, node and namespace informers come from (the process starts them). */
  informers: InformerFactory;
  /**
   * Writes the binding (POST pods/NAME/binding) for `pod` as the scheduler saw it: its uid,
   * against its resourceVersion. A Client cannot express it (no subresource create), so the
   * master injects one (api-server/pod-binding.ts's storePodBinder). ConflictError or
   * NotFoundError when the pod cannot be bound (bound already, being deleted, gone).
   */
  bind(pod: Pod, nodeName: string): Promise<unknown>;
  policy?: SchedulerPolicy;
  /** Bindings written at once; decisions stay sequential, each seeing the ones before it as assumed. */
  bindConcurrency?: number;
  log?: (message: string) => void;
  now?: () => Date;
  /** How often backoffs and the 30 s retry of parked pods are checked. */
  tickMs?: number;
  /** Backoff and retry timings (Kubernetes': 1 s doubling to 10 s, parked pods retried after 30 s here). */
  queue?: SchedulingQueueOptions;
  /** Writes per second for pods that fit nowhere (their events and status): 50, kube-scheduler's own client limit. */
  unschedulableWritesPerSecond?: number;
}

/** Pods this scheduler places: not yet bound, not being deleted, and asking for the default scheduler. */
export function isPending(pod: Pod): boolean {
  if (pod.spec.nodeName || pod.metadata.deletionTimestamp) return false;
  const wanted = pod.spec.schedulerName;
  return !wanted || wanted === SCHEDULER_NAME;
}

/** Whether a Node change could let a parked pod fit (heartbeats alone do not: retrying on each would be a storm). */
export function nodeChangeMayHelp(old: Node, next: Node): boolean {
  if (!isNodeReady(old) && isNodeReady(next)) return true;
  if (old.spec?.unschedulable && !next.spec?.unschedulable) return true;
  if (!isDeepStrictEqual(old.spec?.taints ?? [], next.spec?.taints ?? [])) return true;
  if (!isDeepStrictEqual(old.metadata.labels ?? {}, next.metadata.labels ?? {})) return true;
  return !isDeepStrictEqual(nodeAllocatable(old), nodeAllocatable(next));
}

/** Whether an update of a pending pod changed what scheduling looks at (its own status writes do not). */
export function pendingPodChanged(old: Pod, next: Pod): boolean {
  return !isDeepStrictEqual(old.spec, next.spec) || !isDeepStrictEqual(old.metadata.labels ?? {}, next.metadata.labels ?? {});
}

const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

export class Scheduler {
  readonly pods: Informer<Pod>;
  readonly nodes: Informer<Node>;
  readonly namespaces: Informer<Namespace>;
  readonly cache = new SchedulerCache();
  readonly queue: SchedulingQueue;
  readonly events: SchedulerEvents;
  readonly #client: Client;
  readonly #bindPod: (pod: Pod, nodeName: string) => Promise<unknown>;
  readonly #policy: SchedulerPolicy;
  readonly #bindConcurrency: number;
  readonly #log: (message: string) => void;
  readonly #now: () => Date;
  readonly #tickMs: number;
  /** Scheduled events: as many as bindings, written a few at a time, dropped if they fall far behind. */
  readonly #eventPump: WritePump;
  /** What pods that fit nowhere get (FailedScheduling events, PodScheduled=False), at a bounded rate. */
  readonly #unschedulablePump: WritePump;
  /** Pod key -> the PodScheduled=False status waiting to be written (the latest wins; one write per pod queued). */
  readonly #pendingStatus = new Map<string, { pod: Pod; message: string }>();
  #state: SchedulingState = {};
  #binding = 0;
  #slotWaiters: (() => void)[] = [];
  #bindsDone: Promise<void>[] = [];
  /** Counters for logs and benchmarks. */
  readonly stats = { bound: 0, unschedulableAttempts: 0, bindConflicts: 0, bindErrors: 0 };

  constructor(options: SchedulerOptions) {
    this.#client = options.client;
    this.#bindPod = options.bind;
    this.#policy = options.policy ?? 'least-allocated';
    this.#bindConcurrency = options.bindConcurrency ?? 16;
    this.#log = options.log ?? (() => {});
    this.#now = options.now ?? (() => new Date());
    this.#tickMs = options.tickMs ?? 250;
    this.queue = new SchedulingQueue(options.queue);
    const log = (m: string) => this.#log(`scheduler: ${m}`);
    this.#eventPump = new WritePump({ concurrency: 8, maxQueued: 10_000, log: (m) => log(`event: ${m}`) });
    this.#unschedulablePump = new WritePump({
      concurrency: 4,
      maxQueued: 10_000,
      perSecond: options.unschedulableWritesPerSecond ?? 50,
      log: (m) => log(`unschedulable pod: ${m}`),
    });
    const client = this.#client;
    this.events = new SchedulerEvents({
      pump: this.#eventPump,
      failurePump: this.#unschedulablePump,
      now: this.#now,
      sink: {
        create: async (namespace, event) => {
          await client.create(eventKind, event, { namespace });
        },
        patch: async (namespace, name, patch) => {
          await client.patch(eventKind, { namespace, name }, patch);
        },
      },
    });
    // Shared with the process's other components: cached objects are never changed here.
    this.pods = options.informers.informer<Pod>(podKind);
    this.nodes = options.informers.informer<Node>(nodeKind);
    this.namespaces = options.informers.informer<Namespace>(namespaceKind);
    this.#wire();
  }

  get policy(): SchedulerPolicy {
    return this.#policy;
  }

  async start(outer: AbortSignal): Promise<void> {
    // One listener on the master's shared signal; ours (ticker, queue) hang on a signal of our own.
    const stop = new AbortController();
    if (outer.aborted) stop.abort();
    else outer.addEventListener('abort', () => stop.abort(), { once: true });
    const signal = stop.signal;
    signal.addEventListener('abort', () => this.queue.shutdown(), { once: true });
    // The informers are the factory's, started by the process: only their first list is awaited here.
    const synced = Promise.all([this.pods.whenSynced(), this.nodes.whenSynced(), this.namespaces.whenSynced()]);
    await Promise.race([synced, new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }))]);
    const ticker = this.#tick(signal);
    if (!signal.aborted) await this.#run(signal);
    await Promise.all([ticker, ...this.#bindsDone]);
    // Let queued writes finish: they are few, and a Scheduled event lost at shutdown would puzzle.
    const grace = new AbortController();
    await Promise.race([Promise.all([this.#eventPump.whenIdle(), this.#unschedulablePump.whenIdle()]), abortableDelay(2000, grace.signal)]);
    grace.abort();
    this.#eventPump.close();
    this.#unschedulablePump.close();
  }

  /** Everything queued has been tried and every binding written (tests). */
  get idle(): boolean {
    const s = this.queue.stats;
    return s.active === 0 && s.inFlight === 0 && this.#binding === 0;
  }

  #wire(): void {
    this.nodes.addHandlers({
      onAdd: (node) => {
        this.cache.setNode(node);
        this.queue.moveAllToActiveOrBackoff();
      },
      onUpdate: (old, node) => {
        this.cache.setNode(node);
        if (nodeChangeMayHelp(old, node)) this.queue.moveAllToActiveOrBackoff();
      },
      onDelete: (node) => this.cache.deleteNode(node.metadata.name!),
    });
    this.namespaces.addHandlers({
      onAdd: (ns) => this.cache.setNamespace(ns.metadata.name!, ns.metadata.labels ?? {}),
      onUpdate: (_old, ns) => this.cache.setNamespace(ns.metadata.name!, ns.metadata.labels ?? {}),
      onDelete: (ns) => this.cache.setNamespace(ns.metadata.name!, undefined),
    });
    this.pods.addHandlers({
      onAdd: (pod) => {
        if (pod.spec.nodeName) this.cache.updatePod(pod);
        else if (isPending(pod)) this.queue.add(podKey(pod));
      },
      onUpdate: (old, pod) => {
        const key = podKey(pod);
        if (pod.spec.nodeName) {
          this.cache.updatePod(pod);
          this.queue.delete(key);
          this.#pendingStatus.delete(key);
          if (!old.spec.nodeName) this.events.forget(pod.metadata.uid);
          // A pod that finished frees its requests and ports.
          if (podIsTerminated(pod) && !podIsTerminated(old)) this.queue.moveAllToActiveOrBackoff();
          return;
        }
        if (this.cache.isAssumed(key)) return;
        if (!isPending(pod)) {
          this.queue.delete(key);
          return;
        }
        if (!this.queue.has(key) || pendingPodChanged(old, pod)) this.queue.add(key);
      },
      onDelete: (pod) => {
        const key = podKey(pod);
        this.cache.deletePod(pod);
        this.queue.delete(key);
        this.#pendingStatus.delete(key);
        this.events.forget(pod.metadata.uid);
        if (pod.spec.nodeName) this.queue.moveAllToActiveOrBackoff();
      },
    });
  }

  async #tick(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await abortableDelay(this.#tickMs, signal);
      this.queue.tick();
    }
  }

  async #run(signal: AbortSignal): Promise<void> {
    let lastYield = Date.now();
    for (;;) {
      await this.#bindSlot();
      const key = await this.queue.pop();
      if (key === undefined || signal.aborted) return;
      try {
        this.#scheduleOne(key);
      } catch (err) {
        this.#log(`scheduler: ${key}: ${errorText(err)}`);
        this.queue.retry(key);
      }
      // Decisions are synchronous; give the event loop (watch events, HTTP) a turn now and then.
      if (Date.now() - lastYield > 10) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        lastYield = Date.now();
      }
    }
  }

  #bindSlot(): Promise<void> {
    if (this.#binding < this.#bindConcurrency) return Promise.resolve();
    return new Promise((resolve) => this.#slotWaiters.push(resolve));
  }

  #scheduleOne(key: string): void {
    const pod = this.pods.get(key);
    if (!pod || !isPending(pod) || this.cache.isAssumed(key)) {
      this.queue.done(key);
      return;
    }
    const info = podInfo(pod);
    const result = schedule(info, this.cache, this.#policy, this.#state);
    this.#state = result.state;
    if (result.nodeName === undefined) {
      this.stats.unschedulableAttempts++;
      this.queue.unschedulable(key);
      this.events.failedScheduling(pod, result.message);
      this.#markUnschedulable(pod, result.message);
      return;
    }
    const nodeName = result.nodeName;
    this.cache.assume(info, nodeName);
    this.#binding++;
    const done = this.#bind(key, pod, nodeName).finally(() => {
      this.#binding--;
      this.#slotWaiters.shift()?.();
      this.#bindsDone = this.#bindsDone.filter((p) => p !== done);
    });
    this.#bindsDone.push(done);
  }

  async #bind(key: string, pod: Pod, nodeName: string): Promise<void> {
    try {
      await this.#bindPod(pod, nodeName);
      this.stats.bound++;
      this.queue.done(key);
      this.events.forget(pod.metadata.uid);
      this.events.scheduled(pod, nodeName);
    } catch (err) {
      this.cache.forget(key);
      if (err instanceof ConflictError || err instanceof NotFoundError) {
        // Bound by someone else, being deleted, or gone: nothing to retry. If a new pod took the name, the informer has it.
        this.stats.bindConflicts++;
        this.queue.delete(key);
        const current = this.pods.get(key);
        if (current && isPending(current) && current.metadata.uid !== pod.metadata.uid) this.queue.add(key);
      } else {
        this.stats.bindErrors++;
        this.#log(`scheduler: binding ${key} to ${nodeName} failed: ${errorText(err)}`);
        this.queue.retry(key);
      }
    }
  }

  /** PodScheduled=False, reason Unschedulable, with the message; written only when it says something new. */
  #markUnschedulable(pod: Pod, message: string): void {
    const old = pod.status?.conditions?.find((c) => c.type === 'PodScheduled');
    if (old?.status === 'False' && old.reason === 'Unschedulable' && old.message === message) return;
    const key = podKey(pod);
    const queued = this.#pendingStatus.has(key);
    this.#pendingStatus.set(key, { pod, message });
    if (queued) return;
    const accepted = this.#unschedulablePump.push(
      async () => {
        const wanted = this.#pendingStatus.get(key);
        this.#pendingStatus.delete(key);
        if (!wanted) return;
        const { pod: seen } = wanted;
        const conditions = withPodScheduled(seen.status?.conditions, { status: 'False', reason: 'Unschedulable', message: wanted.message }, this.#now());
        try {
          // Against the version decided on: if the pod changed meanwhile (bound, say), this write must not land.
          await this.#client.patch(
            podKind,
            { namespace: seen.metadata.namespace, name: seen.metadata.name! },
            { metadata: { resourceVersion: seen.metadata.resourceVersion }, status: { conditions } },
            { subresource: 'status' },
          );
        } catch (err) {
          if (!(err instanceof ConflictError) && !(err instanceof NotFoundError)) throw err;
        }
      },
      () => !this.#pendingStatus.has(key),
    );
    if (!accepted) this.#pendingStatus.delete(key);
  }
}
