// Many fake nodes in one process, kwok-style: each joins, registers and heartbeats as a real node does; pods bound to them run on in-memory providers and report Running.
import { setMaxListeners } from 'node:events';
import http from 'node:http';
import https from 'node:https';
import { join } from 'node:path';
import PQueue from 'p-queue';
import { nodeKind, type Node, type NodeStatus, type Taint } from '../../core/api/node.js';
import { podKind, type Pod } from '../../core/api/pod.js';
import { ApiClient } from '../../core/client/api-client.js';
import type { Client } from '../../core/client/client.js';
import { runController, WorkQueue } from '../../core/controller/controller.js';
import { abortableDelay, NODE_NAME_INDEX, objectKey, type Informer } from '../../core/controller/informer.js';
import { InformerFactory } from '../../core/controller/informer-factory.js';
import { ApiError, UnauthorizedError } from '../../core/errors.js';
import { FakeProvider } from '../../runtime/fake-provider.js';
import type { RuntimeInfo } from '../../runtime/provider.js';
import type { FakeNodeCapacity } from '../worker-config.js';
import { podApiFor } from '../kubelet/kubelet.js';
import { MIN_GRACE_SECONDS, PodSync, type Probes } from '../kubelet/pod-sync.js';
import { POD_CIDR_RANGE_FULL } from '../../core/api/node.js';
import { StartupError } from '../../core/lifecycle/startup-error.js';
import { HEARTBEAT_INTERVAL_MS } from '../agent/node-agent.js';
import { obtainNodeCredential, type NodeCredential } from '../agent/node-credential.js';
import { NodeLeaseRenewer, shouldReportStatus } from '../agent/node-heartbeat.js';
import { nodeMetaPatch, nodeStatus } from '../agent/node-status.js';

/** Every fake node carries it, as kwok's carry type=kwok: selectors and tolerations can aim at (or away from) them. */
export const FAKE_NODE_LABEL = 'minik8s.io/fake-node';

/** Nothing changes on a fake node by itself, so its pods are looked at again far less often than a real kubelet's. */
export const FAKE_RESYNC_INTERVAL_MS = 60_000;

export interface FakeNodeHostOptions {
  server: string;
  /** Needed for nodes that have not joined yet (their credentials are kept, as a worker keeps its own). */
  joinToken?: string;
  /** The nodes' names (fakeNodeNames); each gets its own Node, credential and pod /24. */
  names: string[];
  /** Every fake node's InternalIP: the machine the host runs on. */
  nodeIP: string;
  capacity: FakeNodeCapacity;
  labels: Record<string, string>;
  taints: Taint[];
  /** Reported as the kubelet port; fake nodes serve no kubelet API (no logs, exec or stats). */
  kubeletPort: number;
  /** Worker state: each node's credential is kept in DATA_DIR/fake-nodes/NAME/kubelet/node-credential.json. */
  dataDir: string;
  /** Each node heartbeats this often (default 10 s, as a kubelet); the heartbeats are spread over the interval. */
  heartbeatIntervalMs?: number;
  /**
   * Heartbeat with Leases (default), writing the Node status only on change or every
   * `statusReportFrequencyMs`; false is the old way (the status at every heartbeat), kept to measure the difference.
   */
  leases?: boolean;
  /** See NodeAgentOptions.statusReportFrequencyMs (default 5 minutes). */
  statusReportFrequencyMs?: number;
  /** Every hosted pod is looked at again this often (default FAKE_RESYNC_INTERVAL_MS). */
  resyncIntervalMs?: number;
  /** Pods synced at once across all nodes, which bounds the status writes in flight (default 16). */
  syncWorkers?: number;
  /** Joins, registrations and heartbeats in flight at once (default 16). */
  requestConcurrency?: number;
  /** How a node gets its credential; by default it joins with the token (or reuses the one kept). Unit tests pass their own. */
  obtainCredential?: (name: string, signal: AbortSignal) => Promise<NodeCredential>;
  /**
   * Pods that run to completion (kwok's stages, for Job benches): once a pod's containers run,
   * they exit with `exitCode` after `afterMs`. Undefined (the default, or for a pod): run forever.
   */
  completion?: (pod: Pod) => { afterMs: number; exitCode: number } | undefined;
  now?: () => Date;
  log?: (message: string) => void;
}

