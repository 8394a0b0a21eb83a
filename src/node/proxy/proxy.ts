// The worker's service proxy: watches Services and Endpoints and keeps this node's iptables service rules in step, kube-proxy iptables-mode style.
import { endpointsKind, type Endpoints } from '../../core/api/endpoints.js';
import { serviceKind, type Service } from '../../core/api/service.js';
import { runController, type ReconcileResult } from '../../core/controller/controller.js';
import type { Informer } from '../../core/controller/informer.js';
import type { InformerFactory } from '../../core/controller/informer-factory.js';
import { WorkQueue } from '../../core/controller/work-queue.js';
import { ensureHairpin } from '../../net/bridge-hairpin.js';
import { runNetCommand, type NetRunner } from '../../net/net-command.js';
import { podNetworkConfig } from '../../core/api/ipv4.js';
import { syncProxyIptables, type ProxyApplyState } from '../../net/proxy/proxy-iptables.js';
import { renderProxyRules, type LocalServiceEndpoint } from '../../net/proxy/proxy-rules.js';

/** Synced at least this often even when nothing changes: someone may have removed a jump, or Docker put its rules before ours (a full sync, rewriting every chain, comes every FULL_RESYNC_MS). */
export const PROXY_RESYNC_MS = 30_000;
/** At most one sync this often: a burst of Endpoints changes (a rollout) becomes one restore. */
export const PROXY_MIN_SYNC_MS = 250;

/** The cluster DNS service: on every node its ClusterIP leads to that node's own DNS server. */
export const KUBE_DNS_SERVICE = 'kube-system/kube-dns';

/** kube-dns's endpoints on a node whose DNS server listens on its pod bridge's gateway (the .1 of the pod CIDR), port 53 over UDP and TCP. */
export function nodeLocalDnsEndpoints(podCIDR: string): Record<string, LocalServiceEndpoint[]> {
  return { [KUBE_DNS_SERVICE]: [{ ip: podNetworkConfig(podCIDR).gateway, port: 53 }] };
}

/** The one key of the proxy's queue: every change leads to one whole sync. */
const KEY = 'rules';

export interface ServiceProxyOptions {
  /** The worker's shared informers: Services and Endpoints, watched once for the proxy and the node DNS; the process starts them. */
  informers: InformerFactory;
  nodeName: string;
  clusterCIDR: string;
  /** "namespace/name" -> endpoints this node serves itself (kube-system/kube-dns -> the node-local DNS server). */
  localServiceEndpoints?: Readonly<Record<string, readonly LocalServiceEndpoint[]>>;
  /** The pod bridge: its ports get hairpin mode at every sync, so that a pod reaches itself through a service. */
  bridgeName?: string;
  minSyncMs?: number;
  resyncMs?: number;
  /** Runs iptables-save and iptables-restore (default: the real tools). */
  run?: NetRunner;
  log?: (message: string) => void;
}

export class ServiceProxy {
  readonly services: Informer<Service>;
  readonly endpoints: Informer<Endpoints>;
  readonly queue = new WorkQueue({ baseDelayMs: 500, maxDelayMs: 30_000 });
  readonly #o: ServiceProxyOptions;
  readonly #run: NetRunner;
  readonly #log: (message: string) => void;
  readonly #state: ProxyApplyState = { applied: {} };
  #lastSyncAt = -Infinity;
  /** Completed syncs (restores or not): tests wait on it. */
  syncs = 0;

  constructor(options: ServiceProxyOptions) {
    this.#o = options;
    this.#run = options.run ?? runNetCommand;
    this.#log = options.log ?? (() => {});
    this.services = options.informers.informer<Service>(serviceKind);
    this.endpoints = options.informers.informer<Endpoints>(endpointsKind);
    const enqueue = () => this.queue.add(KEY);
    const onAnyChange = { onAdd: enqueue, onUpdate: enqueue, onDelete: enqueue };
    this.services.addHandlers(onAnyChange);
    this.endpoints.addHandlers(onAnyChange);
  }

  /** Fails at once where iptables cannot work (not installed, no permission), so the worker stops with the reason. */
  async check(): Promise<void> {
    await this.#run({ tool: 'iptables-save', args: ['-t', 'nat'] });
  }

  /**
   * Until `signal` aborts. The first sync waits for both caches: rules from a previous run stay as
   * they were while the master cannot be reached, and later failures keep the last rules applied.
   */
  async start(signal: AbortSignal): Promise<void> {
    this.queue.add(KEY);
    await runController({ name: 'proxy', queue: this.queue, informers: [this.services, this.endpoints], reconcile: () => this.sync(), log: this.#log }, signal);
  }

  /** One whole sync, unless the last one was too recent (then it comes back when it may run). */
  async sync(): Promise<ReconcileResult> {
    const minSyncMs = this.#o.minSyncMs ?? PROXY_MIN_SYNC_MS;
    const wait = this.#lastSyncAt + minSyncMs - performance.now();
    if (wait > 0) return { requeueAfterMs: Math.ceil(wait) };
    this.#lastSyncAt = performance.now();
    const result = await syncProxyIptables(
      this.#run,
      (existing) =>
        renderProxyRules({
          services: this.services.list(),
          endpoints: this.endpoints.list(),
          clusterCIDR: this.#o.clusterCIDR,
          localServiceEndpoints: this.#o.localServiceEndpoints,
          existingChains: existing,
        }),
      this.#state,
    );
    this.syncs++;
    // After the rules: an endpoint's pod is on the bridge by the time its Endpoints change brings us here.
    if (this.#o.bridgeName) {
      const hairpin = await ensureHairpin(this.#run, this.#o.bridgeName);
      if (hairpin.length) this.#log(`proxy: hairpin mode on for ${hairpin.join(', ')} of ${this.#o.bridgeName}`);
    }
    if (result.restored.length) {
      const s = result.rules.stats;
      const ms = Math.round(result.readMs + result.renderMs + result.restoreMs);
      this.#log(
        `proxy: applied ${result.restored.join(' and ')} rules (${result.reasons.join('; ')}; ${result.chainsWritten} chains written): ${s.services} services, ${s.servicePorts} ports, ${s.endpoints} endpoints, ${s.withoutEndpoints} ports without endpoints, ${s.staleChains} stale chains removed, in ${ms} ms (read ${Math.round(result.readMs)}, render ${Math.round(result.renderMs)}, restore ${Math.round(result.restoreMs)})`,
      );
    }
    return { requeueAfterMs: this.#o.resyncMs ?? PROXY_RESYNC_MS };
  }
}
