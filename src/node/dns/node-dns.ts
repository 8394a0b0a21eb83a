// The worker's node-local cluster DNS: informers on Services, Endpoints and DNS objects feed the zone its DNS server answers from.
import { readFileSync, statSync } from 'node:fs';
import { dnsKind, type Dns } from '../../core/api/dns.js';
import { endpointsKind, type Endpoints } from '../../core/api/endpoints.js';
import { serviceKind, type Service } from '../../core/api/service.js';
import type { Informer } from '../../core/controller/informer.js';
import type { InformerFactory } from '../../core/controller/informer-factory.js';
import { buildClusterZone, DEFAULT_CLUSTER_DOMAIN, type ClusterZone } from '../../net/dns/cluster-zone.js';
import { DEFAULT_DNS_PORT, DnsServer } from '../../net/dns/dns-server.js';
import { parseNameservers, upstreamsFrom, type Upstream } from '../../net/dns/resolv-conf.js';

export const DEFAULT_CLUSTER_DNS_IP = '10.96.0.10';
/** resolv.conf is looked at again at most this often (a DHCP client may rewrite it). */
const RESOLV_CONF_CHECK_MS = 5000;

export interface NodeDnsOptions {
  /** The worker's shared informers: Services and Endpoints (watched once for the DNS and the proxy) and DNS objects; the process starts them. */
  informers: InformerFactory;
  /** Where it listens: the node's pod-bridge gateway address (pods and the node reach it; other resolvers on the node keep their port 53). */
  address: string;
  port?: number;
  domain?: string;
  /** The cluster DNS service address, never forwarded to (the node may itself resolve through it: that would loop). */
  clusterDNS?: string;
  /** The node's resolvers (default /etc/resolv.conf). */
  resolvConfPath?: string;
  /** Resolvers to forward to instead of resolv.conf's (the worker's --dns-upstream). */
  upstreams?: readonly Upstream[];
  log?: (message: string) => void;
}

export class NodeDns {
  readonly services: Informer<Service>;
  readonly endpoints: Informer<Endpoints>;
  readonly dnses: Informer<Dns>;
  readonly server: DnsServer;
  readonly #o: NodeDnsOptions;
  readonly #log: (message: string) => void;
  #zone: ClusterZone | undefined;
  #upstreams: Upstream[] = [];
  #resolvConf = { checkedAt: -Infinity, mtimeMs: -1 };

  constructor(options: NodeDnsOptions) {
    this.#o = options;
    this.#log = options.log ?? (() => {});
    const { informers } = options;
    this.services = informers.informer<Service>(serviceKind);
    this.endpoints = informers.informer<Endpoints>(endpointsKind);
    this.dnses = informers.informer<Dns>(dnsKind);
    // The zone is rebuilt lazily, at the next query after a change: bursts of events cost one rebuild.
    const invalidate = () => {
      this.#zone = undefined;
    };
    const onAnyChange = { onAdd: invalidate, onUpdate: invalidate, onDelete: invalidate };
    this.services.addHandlers(onAnyChange);
    this.dnses.addHandlers(onAnyChange);
    // Endpoints matter only for headless services; their churn (every pod readiness change) should not rebuild the zone.
    this.endpoints.addHandlers({
      onAdd: (e) => {
        if (this.#isHeadless(e)) invalidate();
      },
      onUpdate: (_o, e) => {
        if (this.#isHeadless(e)) invalidate();
      },
      onDelete: (e) => {
        if (this.#isHeadless(e)) invalidate();
      },
    });
    this.server = new DnsServer({
      address: options.address,
      port: options.port ?? DEFAULT_DNS_PORT,
      zone: () => this.zone(),
      upstreams: () => this.upstreams(),
      log: this.#log,
    });
  }

  #isHeadless(e: Endpoints): boolean {
    return this.services.get(`${e.metadata.namespace}/${e.metadata.name}`)?.spec.clusterIP === 'None';
  }

  /** The current snapshot; kept while the master is away (the informers keep their caches). */
  zone(): ClusterZone {
    if (this.#zone) return this.#zone;
    const zone = buildClusterZone({
      domain: this.#o.domain ?? DEFAULT_CLUSTER_DOMAIN,
      services: this.services.list(),
      endpoints: this.endpoints.list().filter((e) => this.#isHeadless(e)),
      dnses: this.dnses.list(),
      // Endpoints only refine headless names: the zone may answer before they are listed.
      synced: this.services.hasSynced && this.dnses.hasSynced,
    });
    // A zone built before every first list is never kept: a first list that brings no object (no DNS objects yet)
    // emits no event to invalidate it, and the server would answer SERVFAIL until some later change.
    if (zone.synced) this.#zone = zone;
    return zone;
  }

  /** The node's resolvers from resolv.conf, re-read when the file changes. */
  upstreams(): readonly Upstream[] {
    if (this.#o.upstreams) return this.#o.upstreams;
    const now = Date.now();
    if (now - this.#resolvConf.checkedAt < RESOLV_CONF_CHECK_MS) return this.#upstreams;
    this.#resolvConf.checkedAt = now;
    const path = this.#o.resolvConfPath ?? '/etc/resolv.conf';
    try {
      const { mtimeMs } = statSync(path);
      if (mtimeMs === this.#resolvConf.mtimeMs) return this.#upstreams;
      this.#resolvConf.mtimeMs = mtimeMs;
      const exclude = [this.#o.address, this.#o.clusterDNS ?? DEFAULT_CLUSTER_DNS_IP];
      this.#upstreams = upstreamsFrom(parseNameservers(readFileSync(path, 'utf8')), { exclude });
      this.#log(`dns: forwarding other names to ${this.#upstreams.map((u) => u.address).join(', ') || `nobody (no usable nameserver in ${path})`}`);
    } catch (err) {
      if (this.#resolvConf.mtimeMs !== -2) this.#log(`dns: cannot read ${path}: ${(err as Error).message}; not forwarding`);
      this.#resolvConf.mtimeMs = -2;
      this.#upstreams = [];
    }
    return this.#upstreams;
  }

  /** Binds the sockets: run before the kubelet so a port or address problem stops the worker with the reason. */
  async listen(): Promise<number> {
    const port = await this.server.listen();
    this.#log(`dns: serving ${this.#o.domain ?? DEFAULT_CLUSTER_DOMAIN} on ${this.#o.address}:${port} (UDP and TCP)`);
    return port;
  }

  /** Serves until `signal` aborts; the zone follows the informers, which the process starts with the others. */
  async start(signal: AbortSignal): Promise<void> {
    await this.server.start(signal);
  }
}