/** `PREFIX-0` ... `PREFIX-(count-1)`, as kwok names its nodes. */
export function fakeNodeNames(prefix: string, count: number): string[] {
  return Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
}

/** What a fake node's runtime "reports": the capacity given, and a runtime version that says what it is. */
export function fakeNodeInfo(capacity: FakeNodeCapacity): RuntimeInfo {
  return {
    runtimeVersion: 'fake://minik8s',
    cpuCores: capacity.cpuCores,
    memoryBytes: capacity.memoryBytes,
    kernelVersion: 'fake',
    osImage: 'minik8s fake node',
    architecture: 'amd64',
  };
}

/** The widest prefix length of a cluster CIDR that holds `count` node /24s (a /16 holds 256). */
export function clusterCIDRBitsFor(count: number): number {
  return 24 - Math.ceil(Math.log2(Math.max(1, count)));
}

/**
 * Heartbeats spread over the interval: node i posts in tick floor(i * ticks / count), ticks at
 * least `minTickMs` apart, so 1,000 nodes on a 10 s interval post 10 at a time every 100 ms
 * rather than 1,000 at once. Returns the nodes (indexes) of each tick and the tick length.
 */
export function heartbeatBatches(count: number, intervalMs: number, minTickMs = 100): { tickMs: number; batches: number[][] } {
  const ticks = Math.max(1, Math.min(count, Math.floor(intervalMs / minTickMs)));
  const batches: number[][] = Array.from({ length: ticks }, () => []);
  for (let i = 0; i < count; i++) batches[Math.floor((i * ticks) / count)]!.push(i);
  return { tickMs: intervalMs / ticks, batches };
}

/** Fake containers have nothing to probe: every probe passes at once, as kwok's pods are Ready at once. */
const passingProbes: Probes = {
  sync() {},
  verdict: () => ({}),
  status: () => ({ ready: true, started: true }),
  forgetPod() {},
};

/** Fake nodes write no Events (kwok writes none either): 10,000 pods would be 30,000 more writes than the pods themselves. */
const noEvents = { record() {}, forgetPod() {} };

