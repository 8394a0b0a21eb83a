// `minik8s certificate issue NAME [--group G]... [--days N] -o kubeconfig`: on the master, signs a client certificate for a user with the cluster CA and prints a kubeconfig that uses it.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { issueClientCert, loadOrCreateCa } from '../core/pki/pki.js';
import { CliError } from './cli-error.js';
import type { CliContext } from './context.js';

export interface CertificateIssueArgs {
  name: string;
  groups: readonly string[];
  /** Validity in days (default 365). */
  days?: number;
  output?: string;
  dataDir: string;
  /** The server URL to put in the kubeconfig (default: the one DATA_DIR/admin.kubeconfig names). */
  server?: string;
}

export interface UserKubeconfigOptions {
  server: string;
  caPem: string;
  user: string;
  certPem: string;
  keyPem: string;
  /** Names the cluster and context (default `minik8s`). */
  cluster?: string;
}

const b64 = (text: string) => Buffer.from(text).toString('base64');

/** One cluster, one user (client certificate only, no token), one context, current. */
export function renderUserKubeconfig(o: UserKubeconfigOptions): string {
  const cluster = o.cluster ?? 'minik8s';
  const context = `${o.user}@${cluster}`;
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: cluster, cluster: { server: o.server, 'certificate-authority-data': b64(o.caPem) } }],
    users: [{ name: o.user, user: { 'client-certificate-data': b64(o.certPem), 'client-key-data': b64(o.keyPem) } }],
    contexts: [{ name: context, context: { cluster, user: o.user } }],
    'current-context': context,
    preferences: {},
  });
}

/** The API server URL the master wrote into its admin kubeconfig. */
function serverFromAdminKubeconfig(dataDir: string): string {
  const path = join(dataDir, 'admin.kubeconfig');
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    throw new CliError(`cannot read ${path} to find the API server's URL (is the master started, without --insecure-http?); pass --server`);
  }
  const server = (parse(text) as { clusters?: { cluster?: { server?: string } }[] } | null)?.clusters?.[0]?.cluster?.server;
  if (!server) throw new CliError(`${path} names no server; pass --server`);
  return server;
}

export async function runCertificateIssue(ctx: CliContext, args: CertificateIssueArgs): Promise<number> {
  const output = args.output ?? 'kubeconfig';
  if (output !== 'kubeconfig') throw new CliError(`unable to match a printer suitable for the output format "${output}", allowed formats are: kubeconfig`);
  if (!args.name.trim()) throw new CliError('a user name is required');
  // Kubernetes reserves the system: prefix for its components; a person's certificate must not pose as one, nor as a cluster admin by accident.
  if (args.name.startsWith('system:')) throw new CliError(`"${args.name}": user names starting with "system:" are reserved for the cluster's components`);
  const days = args.days ?? 365;
  if (!Number.isInteger(days) || days < 1 || days > 3650) throw new CliError(`--days must be a whole number of days from 1 to 3650, not ${args.days}`);
  const dir = join(args.dataDir, 'pki');
  // Never make a CA here: without the master's, a new one would sign certificates no server trusts.
  if (!existsSync(join(dir, 'ca.crt')) || !existsSync(join(dir, 'ca.key'))) {
    throw new CliError(`no cluster CA in ${dir} (run this on the master, as a user who may read its key, with --data-dir if it is not /var/lib/minik8s)`);
  }
  let ca: Awaited<ReturnType<typeof loadOrCreateCa>>;
  try {
    ca = await loadOrCreateCa({ dir });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new CliError(`cannot read the cluster CA in ${dir}: ${code === 'EACCES' ? 'permission denied (try sudo)' : (err as Error).message}`);
  }
  const server = args.server ?? serverFromAdminKubeconfig(args.dataDir);
  const cert = await issueClientCert(ca, { user: args.name, groups: args.groups, validDays: days });
  ctx.out(renderUserKubeconfig({ server, caPem: ca.certPem, user: args.name, certPem: cert.certPem, keyPem: cert.keyPem }));
  return 0;
}
