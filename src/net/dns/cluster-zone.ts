// The names the cluster DNS answers, built from Services, Endpoints and DNS objects, and the pure lookup of one name in them.
import type { Dns } from '../../core/api/dns.js';
import type { Endpoints } from '../../core/api/endpoints.js';
import type { Service } from '../../core/api/service.js';

export const DEFAULT_CLUSTER_DOMAIN = 'cluster.local';
/** The Service that fronts the gateway: every DNS object's host resolves to its ClusterIP. */
export const GATEWAY_SERVICE = { namespace: 'kube-system', name: 'minik8s-gateway' } as const;

const IPV4 = /^((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

/** An immutable snapshot: rebuilt whole when an object changes, read by every query meanwhile. */
export interface ClusterZone {
  /** e.g. cluster.local (lower case, no trailing dot). */
  domain: string;
  /** Fully qualified name (lower case, no trailing dot) -> its IPv4 addresses; an empty list is a name with no address yet. */
  names: ReadonlyMap<string, readonly string[]>;
  /** Names under the domain that exist only as parents of others (`svc.cluster.local`): NODATA, not NXDOMAIN. */
  parents: ReadonlySet<string>;
  /** False until the caches behind it have listed once: until then names under the domain are not denied (SERVFAIL). */
  synced: boolean;
}

export interface ZoneSources {
  domain?: string;
  services: readonly Service[];
  /** For headless services (clusterIP None): their ready addresses. Optional: without it headless names have no address. */
  endpoints?: readonly Endpoints[];
  dnses?: readonly Dns[];
  synced?: boolean;
}

/** Lower case, without the trailing dot: how names are compared (DNS names are case-insensitive). */
export function normalizeName(name: string): string {
  return name.toLowerCase().replace(/\.+$/, '');
}

function isUnder(name: string, domain: string): boolean {
  return name === domain || name.endsWith(`.${domain}`);
}

/** Builds the snapshot: `SERVICE.NAMESPACE.svc.DOMAIN` for each service, and each DNS object's host -> the gateway's ClusterIP. */
export function buildClusterZone(sources: ZoneSources): ClusterZone {
  const domain = normalizeName(sources.domain ?? DEFAULT_CLUSTER_DOMAIN);
  const names = new Map<string, string[]>();
  const endpointsByKey = new Map((sources.endpoints ?? []).map((e) => [`${e.metadata.namespace}/${e.metadata.name}`, e]));
  let gatewayIP: string | undefined;
  for (const svc of sources.services) {
    const { name, namespace } = svc.metadata;
    if (!name || !namespace) continue;
    const clusterIP = svc.spec.clusterIP ?? '';
    if (namespace === GATEWAY_SERVICE.namespace && name === GATEWAY_SERVICE.name && IPV4.test(clusterIP)) gatewayIP = clusterIP;
    let addresses: string[] = [];
    if (IPV4.test(clusterIP)) addresses = [clusterIP];
    else if (clusterIP === 'None') {
      const ips = (endpointsByKey.get(`${namespace}/${name}`)?.subsets ?? []).flatMap((s) => (s.addresses ?? []).map((a) => a.ip));
      addresses = [...new Set(ips.filter((ip) => IPV4.test(ip)))].sort();
    }
    // A service whose ClusterIP is not allocated yet still exists: NODATA rather than a cached NXDOMAIN.
    names.set(`${name}.${namespace}.svc.${domain}`, addresses);
  }
  for (const dns of sources.dnses ?? []) {
    const host = normalizeName(dns.spec.host);
    // A host inside the cluster domain must not shadow a service name.
    if (isUnder(host, domain) && names.has(host)) continue;
    names.set(host, gatewayIP ? [gatewayIP] : []);
  }
  const parents = new Set<string>([domain, `svc.${domain}`, `pod.${domain}`]);
  for (const name of names.keys()) {
    if (!isUnder(name, domain)) continue;
    for (let rest = name.slice(name.indexOf('.') + 1); rest !== domain && isUnder(rest, domain); rest = rest.slice(rest.indexOf('.') + 1)) parents.add(rest);
  }
  return { domain, names, parents, synced: sources.synced ?? true };
}

export type LookupResult =
  /** The name is ours and has these addresses (none: NODATA). `zone` names the SOA for negative answers. */
  | { kind: 'found'; addresses: readonly string[]; zone: string }
  /** Under our domain but no such name. */
  | { kind: 'nxdomain'; zone: string }
  /** Under our domain, but the caches have not listed yet: do not deny what may exist. */
  | { kind: 'unavailable' }
  /** Not ours: ask the upstream resolvers. */
  | { kind: 'forward' };

/** `1-2-3-4.NAMESPACE.pod.DOMAIN` -> 1.2.3.4, as Kubernetes' pod A records. */
function podRecord(name: string, domain: string): string | undefined {
  const m = /^(\d{1,3})-(\d{1,3})-(\d{1,3})-(\d{1,3})\.[a-z0-9]([-a-z0-9]*[a-z0-9])?\.pod\./.exec(name);
  if (!m || name !== `${m[0]}${domain}`) return undefined;
  const ip = m.slice(1, 5).join('.');
  return IPV4.test(ip) ? ip : undefined;
}

/** Which addresses a name has; the record type is the caller's concern (only A records carry them). */
export function lookupName(zone: ClusterZone, rawName: string): LookupResult {
  const name = normalizeName(rawName);
  const addresses = zone.names.get(name);
  const under = isUnder(name, zone.domain);
  if (addresses) return { kind: 'found', addresses, zone: under ? zone.domain : name };
  if (!under) return { kind: 'forward' };
  if (!zone.synced) return { kind: 'unavailable' };
  const pod = podRecord(name, zone.domain);
  if (pod) return { kind: 'found', addresses: [pod], zone: zone.domain };
  if (zone.parents.has(name)) return { kind: 'found', addresses: [], zone: zone.domain };
  return { kind: 'nxdomain', zone: zone.domain };
}