interface FakeNode {
  name: string;
  credential: NodeCredential;
  client: ApiClient;
  provider: FakeProvider;
  sync: PodSync;
  /** The status the API last answered with, so unchanged conditions keep their transition times. */
  lastStatus?: NodeStatus;
  /** When the status was last written (ms). */
  lastReportAt?: number;
  /** A status write failed since the last one that got through: read the Node before the next. */
  missed: boolean;
  lease?: NodeLeaseRenewer;
  heartbeating: boolean;
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export class FakeNodeHost {
  readonly #o: FakeNodeHostOptions;
  readonly #log: (message: string) => void;
  readonly #now: () => Date;
  /** Registered nodes by name; pods bound to any other name are not ours. */
  readonly #nodes = new Map<string, FakeNode>();
  /** Every node's requests go over one bounded pool of connections, whatever the number of nodes. */
  /** Made at the first registration: over https it trusts the CA that node's join checked. */
  #agent: http.Agent | undefined;
  readonly #maxSockets: number;
  /** The host's shared informers, over whichever registered node's credential still works: started once the first node has registered. */
  readonly #informers: InformerFactory;
  /** Every pod, filed by node (NODE_NAME_INDEX): one watch for all the nodes hosted. */
  readonly #pods: Informer<Pod>;
  #queue: WorkQueue | undefined;

  constructor(options: FakeNodeHostOptions) {
    this.#o = options;
    this.#log = options.log ?? (() => {});
    this.#now = options.now ?? (() => new Date());
    this.#maxSockets = (options.requestConcurrency ?? 16) + (options.syncWorkers ?? 16) + 4;
    this.#informers = new InformerFactory({ client: this.#anyNodeClient(), log: this.#log });
    this.#pods = this.#informers.informer<Pod>(podKind);
  }

  /** Names of the nodes registered so far. */
  get nodeNames(): string[] {
    return [...this.#nodes.keys()];
  }

  /** Resolves once no pod is queued or being synced: how tests see the nodes settle. */
  async whenIdle(): Promise<void> {
    await this.#queue?.whenIdle();
  }

  /** Joins and registers every node, then runs them until `signal` aborts. A refused join (no pod CIDR left, a bad token) rejects with a StartupError. */
  async start(signal: AbortSignal): Promise<void> {
    const { names } = this.#o;
    const stop = new AbortController();
    // Joins waiting to retry, the pod watch, the queue and the loops all listen on it: more than Node's default 10 is normal.
    setMaxListeners(100, stop.signal);
    const abortAll = () => stop.abort();
    signal.addEventListener('abort', abortAll, { once: true });
    const queue = new WorkQueue();
    this.#queue = queue;
    /** The uid and node of each pod key as last synced, to clean up after pods that vanish. */
    const tracked = new Map<string, { uid: string; node: string }>();
    const informer = this.#pods;
    const hosted = (pod: Pod) => this.#nodes.has(pod.spec?.nodeName ?? '');
    const enqueue = (pod: Pod) => {
      if (hosted(pod) || tracked.has(objectKey(pod))) queue.add(objectKey(pod));
    };
    informer.addHandlers({ onAdd: enqueue, onUpdate: (_old, pod) => enqueue(pod), onDelete: enqueue });
    /** Pods whose containers were set to finish (option `completion`), by uid. */
    const finishing = new Set<string>();
    const finishLater = (node: FakeNode, pod: Pod, key: string) => {
      const plan = this.#o.completion?.(pod);
      const uid = pod.metadata.uid!;
      if (!plan || finishing.has(uid) || pod.status?.phase !== 'Running') return;
      finishing.add(uid);
      const timer = setTimeout(() => {
        for (const c of pod.spec.containers) {
          try {
            node.provider.exitContainer(uid, c.name, { exitCode: plan.exitCode });
          } catch {
            // Already gone or stopped: nothing to finish.
          }
        }
        queue.add(key);
      }, plan.afterMs);
      timer.unref();
    };

    const reconcile = async (key: string) => {
      const pod = informer.get(key);
      const last = tracked.get(key);
      if (last && last.uid !== pod?.metadata.uid) {
        // Deleted (or replaced by a new pod of the same name) behind our back: drop what the fake runtime holds.
        const [namespace, name] = key.split('/') as [string, string];
        await this.#nodes.get(last.node)?.provider.deletePod({ uid: last.uid, namespace, name }, { gracePeriodSeconds: MIN_GRACE_SECONDS });
        tracked.delete(key);
      }
      const node = pod && this.#nodes.get(pod.spec.nodeName ?? '');
      if (!pod || !node) return;
      tracked.set(key, { uid: pod.metadata.uid!, node: node.name });
      const result = await node.sync.sync(pod);
      finishLater(node, pod, key);
      if (result.requeueAt !== undefined && !stop.signal.aborted) queue.addAfter(key, result.requeueAt - Date.now());
    };

    const running: Promise<unknown>[] = [];
    try {
      let informerStarted = false;
      running.push(this.#heartbeats(stop.signal));
      await this.#registerAll(stop.signal, () => {
        // The pod watch needs a credential: it starts with the first registered node's.
        if (informerStarted) return;
        informerStarted = true;
        running.push(this.#informers.start(stop.signal));
        running.push(
          runController({ name: 'fake-nodes', queue, informers: [informer], reconcile, workers: this.#o.syncWorkers ?? 16, log: this.#log }, stop.signal),
        );
      });
      if (stop.signal.aborted) return;
      // Pods bound to a node before it registered (a restart) were skipped as not ours: look at them now.
      await Promise.race([informer.whenSynced(), new Promise((resolve) => stop.signal.addEventListener('abort', resolve, { once: true }))]);
      for (const node of this.#nodes.values()) for (const pod of informer.byIndex(NODE_NAME_INDEX, node.name)) queue.add(objectKey(pod));
      const cidrs = [...this.#nodes.values()].map((n) => n.credential.podCIDR);
      this.#log(`kubelet: nodes ${names[0]} ... ${names.at(-1)} (${names.length} fake nodes, pod CIDRs ${cidrs[0]} ...) syncing pods on the fake provider`);
      running.push(this.#resync(informer, stop.signal));
      await new Promise<void>((resolve) => {
        if (stop.signal.aborted) resolve();
        stop.signal.addEventListener('abort', () => resolve(), { once: true });
      });
    } finally {
      stop.abort();
      signal.removeEventListener('abort', abortAll);
      await Promise.allSettled(running);
      for (const node of this.#nodes.values()) node.client.close();
      this.#agent?.destroy();
    }
  }

  /**
   * The client of the host's informers: one watch over all pods for every node (node credentials
   * may read all pods, and one stream costs the API server far less than one per node).
   */
  #anyNodeClient(): Client {
    // Any registered node's credential will do; if it is revoked (its Node deleted), the next one is used.
    let current: FakeNode | undefined;
    const pick = (): ApiClient => {
      if (!current || !this.#nodes.has(current.name)) current = this.#nodes.values().next().value;
      if (!current) throw new Error('no fake node has registered yet');
      return current.client;
    };
    const onError = (err: unknown) => {
      if (err instanceof UnauthorizedError && current) {
        this.#log(`fake nodes: node ${current.name}'s credential was refused; watching pods with another node's`);
        this.#nodes.delete(current.name);
        current = undefined;
      }
      return err;
    };
    const call = async <R>(request: (client: ApiClient) => Promise<R>): Promise<R> => {
      try {
        return await request(pick());
      } catch (err) {
        throw onError(err);
      }
    };
    return {
      get: (def, ref) => call((c) => c.get(def, ref)),
      list: (def, options) => call((c) => c.list(def, options)),
      create: (def, object, options) => call((c) => c.create(def, object, options)),
      replace: (def, ref, object, options) => call((c) => c.replace(def, ref, object, options)),
      patch: (def, ref, patch, options) => call((c) => c.patch(def, ref, patch, options)),
      delete: (def, ref, options) => call((c) => c.delete(def, ref, options)),
      async *watch(def, options) {
        try {
          yield* pick().watch(def, options);
        } catch (err) {
          throw onError(err);
        }
      },
    };
  }

  /** Joins and registers every node, `requestConcurrency` at a time; `onFirst` runs once the first is registered. */
  async #registerAll(signal: AbortSignal, onFirst: () => void): Promise<void> {
    const { names } = this.#o;
    const limit = new PQueue({ concurrency: this.#o.requestConcurrency ?? 16 });
    let failure: unknown;
    let lastReport = Date.now();
    this.#log(`fake nodes: joining ${names.length} nodes ${names[0]} ... ${names.at(-1)} to ${this.#o.server}`);
    const registerOne = async (name: string) => {
      if (failure !== undefined || signal.aborted) return;
      try {
        const node = await this.#register(name, signal);
        this.#nodes.set(name, node);
        onFirst();
        if (Date.now() - lastReport > 5000) {
          lastReport = Date.now();
          this.#log(`fake nodes: ${this.#nodes.size} of ${names.length} registered`);
        }
      } catch (err) {
        failure ??= err;
        limit.clear();
      }
    };
    // The first node alone: it waits out a master that is still starting, and a refused token is said once, not by 16 joins at a time.
    await registerOne(names[0]!);
    // Not awaiting each add(): tasks dropped by clear() never settle; onIdle() below waits for the ones that ran.
    for (const name of names.slice(1)) void limit.add(() => registerOne(name));
    await limit.onIdle();
    if (failure !== undefined && !signal.aborted) throw this.#explain(failure);
  }

  /** A refused join says what to do; when the pod ranges ran out, how large a cluster CIDR these nodes need. */
  #explain(err: unknown): unknown {
    const cause = err instanceof StartupError ? err.cause : err;
    if (cause instanceof ApiError && cause.details.causes?.some((c) => c.reason === POD_CIDR_RANGE_FULL)) {
      const count = this.#o.names.length;
      const bits = clusterCIDRBitsFor(count);
      return new StartupError(
        `${message(err)} (${count} fake nodes need a /24 each: start the master with --cluster-cidr of /${bits} or larger, e.g. 10.128.0.0/9)`,
        { cause: err },
      );
    }
    return err;
  }

  async #register(name: string, signal: AbortSignal): Promise<FakeNode> {
    const credential = this.#o.obtainCredential
      ? await this.#o.obtainCredential(name, signal)
      : await obtainNodeCredential({
          server: this.#o.server,
          nodeName: name,
          joinToken: this.#o.joinToken,
          dataDir: join(this.#o.dataDir, 'fake-nodes', name),
          registration: { labels: { [FAKE_NODE_LABEL]: 'true', ...this.#o.labels }, taints: this.#o.taints },
          signal,
          log: this.#log,
        });
    this.#agent ??=
      new URL(this.#o.server).protocol === 'https:'
        ? new https.Agent({ keepAlive: true, maxSockets: this.#maxSockets, ca: credential.ca })
        : new http.Agent({ keepAlive: true, maxSockets: this.#maxSockets });
    const client = new ApiClient({ server: this.#o.server, token: credential.token, timeoutMs: 15_000, agent: this.#agent });
    const provider = new FakeProvider({ recordCalls: false, now: this.#now, info: fakeNodeInfo(this.#o.capacity) });
    const sync = new PodSync({
      provider,
      api: podApiFor(client),
      events: noEvents,
      probes: passingProbes,
      nodeIP: this.#o.nodeIP,
      podCIDR: credential.podCIDR,
      now: () => this.#now().getTime(),
      log: this.#log,
    });
    const lease = this.#o.leases === false ? undefined : new NodeLeaseRenewer({ client, nodeName: name });
    const node: FakeNode = { name, credential, client, provider, sync, lease, missed: false, heartbeating: false };
    try {
      const registered = (await client.patch(
        nodeKind,
        { name },
        nodeMetaPatch({ nodeName: name, architecture: 'amd64', labels: { [FAKE_NODE_LABEL]: 'true', ...this.#o.labels } }),
      )) as Node;
      node.lastStatus = registered.status;
      if (lease) lease.nodeUid = registered.metadata.uid;
      await this.#heartbeat(node);
    } catch (err) {
      client.close();
      throw new StartupError(`fake node ${name} could not register: ${message(err)}`, { cause: err });
    }
    return node;
  }

  /**
   * One heartbeat, as NodeAgent.heartbeat: the Lease renewed, the status written when it changed,
   * when the last write is older than the report frequency, or when the Lease could not be renewed.
   * Unlike a real kubelet a fake node reads its Node only after a failed write (nothing else
   * changes it but the master marking it Unknown, which needs missed heartbeats): 1,000 reads
   * every 10 s would cost the API more than the writes saved.
   */
  async #heartbeat(node: FakeNode): Promise<void> {
    const now = this.#now();
    let leaseError: unknown;
    if (node.lease) {
      try {
        await node.lease.renew(now);
      } catch (err) {
        leaseError = err;
      }
    }
    if (node.missed) node.lastStatus = ((await node.client.get(nodeKind, { name: node.name })) as Node).status;
    const status = nodeStatus({
      info: fakeNodeInfo(this.#o.capacity),
      nodeIP: this.#o.nodeIP,
      hostname: node.name,
      kubeletPort: this.#o.kubeletPort,
      now,
      previous: node.lastStatus,
      maxPods: this.#o.capacity.pods,
      reservedMemoryBytes: 0,
    });
    const report =
      leaseError !== undefined ||
      shouldReportStatus({
        stored: node.lastStatus,
        computed: status,
        lastReportAt: node.lastReportAt,
        now: now.getTime(),
        leases: node.lease !== undefined,
        reportFrequencyMs: this.#o.statusReportFrequencyMs,
      });
    if (report) {
      try {
        const answer = (await node.client.patch(nodeKind, { name: node.name }, { status }, { subresource: 'status' })) as Node;
        node.lastStatus = answer.status;
        node.lastReportAt = now.getTime();
        node.missed = false;
      } catch (err) {
        node.missed = true;
        throw leaseError ?? err;
      }
    }
    if (leaseError !== undefined) {
      // The next heartbeat reads the Node: the master may mark it Unknown meanwhile.
      node.missed = true;
      throw leaseError;
    }
  }

  /** Every node's heartbeat once per interval, spread over it, with bounded concurrency; failures are summed up once per round. */
  async #heartbeats(signal: AbortSignal): Promise<void> {
    const { names } = this.#o;
    const interval = this.#o.heartbeatIntervalMs ?? HEARTBEAT_INTERVAL_MS;
    const { tickMs, batches } = heartbeatBatches(names.length, interval);
    const limit = new PQueue({ concurrency: this.#o.requestConcurrency ?? 16 });
    let round = 0;
    while (!signal.aborted) {
      const start = Date.now();
      let failed = 0;
      let skipped = 0;
      let firstError = '';
      for (let t = 0; t < batches.length && !signal.aborted; t++) {
        // The first round starts one interval after registration (which posted a status already).
        await abortableDelay(Math.max(0, start + (t + 1) * tickMs - Date.now()), signal);
        for (const i of batches[t]!) {
          const node = this.#nodes.get(names[i]!);
          if (!node) continue;
          // Still posting the last one (the API is slow): do not pile up another.
          if (node.heartbeating) {
            skipped++;
            continue;
          }
          node.heartbeating = true;
          void limit.add(async () => {
            try {
              if (!signal.aborted) await this.#heartbeat(node);
            } catch (err) {
              if (err instanceof UnauthorizedError && this.#nodes.get(node.name) === node) {
                // Its credential was revoked: the Node was deleted. A real worker would have to join again; a fake one just ends.
                this.#nodes.delete(node.name);
                this.#log(`fake nodes: node ${node.name}'s credential was refused (its Node was deleted?); no longer hosting it`);
                return;
              }
              failed++;
              firstError ||= `${node.name}: ${message(err)}`;
            } finally {
              node.heartbeating = false;
            }
          });
        }
      }
      round++;
      if (failed > 0 || skipped > 0) {
        this.#log(
          `fake nodes: heartbeat round ${round}: ${failed} failed${firstError ? ` (first: ${firstError})` : ''}, ${skipped} skipped while the previous one was still in flight`,
        );
      }
    }
    limit.clear();
    await limit.onIdle();
  }

  /** Looks at every hosted pod again now and then, and drops what the fake runtimes hold for pods the API no longer has. */
  async #resync(informer: Informer<Pod>, signal: AbortSignal): Promise<void> {
    const interval = this.#o.resyncIntervalMs ?? FAKE_RESYNC_INTERVAL_MS;
    for (;;) {
      await abortableDelay(interval, signal);
      if (signal.aborted) return;
      for (const node of this.#nodes.values()) {
        // The node's own pods, from the index (a pod's node never changes, so another node's cannot be running here), read once its runtime has been listed.
        const podsOf = () => informer.byIndex(NODE_NAME_INDEX, node.name);
        try {
          await node.sync.removeOrphans(() => new Set(podsOf().map((p) => p.metadata.uid!)));
        } catch (err) {
          this.#log(`fake nodes: sweeping node ${node.name} failed: ${message(err)}`);
        }
        for (const pod of podsOf()) this.#queue?.add(objectKey(pod));
      }
    }
  }
}
