// From what the submitter saw of Slurm to a GpuJob's phase, reason and message: Slurm's job states mapped once, here, with the line of error.err that says what went wrong.
import type { GpuJobPhase, GpuJobStatus } from '../../core/api/gpujob.js';

export interface PhaseVerdict {
  phase: GpuJobPhase;
  reason: string;
  message: string;
}

/** Slurm states of a job that has not started (or waits to start again). */
const PENDING_STATES = new Set(['PENDING', 'REQUEUED', 'REQUEUE_FED', 'REQUEUE_HOLD', 'RESV_DEL_HOLD', 'CONFIGURING']);
/** Slurm states of a job that holds its nodes: running, suspended, or ending (epilog, stage-out). */
const RUNNING_STATES = new Set(['RUNNING', 'COMPLETING', 'SUSPENDED', 'STOPPED', 'STAGE_OUT', 'SIGNALING', 'RESIZING', 'POWER_UP_NODE', 'UPDATE_DB']);
/** Final states, with the reason a failed job gets. */
const FAILED_REASONS: Readonly<Record<string, string>> = {
  FAILED: 'JobFailed',
  CANCELLED: 'Cancelled',
  TIMEOUT: 'TimeLimitExceeded',
  DEADLINE: 'DeadlineExceeded',
  OUT_OF_MEMORY: 'OutOfMemory',
  NODE_FAIL: 'NodeFailed',
  BOOT_FAIL: 'BootFailed',
  PREEMPTED: 'Preempted',
  REVOKED: 'Revoked',
  SPECIAL_EXIT: 'JobFailed',
  // Ours: sbatch refused the job, or Slurm no longer knows a job it ran.
  SUBMIT_FAILED: 'SubmitFailed',
  LOST: 'JobLost',
};

/** Slurm prints states like `CANCELLED by 0`; the first word is the state. */
export function slurmStateName(state: string | undefined): string {
  return (state ?? '').trim().split(/\s+/)[0]!.toUpperCase();
}

export function isFinalSlurmState(state: string | undefined): boolean {
  const name = slurmStateName(state);
  return name === 'COMPLETED' || Object.hasOwn(FAILED_REASONS, name);
}

/** make's own report of a failed recipe (`make: *** [Makefile:9: run] Error 1`): never the line that explains. */
const MAKE_LINE = /^make(\[\d+\])?: (\*\*\*|Leaving|Entering)/;

/**
 * The line of error.err that says what went wrong: the first that speaks of an error (a compiler's
 * `x.c:3:5: error: ...`, a CUDA check's `CUDA error: ...`), make's own lines aside; else the last
 * line that is not make's; else nothing.
 */
export function errorSummary(errorText: string | undefined): string {
  const lines = (errorText ?? '')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
  const own = lines.filter((l) => !MAKE_LINE.test(l));
  const found = own.find((l) => /\berror\b/i.test(l)) ?? own[own.length - 1] ?? '';
  return found.length > 500 ? `${found.slice(0, 500)}...` : found;
}

function exitText(status: GpuJobStatus): string {
  if (status.signal) return ` (signal ${status.signal})`;
  return status.exitCode !== undefined ? ` (exit code ${status.exitCode})` : '';
}

/**
 * The phase for what the submitter last reported. A finished Slurm job counts as finished only once
 * its results are collected: until then the job is still Running (being wrapped up). A cluster the
 * submitter cannot reach makes the job Unknown, as a node out of touch makes its pods Unknown.
 */
export function phaseFromSlurm(status: GpuJobStatus): PhaseVerdict {
  const state = slurmStateName(status.slurmState);
  const job = status.jobId ? `Slurm job ${status.jobId}` : 'the Slurm job';
  if (status.clusterReachable === false) {
    return { phase: 'Unknown', reason: 'ClusterUnreachable', message: `cannot reach the Slurm cluster: ${status.clusterMessage ?? 'no answer'}` };
  }
  if (state === '') return { phase: 'Pending', reason: 'Submitting', message: 'the submitter is staging the files and submitting the job' };
  if (PENDING_STATES.has(state)) {
    const why = status.slurmReason && status.slurmReason !== 'None' ? ` (${status.slurmReason})` : '';
    return { phase: 'Pending', reason: 'SlurmPending', message: `${job} is ${state}${why}` };
  }
  if (RUNNING_STATES.has(state)) {
    return { phase: 'Running', reason: 'SlurmRunning', message: `${job} is ${state}${status.node ? ` on ${status.node}` : ''}` };
  }
  if (state === 'COMPLETED' || Object.hasOwn(FAILED_REASONS, state)) {
    if (!status.resultsCollected && state !== 'SUBMIT_FAILED') {
      return { phase: 'Running', reason: 'CollectingResults', message: `${job} is ${state}; fetching result.out and error.err` };
    }
    if (state === 'COMPLETED') {
      return { phase: 'Succeeded', reason: 'Completed', message: `${job} COMPLETED${status.node ? ` on ${status.node}` : ''}` };
    }
    if (state === 'SUBMIT_FAILED') {
      return { phase: 'Failed', reason: 'SubmitFailed', message: `sbatch refused the job: ${status.slurmReason ?? 'no reason given'}` };
    }
    if (state === 'LOST')
      return {
        phase: 'Failed',
        reason: 'JobLost',
        message: `${job} is no longer known to Slurm (${status.slurmReason ?? 'it finished too long ago or was purged'})`,
      };
    const summary = errorSummary(status.error);
    const slurmWhy = state !== 'FAILED' && status.slurmReason && status.slurmReason !== 'None' ? ` [${status.slurmReason}]` : '';
    return { phase: 'Failed', reason: FAILED_REASONS[state]!, message: `${job} ${state}${exitText(status)}${slurmWhy}${summary ? `: ${summary}` : ''}` };
  }
  // A state this version does not know: say it as it is, and do not guess that it ended.
  return { phase: 'Running', reason: 'SlurmState', message: `${job} is ${state}` };
}
