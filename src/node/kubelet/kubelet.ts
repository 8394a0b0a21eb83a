// The kubelet: watches the pods bound to its node and keeps each in step through the pod provider; serves logs, exec and stats.
import { secretKind, type Secret } from '../../core/api/secret.js';
import { configMapKind, type ConfigMap } from '../../core/api/configmap.js';
import { eventKind } from '../../core/api/event.js';
import { podKind, type Pod, type PodStatus } from '../../core/api/pod.js';
import type { ApiClient } from '../../core/client/api-client.js';
import type { Client } from '../../core/client/client.js';
import { runController, WorkQueue } from '../../core/controller/controller.js';
import { objectKey, type Informer } from '../../core/controller/informer.js';
import type { InformerFactory } from '../../core/controller/informer-factory.js';
import { NotFoundError } from '../../core/errors.js';
import type { PodProvider } from '../../runtime/provider.js';
import { sleep, systemClock, type Clock } from './clock.js';
import { ConfigVolumes } from './config-volumes.js';
import { EventRecorder } from './event-recorder.js';
import { startKubeletServer } from './kubelet-server.js';
import { LifecycleHooks } from './lifecycle-hooks.js';
import { MIN_GRACE_SECONDS, PodSync, type PodApi } from './pod-sync.js';
import { ProbeManager } from './probe-manager.js';
import { tokenReviewAuthenticator } from './token-review.js';

export interface KubeletOptions {
  /** Holds the node's credential; the kubelet API's TokenReviews need its raw requests. */
  client: ApiClient;
  /** The worker's shared informers: the kubelet's is the pods bound to its node (a field selector), which the process starts. */
  informers: InformerFactory;
  nodeName: string;
  nodeIP: string;
  provider: PodProvider;
  /** The node's pod subnet (from the Node object). */
  podCIDR?: string;
  /** Where the kubelet API (logs, exec, stats) listens; port 0 picks a free one. */
  address: string;
  port: number;
  /** Serve the kubelet API over HTTPS with the node's certificate (from the join) and the cluster CA. */
  tls?: { cert: string; key: string; ca: string };
  /** The runtime's root dir (ROOT/pods/<uid>/volumes/<name>): with it the kubelet writes configMap, secret, downwardAPI and projected volumes there. */
  volumeRoot?: string;
  /** How often every pod is looked at again and orphans are swept (default 10 s). */
  resyncIntervalMs?: number;
  workers?: number;
  /** Drives restart backoff, probe periods and the resync (default: the system clock); tests pass a ManualClock. */
  clock?: Clock;
  log?: (message: string) => void;
  /** Whole-machine usage for the stats Summary; without it the node's figures are the sum of its pods'. */
  nodeStats?: () => Promise<{ cpuCores: number; memoryBytes: number }>;
  /** PodSyncOptions.preparePod: the service account token volumes (service-account-volume.ts). */
  preparePod?: (pod: Pod) => Promise<Pod>;
}

/** Status writes are merge patches; a key the kubelet no longer reports is removed with null. */
export function statusPatch(before: PodStatus | undefined, after: PodStatus): Record<string, unknown> {
  const status: Record<string, unknown> = { ...after };
  for (const k of Object.keys(before ?? {})) if (!(k in after)) status[k] = null;
  return { status };
}

/** Pod status writes and final deletes with the node's credential (fake nodes share it: src/node/fake-nodes/fake-nodes.ts). */
export function podApiFor(client: Client): PodApi {
  return {
    async updateStatus(pod, status) {
      try {
        await client.patch(podKind, { namespace: pod.metadata.namespace, name: pod.metadata.name! }, statusPatch(pod.status, status), {
          subresource: 'status',
        });
      } catch (err) {
        if (!(err instanceof NotFoundError)) throw err;
      }
    },
    async readSecret(namespace, name) {
      try {
        return ((await client.get(secretKind, { namespace, name })) as Secret).data ?? {};
      } catch (err) {
        if (err instanceof NotFoundError) return undefined;
        throw err;
      }
    },
    async readConfigMap(namespace, name) {
      try {
        return (await client.get(configMapKind, { namespace, name })) as ConfigMap;
      } catch (err) {
        if (err instanceof NotFoundError) return undefined;
        throw err;
      }
    },
    async deletePod(pod) {
      try {
        await client.delete(
          podKind,
          { namespace: pod.metadata.namespace, name: pod.metadata.name! },
          { gracePeriodSeconds: 0, preconditions: { uid: pod.metadata.uid } },
        );
      } catch (err) {
        if (!(err instanceof NotFoundError)) throw err;
      }
    },
  };
}

export class Kubelet {
  readonly #o: KubeletOptions;
  /** Pods bound to this node, keyed namespace/name. */
  readonly #pods: Informer<Pod>;
  readonly #queue = new WorkQueue();
  #port: number | undefined;

  constructor(options: KubeletOptions) {
    this.#o = options;
    // Asked for while being built, as the factory wants, so that no event comes before the handlers.
    this.#pods = options.informers.informer<Pod>(podKind, { fieldSelector: `spec.nodeName=${options.nodeName}` });
    const enqueue = (pod: Pod) => this.#queue.add(objectKey(pod));
    this.#pods.addHandlers({ onAdd: enqueue, onUpdate: (_old, pod) => enqueue(pod), onDelete: enqueue });
  }

