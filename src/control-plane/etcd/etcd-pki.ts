// etcd's own CA and certificates, laid out as kubeadm lays them out: DATA_DIR/pki/etcd/{ca,server,peer}.{crt,key} and the master's client cert DATA_DIR/pki/apiserver-etcd-client.{crt,key}.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadOrCreateCa, loadOrIssueCert } from '../../core/pki/pki.js';

/** PEM files etcd is started with. */
export interface EtcdServerTLSFiles {
  caFile: string;
  certFile: string;
  keyFile: string;
  peerCertFile: string;
  peerKeyFile: string;
}

/** What a client of the managed etcd shows and trusts (PEM). */
export interface EtcdClientTLS {
  ca: Buffer;
  cert: Buffer;
  key: Buffer;
  /** The name to check etcd's certificate for: it listens on 127.0.0.1, and TLS may not send an IP as the server name. */
  serverName: string;
}

export interface EtcdPki {
  server: EtcdServerTLSFiles;
  /** The master's client certificate (CN kube-apiserver-etcd-client), the only client etcd accepts besides its own peer. */
  client: EtcdClientTLS;
}

/** Subject of the master's etcd client certificate, kubeadm's name for it. */
export const ETCD_CLIENT_NAME = 'kube-apiserver-etcd-client';

/**
 * A CA of etcd's own, separate from the cluster CA (as kubeadm keeps it): a certificate the
 * cluster CA issues to a node or a user must never open etcd. etcd listens on loopback only,
 * so its certificates name 127.0.0.1 and localhost. Made at the first start, reused later
 * (and reissued by loadOrIssueCert when near expiry).
 */
export async function ensureEtcdPki(dataDir: string): Promise<EtcdPki> {
  const dir = join(dataDir, 'pki', 'etcd');
  const ca = await loadOrCreateCa({ dir, commonName: 'etcd-ca' });
  const loopback = { dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] };
  // etcd's server and peer certs are used both ways (it dials its own client URL for the gateway and its peers), as kubeadm issues them.
  const server = await loadOrIssueCert(ca, { dir, name: 'server', commonName: 'minik8s-etcd', ...loopback, usages: ['server', 'client'] });
  const peer = await loadOrIssueCert(ca, { dir, name: 'peer', commonName: 'minik8s-etcd', ...loopback, usages: ['server', 'client'] });
  const client = await loadOrIssueCert(ca, { dir: join(dataDir, 'pki'), name: 'apiserver-etcd-client', commonName: ETCD_CLIENT_NAME, usages: ['client'] });
  return {
    server: { caFile: ca.certPath, certFile: server.certPath, keyFile: server.keyPath, peerCertFile: peer.certPath, peerKeyFile: peer.keyPath },
    client: { ca: Buffer.from(ca.certPem), cert: Buffer.from(client.certPem), key: Buffer.from(client.keyPem), serverName: 'localhost' },
  };
}

/**
 * etcd3 client options for the managed etcd of DATA_DIR on `port`, with the master's client
 * certificate: for tools and benches that read or seed the store directly, as etcdctl would with
 * --cacert/--cert/--key.
 */
export function managedEtcdClientOptions(
  dataDir: string,
  port: number,
): { hosts: string; credentials: { rootCertificate: Buffer; certChain: Buffer; privateKey: Buffer }; grpcOptions: Record<string, string> } {
  const pki = join(dataDir, 'pki');
  return {
    hosts: `https://127.0.0.1:${port}`,
    credentials: {
      rootCertificate: readFileSync(join(pki, 'etcd', 'ca.crt')),
      certChain: readFileSync(join(pki, 'apiserver-etcd-client.crt')),
      privateKey: readFileSync(join(pki, 'apiserver-etcd-client.key')),
    },
    // The certificate's DNS name: TLS may not send 127.0.0.1 as a server name.
    grpcOptions: { 'grpc.ssl_target_name_override': 'localhost', 'grpc.default_authority': 'localhost' },
  };
}
