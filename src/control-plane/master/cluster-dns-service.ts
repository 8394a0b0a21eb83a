// The master's own Service for cluster DNS: kube-system/kube-dns at the range's tenth address, made at start if missing (node-local DNS servers answer behind it; see the DNS contract).
import { serviceKind, type Service } from '../../core/api/service.js';
import { AlreadyExistsError, InvalidError, NotFoundError } from '../../core/errors.js';
import type { ObjectService } from '../api-server/object-service.js';
import { DNS_SERVICE, dnsServiceIP } from '../api-server/service-allocation.js';

export interface ClusterDnsServiceOptions {
  service: ObjectService;
  serviceCIDR: string;
  log?: (message: string) => void;
}

/** The Service as the master creates it: no selector, so no Endpoints (each node's proxy sends it to that node's DNS server). */
export function clusterDnsService(serviceCIDR: string): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: DNS_SERVICE.name, namespace: DNS_SERVICE.namespace, labels: { 'k8s-app': 'kube-dns', 'kubernetes.io/name': 'CoreDNS' } },
    spec: {
      type: 'ClusterIP',
      clusterIP: dnsServiceIP(serviceCIDR),
      ports: [
        { name: 'dns', port: 53, protocol: 'UDP', targetPort: 53 },
        { name: 'dns-tcp', port: 53, protocol: 'TCP', targetPort: 53 },
      ],
    },
  };
}

/**
 * Creates kube-system/kube-dns if it does not exist; one that exists is left as it is (the
 * admin's to change). A master whose address is held otherwise (a store from before
 * allocation records) says so and goes on: DNS by name is lost, nothing else.
 */
export async function ensureClusterDnsService(options: ClusterDnsServiceOptions): Promise<Service | undefined> {
  const { service } = options;
  try {
    return (await service.get(serviceKind, DNS_SERVICE.namespace, DNS_SERVICE.name)) as Service;
  } catch (err) {
    if (!(err instanceof NotFoundError)) throw err;
  }
  try {
    const created = (await service.create(serviceKind, DNS_SERVICE.namespace, clusterDnsService(options.serviceCIDR))) as Service;
    options.log?.(`created service ${DNS_SERVICE.namespace}/${DNS_SERVICE.name} at ${created.spec.clusterIP}`);
    return created;
  } catch (err) {
    if (err instanceof InvalidError) {
      options.log?.(`warning: cannot create service ${DNS_SERVICE.namespace}/${DNS_SERVICE.name}: ${err.message}`);
      return undefined;
    }
    if (!(err instanceof AlreadyExistsError)) throw err;
    return (await service.get(serviceKind, DNS_SERVICE.namespace, DNS_SERVICE.name)) as Service;
  }
}
