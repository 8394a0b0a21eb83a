// The Slurm side of a GpuJob, as pure functions: its Slurm job name, its job directory, and the batch script rendered from its spec.
import { jobScript, type GpuJob, type GpuJobSlurm } from './gpujob.js';

/** The files a finished job leaves in its directory, named by the batch script. */
export const RESULT_FILE = 'result.out';
export const ERROR_FILE = 'error.err';
export const BATCH_SCRIPT_FILE = 'job.sbatch';

interface JobIdentity {
  metadata: { name?: string; namespace?: string; uid?: string };
}

function uidPrefix(job: JobIdentity): string {
  return (job.metadata.uid ?? '').replace(/-/g, '').slice(0, 8) || 'nouid';
}

/**
 * The Slurm job name: unique per GpuJob object (its uid), so that a new submitter finds the job an
 * earlier one submitted (squeue --name) instead of submitting it twice, and a deletion can cancel it
 * (scancel --name) even when nobody recorded its id.
 */
export function slurmJobName(job: JobIdentity): string {
  return `minik8s-${job.metadata.namespace ?? 'default'}-${job.metadata.name ?? ''}-${uidPrefix(job)}`;
}

/**
 * The job's own directory under the cluster's work directory. `_` cannot occur in namespaces or
 * names, so no two jobs share one, and a job applied again under the same name (a new uid) gets a new one.
 */
export function jobDirectory(workDir: string, job: JobIdentity): string {
  return `${workDir.replace(/\/+$/, '')}/${job.metadata.namespace ?? 'default'}_${job.metadata.name ?? ''}_${uidPrefix(job)}`;
}

/** The `#SBATCH` options for the spec's Slurm parameters, in sbatch's own spelling. */
export function sbatchOptions(slurm: GpuJobSlurm | undefined): string[] {
  const s = slurm ?? {};
  const options: string[] = [];
  if (s.partition !== undefined) options.push(`--partition=${s.partition}`);
  if (s.nodes !== undefined) options.push(`--nodes=${s.nodes}`);
  if (s.ntasks !== undefined) options.push(`--ntasks=${s.ntasks}`);
  if (s.ntasksPerNode !== undefined) options.push(`--ntasks-per-node=${s.ntasksPerNode}`);
  if (s.cpusPerTask !== undefined) options.push(`--cpus-per-task=${s.cpusPerTask}`);
  if (s.gpus !== undefined) options.push(`--gpus=${s.gpus}`);
  if (s.gres !== undefined) options.push(`--gres=${s.gres}`);
  if (s.mem !== undefined) options.push(`--mem=${s.mem}`);
  if (s.time !== undefined) options.push(`--time=${s.time}`);
  options.push(...(s.extra ?? []));
  return options;
}

/**
 * The batch script. Output paths are relative: the submitter runs sbatch inside the job directory,
 * which is Slurm's default working directory, so one script serves a local path and a login node's
 * home-relative one alike. `set -e` makes the first failing command (a build) end the job with its code.
 */
export function renderBatchScript(job: JobIdentity & { spec: GpuJob['spec'] }): string {
  const lines = [
    '#!/bin/bash',
    `# Written by minik8s for GpuJob ${job.metadata.namespace ?? 'default'}/${job.metadata.name ?? ''} (uid ${job.metadata.uid ?? ''}).`,
    `#SBATCH --job-name=${slurmJobName(job)}`,
    `#SBATCH --output=${RESULT_FILE}`,
    `#SBATCH --error=${ERROR_FILE}`,
    ...sbatchOptions(job.spec.slurm).map((o) => `#SBATCH ${o}`),
    '',
    'set -e',
    jobScript(job.spec).replace(/\s+$/, ''),
  ];
  return `${lines.join('\n')}\n`;
}
