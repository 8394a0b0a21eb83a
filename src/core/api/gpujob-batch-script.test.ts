// The batch script a GpuJob becomes, its Slurm job name and job directory: rendered exactly, option by option.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { GpuJob, GpuJobSlurm } from './gpujob.js';
import { jobDirectory, renderBatchScript, sbatchOptions, slurmJobName } from './gpujob-batch-script.js';

const META = { name: 'matmul', namespace: 'gpu', uid: '0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0' };

function job(spec: Partial<GpuJob['spec']>): { metadata: typeof META; spec: GpuJob['spec'] } {
  return {
    metadata: META,
    spec: {
      cluster: 'hpc',
      program: { files: { Makefile: 'all:\n\tnvcc -o mm mm.cu\nrun: all\n\t./mm\n', 'mm.cu': '' } },
      slurm: {},
      ...spec,
    } as GpuJob['spec'],
  };
}

describe('renderBatchScript', () => {
  it("writes the seeds' kind of script: job name, result.out and error.err, every parameter, then the commands under set -e", () => {
    const script = renderBatchScript(
      job({
        slurm: {
          partition: 'dgx2',
          nodes: 1,
          ntasks: 1,
          ntasksPerNode: 1,
          cpusPerTask: 6,
          gpus: 1,
          gres: 'gpu:1',
          mem: '4G',
          time: '00:10:00',
          extra: ['--exclusive', '--qos=high'],
        },
      }),
    );
    assert.equal(
      script,
      [
        '#!/bin/bash',
        '# Written by minik8s for GpuJob gpu/matmul (uid 0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0).',
        '#SBATCH --job-name=minik8s-gpu-matmul-0f1e2d3c',
        '#SBATCH --output=result.out',
        '#SBATCH --error=error.err',
        '#SBATCH --partition=dgx2',
        '#SBATCH --nodes=1',
        '#SBATCH --ntasks=1',
        '#SBATCH --ntasks-per-node=1',
        '#SBATCH --cpus-per-task=6',
        '#SBATCH --gpus=1',
        '#SBATCH --gres=gpu:1',
        '#SBATCH --mem=4G',
        '#SBATCH --time=00:10:00',
        '#SBATCH --exclusive',
        '#SBATCH --qos=high',
        '',
        'set -e',
        'make',
        'make run',
        '',
      ].join('\n'),
    );
  });

  it("runs the job's own script, trailing blank lines dropped", () => {
    const script = renderBatchScript(job({ script: 'module load cuda\n./mm 1024\n\n' }));
    assert.match(script, /\nset -e\nmodule load cuda\n\.\/mm 1024\n$/);
  });
});

describe('sbatchOptions', () => {
  const cases: [string, GpuJobSlurm | undefined, string[]][] = [
    ["nothing asked: nothing written (the cluster's defaults)", undefined, []],
    ['typed GPUs', { gpus: 'a100:2' }, ['--gpus=a100:2']],
    ['a day and a half', { time: '1-12:00:00' }, ['--time=1-12:00:00']],
    ['extra directives last, as given', { mem: '512M', extra: ['--constraint=v100'] }, ['--mem=512M', '--constraint=v100']],
  ];
  for (const [name, slurm, want] of cases) it(name, () => assert.deepEqual(sbatchOptions(slurm), want));
});

describe('job identity', () => {
  it('names the Slurm job and the directory after the namespace, the name and the uid', () => {
    assert.equal(slurmJobName(job({})), 'minik8s-gpu-matmul-0f1e2d3c');
    assert.equal(jobDirectory('/shared/jobs/', job({})), '/shared/jobs/gpu_matmul_0f1e2d3c');
    assert.equal(jobDirectory('minik8s-jobs', job({})), 'minik8s-jobs/gpu_matmul_0f1e2d3c');
  });

  it('gives a job applied again under the same name (a new uid) another name and directory', () => {
    const again = { metadata: { ...META, uid: 'aa11bb22-0000-0000-0000-000000000000' }, spec: job({}).spec };
    assert.notEqual(slurmJobName(again), slurmJobName(job({})));
    assert.notEqual(jobDirectory('/w', again), jobDirectory('/w', job({})));
  });

  it('keeps jobs whose names run together apart (a-b in c, a in b-c)', () => {
    const one = { metadata: { name: 'b-c', namespace: 'a', uid: '11111111' }, spec: job({}).spec };
    const two = { metadata: { name: 'c', namespace: 'a-b', uid: '11111111' }, spec: job({}).spec };
    assert.notEqual(jobDirectory('/w', one), jobDirectory('/w', two));
  });
});
