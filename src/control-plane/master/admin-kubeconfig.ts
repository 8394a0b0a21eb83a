// DATA_DIR/admin.kubeconfig: a kubeconfig stock kubectl uses unchanged (the CA, the admin's client cert and token).
import { join } from 'node:path';
import { stringify } from 'yaml';
import { writePemFile } from '../../core/pki/pki.js';

export interface AdminKubeconfigOptions {
  server: string;
  caPem: string;
  clientCertPem: string;
  clientKeyPem: string;
  token: string;
  /** Names the cluster, user and context (default `minik8s`). */
  name?: string;
}

const b64 = (text: string) => Buffer.from(text).toString('base64');

/** The kubeconfig text: one cluster, one user, one context, current. */
export function renderAdminKubeconfig(options: AdminKubeconfigOptions): string {
  const name = options.name ?? 'minik8s';
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster: { server: options.server, 'certificate-authority-data': b64(options.caPem) } }],
    users: [
      {
        name: `${name}-admin`,
        user: {
          'client-certificate-data': b64(options.clientCertPem),
          'client-key-data': b64(options.clientKeyPem),
          token: options.token,
        },
      },
    ],
    contexts: [{ name, context: { cluster: name, user: `${name}-admin` } }],
    'current-context': name,
    preferences: {},
  });
}

export function adminKubeconfigPath(dataDir: string): string {
  return join(dataDir, 'admin.kubeconfig');
}

/** Writes DATA_DIR/admin.kubeconfig with mode 0600 (it holds the admin's key and token). */
export function writeAdminKubeconfig(dataDir: string, options: AdminKubeconfigOptions): string {
  const path = adminKubeconfigPath(dataDir);
  writePemFile(path, renderAdminKubeconfig(options), 0o600);
  return path;
}
