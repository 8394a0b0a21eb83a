// SlurmCluster (minik8s.io/v1): how GPU jobs reach one Slurm cluster: as a Slurm client on the node (local) or over SSH to a login node (ssh).
import * as v from 'valibot';
import type { KindDefinition } from './kind.js';
import { kindSchema, labelName, labelsSchema } from './meta.js';
import { intSchema } from './pod.js';
import { withChecks, type FieldProblem } from './validate.js';

/** An absolute path without `..`, spaces or shell metacharacters: it is mounted into pods and written into batch scripts. */
const ABSOLUTE_PATH = /^\/[A-Za-z0-9._@+=,/-]*$/;
const absolutePath = v.pipe(
  v.string(),
  v.regex(ABSOLUTE_PATH, "must be an absolute path of letters, digits and '._@+=,/-'"),
  v.check((p) => !p.split('/').includes('..'), "must not contain '..'"),
);
/** A path on the login node: absolute, or relative to the user's home directory. */
const remotePath = v.pipe(
  v.string(),
  v.regex(/^[A-Za-z0-9._@+=,/~-]+$/, "must be a path of letters, digits and '._@+=,/~-'"),
  v.check((p) => !p.split('/').includes('..'), "must not contain '..'"),
);
const HOST = /^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$|^\[?[0-9a-fA-F:]+\]?$/;
const USER = /^[a-z_][a-z0-9_.-]*[$]?$/i;

export const DEFAULT_SLURM_CONF = '/etc/slurm/slurm.conf';
export const DEFAULT_MUNGE_SOCKET_DIR = '/run/munge';
export const DEFAULT_LOCAL_WORK_DIR = '/var/lib/minik8s/slurm-jobs';
export const DEFAULT_SSH_WORK_DIR = 'minik8s-jobs';
export const DEFAULT_SUBMITTER_IMAGE = 'minik8s/slurm-client:22.05';
export const DEFAULT_SSH_KEY = 'ssh-privatekey';
export const DEFAULT_KNOWN_HOSTS_KEY = 'known_hosts';

const localSchema = v.strictObject({
  /** The Slurm configuration on the nodes that run submitters; SLURM_CONF in the submitter. Its directory is mounted read-only. */
  slurmConf: v.optional(absolutePath, DEFAULT_SLURM_CONF),
  /** The directory of munged's socket on those nodes (slurm.conf's AuthInfo=socket=... must point into it, or it is /run/munge). */
  mungeSocketDir: v.optional(absolutePath, DEFAULT_MUNGE_SOCKET_DIR),
  /** Where job directories are made: a path that the submitting node and the Slurm compute nodes see alike (shared storage). */
  workDir: v.optional(absolutePath, DEFAULT_LOCAL_WORK_DIR),
});

const sshSchema = v.strictObject({
  host: v.pipe(v.string(), v.maxLength(253), v.regex(HOST, 'must be a host name or an IP address')),
  port: v.optional(intSchema({ min: 1, max: 65535 }), 22),
  user: v.pipe(v.string(), v.maxLength(32), v.regex(USER, 'must be a user name')),
  /** A Secret in the job's namespace holding the private key (and, optionally, the login node's host keys). */
  secretName: labelName,
  privateKeyKey: v.optional(v.string(), DEFAULT_SSH_KEY),
  /** When the Secret has no such key, the host key is accepted on first use by every submitter: say it in the Secret for real clusters. */
  knownHostsKey: v.optional(v.string(), DEFAULT_KNOWN_HOSTS_KEY),
  /** Where job directories are made on the login node (and the compute nodes, through the cluster's shared home); relative to the home directory unless absolute. */
  workDir: v.optional(remotePath, DEFAULT_SSH_WORK_DIR),
});

const slurmClusterSpecSchema = withChecks(
  v.strictObject({
    mode: v.picklist(['local', 'ssh']),
    local: v.optional(localSchema),
    ssh: v.optional(sshSchema),
    /** Which nodes run the submitter pods: for local mode, the ones that are Slurm clients. */
    nodeSelector: v.optional(labelsSchema),
    /** The submitter's image (slurm-client, munge, ssh and python3 with our submitter): scripts/build-images.sh makes the default. */
    image: v.optional(v.pipe(v.string(), v.minLength(1)), DEFAULT_SUBMITTER_IMAGE),
    /** How often the submitter asks Slurm about a job. */
    pollIntervalSeconds: v.optional(v.pipe(v.number(), v.minValue(0.1), v.maxValue(300)), 1),
  }),
  (s): FieldProblem[] => {
    const problems: FieldProblem[] = [];
    if (s.mode === 'ssh' && s.ssh === undefined)
      problems.push({ path: ['ssh'], reason: 'FieldValueRequired', detail: 'mode ssh needs the login node: ssh.host, ssh.user and ssh.secretName' });
    if (s.mode === 'local' && s.ssh !== undefined) problems.push({ path: ['ssh'], reason: 'FieldValueForbidden', detail: 'only with mode ssh' });
    if (s.mode === 'ssh' && s.local !== undefined) problems.push({ path: ['local'], reason: 'FieldValueForbidden', detail: 'only with mode local' });
    return problems;
  },
);

export const slurmClusterSchema = v.pipe(
  kindSchema('minik8s.io/v1', 'SlurmCluster', {
    spec: slurmClusterSpecSchema,
  }),
  // Local mode's defaults are part of the stored object, so that `get -o yaml` shows the paths in use.
  v.transform((c) => (c.spec.mode === 'local' && c.spec.local === undefined ? { ...c, spec: { ...c.spec, local: v.parse(localSchema, {}) } } : c)),
);
export type SlurmCluster = v.InferOutput<typeof slurmClusterSchema>;
export type SlurmClusterSpec = SlurmCluster['spec'];

export const slurmClusterKind: KindDefinition = {
  kind: 'SlurmCluster',
  group: 'minik8s.io',
  version: 'v1',
  resource: 'slurmclusters',
  singular: 'slurmcluster',
  shortNames: ['slurm'],
  namespaced: true,
  schema: slurmClusterSchema,
  statusSubresource: false,
  columns: [
    { name: 'MODE', value: (o) => (o as SlurmCluster).spec.mode },
    {
      name: 'TARGET',
      value: (o) => {
        const s = (o as SlurmCluster).spec;
        return s.mode === 'ssh' && s.ssh ? `${s.ssh.user}@${s.ssh.host}:${s.ssh.port}` : (s.local?.slurmConf ?? DEFAULT_SLURM_CONF);
      },
    },
    {
      name: 'WORKDIR',
      wide: true,
      value: (o) => {
        const s = (o as SlurmCluster).spec;
        return (s.mode === 'ssh' ? s.ssh?.workDir : s.local?.workDir) ?? '';
      },
    },
  ],
};
