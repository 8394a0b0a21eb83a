// Slurm's job states to GpuJob phases, and the line of error.err a failed job's message quotes.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { GpuJobStatus } from '../../core/api/gpujob.js';
import { errorSummary, isFinalSlurmState, phaseFromSlurm, slurmStateName } from './gpujob-phase.js';

const CUDA = 'CUDA error: cudaErrorInsufficientDriver: CUDA driver version is insufficient for CUDA runtime version';

describe('phaseFromSlurm', () => {
  const cases: [string, GpuJobStatus, string, string, string][] = [
    ['nothing reported yet', {}, 'Pending', 'Submitting', 'the submitter is staging the files and submitting the job'],
    ['waiting for resources', { jobId: '7', slurmState: 'PENDING', slurmReason: 'Resources' }, 'Pending', 'SlurmPending', 'Slurm job 7 is PENDING (Resources)'],
    ['pending without a reason', { jobId: '7', slurmState: 'PENDING', slurmReason: 'None' }, 'Pending', 'SlurmPending', 'Slurm job 7 is PENDING'],
    ['requeued', { jobId: '7', slurmState: 'REQUEUED' }, 'Pending', 'SlurmPending', 'Slurm job 7 is REQUEUED'],
    ['running on a node', { jobId: '7', slurmState: 'RUNNING', node: 'gpu01' }, 'Running', 'SlurmRunning', 'Slurm job 7 is RUNNING on gpu01'],
    ['completing (epilog)', { jobId: '7', slurmState: 'COMPLETING', node: 'gpu01' }, 'Running', 'SlurmRunning', 'Slurm job 7 is COMPLETING on gpu01'],
    ['suspended', { jobId: '7', slurmState: 'SUSPENDED' }, 'Running', 'SlurmRunning', 'Slurm job 7 is SUSPENDED'],
    [
      'completed, results not yet fetched',
      { jobId: '7', slurmState: 'COMPLETED' },
      'Running',
      'CollectingResults',
      'Slurm job 7 is COMPLETED; fetching result.out and error.err',
    ],
    [
      'completed and collected',
      { jobId: '7', slurmState: 'COMPLETED', node: 'gpu01', exitCode: 0, resultsCollected: true },
      'Succeeded',
      'Completed',
      'Slurm job 7 COMPLETED on gpu01',
    ],
    [
      "failed: the CUDA error, not make's line",
      { jobId: '7', slurmState: 'FAILED', exitCode: 2, resultsCollected: true, error: `${CUDA}\nmake: *** [Makefile:9: run] Error 1\n` },
      'Failed',
      'JobFailed',
      `Slurm job 7 FAILED (exit code 2): ${CUDA}`,
    ],
    [
      'failed without error output',
      { jobId: '7', slurmState: 'FAILED', exitCode: 3, resultsCollected: true, error: '' },
      'Failed',
      'JobFailed',
      'Slurm job 7 FAILED (exit code 3)',
    ],
    [
      'cancelled by a user ("CANCELLED by 0")',
      { jobId: '7', slurmState: 'CANCELLED by 0', resultsCollected: true, slurmReason: 'None' },
      'Failed',
      'Cancelled',
      'Slurm job 7 CANCELLED',
    ],
    [
      'past its time limit, killed by a signal',
      { jobId: '7', slurmState: 'TIMEOUT', signal: 15, slurmReason: 'TimeLimit', resultsCollected: true },
      'Failed',
      'TimeLimitExceeded',
      'Slurm job 7 TIMEOUT (signal 15) [TimeLimit]',
    ],
    [
      'out of memory',
      { jobId: '7', slurmState: 'OUT_OF_MEMORY', exitCode: 0, resultsCollected: true },
      'Failed',
      'OutOfMemory',
      'Slurm job 7 OUT_OF_MEMORY (exit code 0)',
    ],
    ['node failure', { jobId: '7', slurmState: 'NODE_FAIL', resultsCollected: true }, 'Failed', 'NodeFailed', 'Slurm job 7 NODE_FAIL'],
    [
      'refused by sbatch',
      { slurmState: 'SUBMIT_FAILED', slurmReason: 'sbatch: error: invalid partition specified: dgx9' },
      'Failed',
      'SubmitFailed',
      'sbatch refused the job: sbatch: error: invalid partition specified: dgx9',
    ],
    [
      'forgotten by Slurm',
      { jobId: '7', slurmState: 'LOST', slurmReason: 'Slurm no longer knows job 7', resultsCollected: true },
      'Failed',
      'JobLost',
      'Slurm job 7 is no longer known to Slurm (Slurm no longer knows job 7)',
    ],
    [
      'the cluster out of reach, whatever it said before',
      { jobId: '7', slurmState: 'RUNNING', clusterReachable: false, clusterMessage: 'squeue: error: Unable to contact slurm controller (connect failure)' },
      'Unknown',
      'ClusterUnreachable',
      'cannot reach the Slurm cluster: squeue: error: Unable to contact slurm controller (connect failure)',
    ],
    ['a state this version does not know: still running', { jobId: '7', slurmState: 'HIBERNATING' }, 'Running', 'SlurmState', 'Slurm job 7 is HIBERNATING'],
  ];
  for (const [name, status, phase, reason, message] of cases) {
    it(name, () => assert.deepEqual(phaseFromSlurm(status), { phase, reason, message }));
  }
});

describe('errorSummary', () => {
  const cases: [string, string, string][] = [
    [
      'a compiler error after its context line',
      "hello.c: In function 'main':\nhello.c:3:5: error: 'x' undeclared (first use in this function)\n    3 |     x = 1;\n      |     ^\nhello.c:3:5: note: each undeclared identifier is reported only once\nmake: *** [Makefile:2: hello] Error 1\n",
      "hello.c:3:5: error: 'x' undeclared (first use in this function)",
    ],
    [
      "no line says error: the last one that is not make's",
      '/bin/sh: 1: ./missing: not found\nmake: *** [Makefile:4: run] Error 127\n',
      '/bin/sh: 1: ./missing: not found',
    ],
    ["only make's lines: nothing to quote", 'make: *** [Makefile:4: run] Error 1\n', ''],
    ['nothing at all', '', ''],
  ];
  for (const [name, text, want] of cases) it(name, () => assert.equal(errorSummary(text), want));
});

describe('Slurm state names', () => {
  it('reads the first word and knows which states are final', () => {
    assert.equal(slurmStateName('CANCELLED by 1000'), 'CANCELLED');
    assert.deepEqual(['COMPLETED', 'FAILED', 'CANCELLED by 0', 'TIMEOUT', 'RUNNING', 'PENDING', 'COMPLETING', undefined].map(isFinalSlurmState), [
      true,
      true,
      true,
      true,
      false,
      false,
      false,
      false,
    ]);
  });
});
