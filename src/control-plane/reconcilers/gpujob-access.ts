// What a GPU job's submitter may do, as ordinary API objects: a ServiceAccount per job, a Role naming only that job, a RoleBinding, and the lifetime of the job's bound token.
import type { GpuJob } from '../../core/api/gpujob.js';
import type { OwnerReference } from '../../core/api/meta.js';
import type { PolicyRule, Role, RoleBinding } from '../../core/api/rbac.js';
import type { ServiceAccount } from '../../core/api/serviceaccount.js';

/** One day on top of the job's time limit: Slurm may keep a job queued before it starts, and the outputs are uploaded after it ends. */
export const QUEUE_ALLOWANCE_SECONDS = 24 * 3600;
/** The longest a job token lives (and the lifetime for jobs without a time limit); a submitter started later gets a fresh one. */
export const MAX_JOB_TOKEN_SECONDS = 7 * 24 * 3600;

/**
 * The job's own ServiceAccount, Role and RoleBinding all bear this name. Why one account per job
 * rather than one per namespace: RBAC grants to accounts, not tokens, so a shared account's token
 * would reach every job its Role names; with one per job, a token reaches its own job alone.
 */
export function gpuJobAccessName(job: GpuJob): string {
  return `gpujob-${job.metadata.uid ?? ''}`;
}

function ownerOf(job: GpuJob): OwnerReference {
  return {
    apiVersion: 'minik8s.io/v1',
    kind: 'GpuJob',
    name: job.metadata.name ?? '',
    uid: job.metadata.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}

/**
 * Exactly what the submitter (and the canceller) use: read the job and its submission (files,
 * batch script, the cluster's SSH key), report status, upload result.out and error.err; each for
 * this job by name. Events are not needed: the controller records them.
 */
export function gpuJobReporterRules(job: GpuJob): PolicyRule[] {
  const names = [job.metadata.name ?? ''];
  return [
    { apiGroups: ['minik8s.io'], resources: ['gpujobs', 'gpujobs/submission'], resourceNames: names, verbs: ['get'] },
    { apiGroups: ['minik8s.io'], resources: ['gpujobs/status'], resourceNames: names, verbs: ['get', 'update', 'patch'] },
    { apiGroups: ['minik8s.io'], resources: ['gpujobs/output/result.out', 'gpujobs/output/error.err'], resourceNames: names, verbs: ['update'] },
  ] as PolicyRule[];
}

export function gpuJobServiceAccount(job: GpuJob): ServiceAccount {
  return {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name: gpuJobAccessName(job), namespace: job.metadata.namespace, ownerReferences: [ownerOf(job)] },
    // Its token comes from the job's token Secret; the pods need no second one mounted.
    automountServiceAccountToken: false,
  } as ServiceAccount;
}

export function gpuJobRole(job: GpuJob): Role {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name: gpuJobAccessName(job), namespace: job.metadata.namespace, ownerReferences: [ownerOf(job)] },
    rules: gpuJobReporterRules(job),
  } as Role;
}

export function gpuJobRoleBinding(job: GpuJob): RoleBinding {
  const name = gpuJobAccessName(job);
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name, namespace: job.metadata.namespace, ownerReferences: [ownerOf(job)] },
    subjects: [{ kind: 'ServiceAccount', name, namespace: job.metadata.namespace }],
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
  } as RoleBinding;
}

/**
 * A Slurm `--time` in seconds: minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS; undefined for
 * none, UNLIMITED or INFINITE.
 */
export function slurmTimeSeconds(time: string | undefined): number | undefined {
  if (time === undefined || /^(UNLIMITED|INFINITE)$/.test(time)) return undefined;
  const dash = time.indexOf('-');
  if (dash >= 0) {
    const days = Number(time.slice(0, dash));
    const [h = 0, m = 0, s = 0] = time
      .slice(dash + 1)
      .split(':')
      .map(Number);
    return ((days * 24 + h) * 60 + m) * 60 + s;
  }
  const parts = time.split(':').map(Number);
  if (parts.length === 1) return parts[0]! * 60;
  if (parts.length === 2) return parts[0]! * 60 + parts[1]!;
  return (parts[0]! * 60 + parts[1]!) * 60 + parts[2]!;
}

/** The token's lifetime: the job's time limit and a day for queueing and uploads, at most a week. */
export function gpuJobTokenSeconds(time: string | undefined): number {
  const limit = slurmTimeSeconds(time);
  if (limit === undefined || !Number.isFinite(limit)) return MAX_JOB_TOKEN_SECONDS;
  return Math.min(MAX_JOB_TOKEN_SECONDS, limit + QUEUE_ALLOWANCE_SECONDS);
}
