// The master's certificates under DATA_DIR/pki: the cluster CA, the API server's and the registry's serving certs, the admin's and the kubelet-client cert.
import { KUBELET_API_ADMIN_GROUP, KUBELET_CLIENT_USER_NAME } from '../../core/api/kubelet-client.js';
import { isIP } from 'node:net';
import { hostname, networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { type ClusterCa, clientProfile, type KeyPairPem, loadOrCreateCa, loadOrIssueCert, serverProfile, signCsr } from '../../core/pki/pki.js';
import { apiServiceIP } from '../api-server/service-allocation.js';

/** Names every in-cluster client may use for the API, as Kubernetes' serving cert carries them. */
const SERVICE_NAMES = ['kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local'];

export interface ClusterTls {
  ca: ClusterCa;
  /** The API server's serving certificate. */
  serving: KeyPairPem;
  /** CN=admin, O=system:masters: what admin.kubeconfig presents. */
  admin: KeyPairPem;
  /** CN=kube-apiserver-kubelet-client, O=system:kubelet-api-admin: how the master calls kubelets (never with the admin token). */
  kubeletClient: KeyPairPem;
  /** The image registry's serving certificate (DATA_DIR/pki/registry.crt and .key, which the registry reads). */
  registry: KeyPairPem & { certPath: string; keyPath: string };
}

/** The serving certificate's SANs: every address and name of this machine, the service names and IP, and the extras. */
export function servingSans(options: { serviceCIDR: string; extra?: readonly string[]; interfaces?: ReturnType<typeof networkInterfaces>; host?: string }): {
  dnsNames: string[];
  ipAddresses: string[];
} {
  const ips = new Set<string>(['127.0.0.1', apiServiceIP(options.serviceCIDR)]);
  const dns = new Set<string>(['localhost', ...SERVICE_NAMES]);
  const host = options.host ?? hostname();
  if (host) dns.add(host);
  for (const addresses of Object.values(options.interfaces ?? networkInterfaces())) {
    for (const a of addresses ?? []) {
      // Link-local IPv6 needs a zone to be reached; a certificate cannot name one.
      if (a.family === 'IPv6' && a.address.toLowerCase().startsWith('fe80')) continue;
      ips.add(a.address);
    }
  }
  for (const extra of options.extra ?? []) (isIP(extra) ? ips : dns).add(extra);
  return { dnsNames: [...dns].sort(), ipAddresses: [...ips].sort() };
}

/**
 * Loads or makes the CA (at the first start) and the master's certificates, reissuing the
 * serving one when this machine's addresses or --tls-san changed.
 */
export async function prepareClusterTls(options: {
  dataDir: string;
  serviceCIDR: string;
  tlsSans?: readonly string[];
  log?: (message: string) => void;
}): Promise<ClusterTls> {
  const dir = join(options.dataDir, 'pki');
  const ca = await loadOrCreateCa({ dir });
  const sans = servingSans({ serviceCIDR: options.serviceCIDR, extra: options.tlsSans });
  const serving = await loadOrIssueCert(ca, { dir, name: 'apiserver', ...serverProfile({ commonName: 'kube-apiserver', ...sans }) });
  // Said only when a certificate was replaced (addresses changed): a first start stays quiet.
  if (serving.replaced) options.log?.(`API server certificate reissued for ${[...sans.dnsNames, ...sans.ipAddresses].join(', ')}`);
  const admin = await loadOrIssueCert(ca, { dir, name: 'admin', ...clientProfile({ user: 'admin', groups: ['system:masters'] }) });
  const kubeletClient = await loadOrIssueCert(ca, {
    dir,
    name: 'apiserver-kubelet-client',
    // Not system:masters: the API server would take that certificate for an admin's.
    ...clientProfile({ user: KUBELET_CLIENT_USER_NAME, groups: [KUBELET_API_ADMIN_GROUP] }),
  });
  // Workers pull from the registry at the host they reach the API at: the same names and addresses.
  const registry = await loadOrIssueCert(ca, { dir, name: 'registry', ...serverProfile({ commonName: 'minik8s-registry', ...sans }) });
  if (registry.replaced) options.log?.(`registry certificate reissued for ${[...sans.dnsNames, ...sans.ipAddresses].join(', ')}`);
  return { ca, serving, admin, kubeletClient, registry };
}

/** A kubelet's serving certificate: DNS SAN = the node's name, whatever the request asked for. */
export function signKubeletCsr(ca: ClusterCa, nodeName: string, csrPem: string): Promise<string> {
  return signCsr(ca, csrPem, serverProfile({ commonName: `system:node:${nodeName}`, dnsNames: [nodeName] }));
}