  /** The port the kubelet API listens on, once started. */
  get port(): number | undefined {
    return this.#port;
  }

  /** Resolves once no pod is queued or being synced (timed requeues do not count): how tests see a sync settle. */
  async whenIdle(): Promise<void> {
    await this.#queue.whenIdle();
  }

  async start(signal: AbortSignal): Promise<void> {
    const { client, nodeName, provider } = this.#o;
    const clock = this.#o.clock ?? systemClock;
    const log = this.#o.log ?? (() => {});
    const informer = this.#pods;
    const queue = this.#queue;
    const keyByUid = new Map<string, string>();
    const uidByKey = new Map<string, string>();
    const enqueue = (pod: Pod) => queue.add(objectKey(pod));
    const enqueueUid = (uid: string) => {
      const key = keyByUid.get(uid);
      if (key) queue.add(key);
    };
    provider.onPodChange(enqueueUid);

    const events = new EventRecorder({
      component: 'kubelet',
      host: nodeName,
      now: () => clock.now(),
      log,
      sink: {
        create: async (event) => {
          await client.create(eventKind, event, { namespace: (event.metadata as { namespace: string }).namespace });
        },
        update: async (namespace, name, patch) => {
          await client.patch(eventKind, { namespace, name }, patch);
        },
      },
    });
    const probes = new ProbeManager({
      provider,
      onChange: enqueueUid,
      onFailure: (pod, container, message) => events.record({ pod, type: 'Warning', reason: 'Unhealthy', message, fieldPath: `spec.containers{${container}}` }),
      clock,
      log,
    });
    const hooks = new LifecycleHooks({ provider, clock, signal, log });
    const api = podApiFor(client);
    const sync = new PodSync({
      provider,
      api,
      ...(this.#o.volumeRoot ? { volumes: new ConfigVolumes({ rootDir: this.#o.volumeRoot, reader: api }) } : {}),
      events,
      probes,
      hooks,
      preparePod: this.#o.preparePod,
      nodeIP: this.#o.nodeIP,
      podCIDR: this.#o.podCIDR,
      now: () => clock.now(),
      log,
    });

    // Timed requeues (a backoff ends) run on the kubelet's clock rather than the queue's own
    // timers; as with WorkQueue.addAfter, the latest request for a key replaces an earlier one.
    const requeueTimers = new Map<string, () => void>();
    const requeueAfter = (key: string, ms: number) => {
      requeueTimers.get(key)?.();
      requeueTimers.delete(key);
      if (ms <= 0) return queue.add(key);
      requeueTimers.set(
        key,
        clock.setTimer(ms, () => {
          requeueTimers.delete(key);
          queue.add(key);
        }),
      );
    };
    signal.addEventListener(
      'abort',
      () => {
        for (const cancel of requeueTimers.values()) cancel();
        requeueTimers.clear();
      },
      { once: true },
    );

    const reconcile = async (key: string) => {
      const pod = informer.get(key);
      const lastUid = uidByKey.get(key);
      if (lastUid && lastUid !== pod?.metadata.uid) {
        // The pod was deleted (or replaced by a new one of the same name) behind our back.
        const [namespace, name] = key.split('/') as [string, string];
        await provider.deletePod({ uid: lastUid, namespace, name }, { gracePeriodSeconds: MIN_GRACE_SECONDS });
        probes.forgetPod(lastUid);
        keyByUid.delete(lastUid);
        uidByKey.delete(key);
      }
      if (!pod) return;
      keyByUid.set(pod.metadata.uid!, key);
      uidByKey.set(key, pod.metadata.uid!);
      const result = await sync.sync(pod);
      if (result.requeueAt !== undefined && !signal.aborted) requeueAfter(key, result.requeueAt - clock.now());
    };

    const server = await startKubeletServer({
      provider,
      nodeName,
      findPod: (namespace: string, name: string) => informer.get(`${namespace}/${name}`),
      authenticate: tokenReviewAuthenticator(client, { cacheTtlMs: 10_000 }),
      ...(this.#o.nodeStats ? { nodeStats: this.#o.nodeStats } : {}),
      address: this.#o.address,
      port: this.#o.port,
      ...(this.#o.tls ? { tls: this.#o.tls } : {}),
      signal,
    });
    this.#port = server.port;

    const resync = async () => {
      const aborted = new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      await Promise.race([informer.whenSynced(), aborted]);
      const interval = this.#o.resyncIntervalMs ?? 10_000;
      while (!signal.aborted) {
        try {
          await sync.removeOrphans(() => new Set(informer.list().map((p) => p.metadata.uid!)));
        } catch (err) {
          log(`kubelet: sweeping orphaned containers failed: ${err instanceof Error ? err.message : String(err)}`);
        }
        for (const pod of informer.list()) enqueue(pod);
        await sleep(clock, interval, signal);
      }
    };

    log(`kubelet: node ${nodeName} syncing pods; API on port ${server.port}`);
    try {
      await Promise.all([
        runController({ name: 'kubelet', queue, informers: [informer], reconcile, workers: this.#o.workers ?? 8, log }, signal),
        resync(),
        server.closed,
      ]);
    } finally {
      probes.stopAll();
    }
  }
}
