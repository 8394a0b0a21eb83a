// describe's layouts for GpuJobs (the Slurm story and the ends of the outputs) and Secrets (key sizes, never values).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { gpuJobKind } from '../core/api/gpujob.js';
import { secretKind } from '../core/api/secret.js';
import { validateObject } from '../core/api/validate.js';
import { renderObject } from './describe.js';

describe('describe gpujob', () => {
  it("tells the job's Slurm story and shows the ends of result.out and error.err", () => {
    const job = validateObject(gpuJobKind, {
      apiVersion: 'minik8s.io/v1',
      kind: 'GpuJob',
      metadata: { name: 'matmul', namespace: 'default' },
      spec: {
        cluster: 'hpc',
        program: { files: { Makefile: 'matmul:\n\tnvcc -o matmul matmul.cu\nrun: matmul\n\t./matmul\n', 'matmul.cu': '// ...\n' } },
        slurm: { gres: 'gpu:1', time: '10' },
      },
      status: {
        phase: 'Failed',
        reason: 'JobFailed',
        message: 'Slurm job 12 FAILED (exit code 2): CUDA error: cudaErrorInsufficientDriver: ...',
        attempts: 1,
        podName: 'matmul-0f1e2d-submit-1',
        jobId: '12',
        jobName: 'minik8s-default-matmul-0f1e2d3c',
        slurmState: 'FAILED',
        slurmReason: 'NonZeroExitCode',
        node: 'vm',
        jobDirectory: '/shared/default_matmul_0f1e2d3c',
        submitTime: '2030-01-01T00:00:00Z',
        startTime: '2030-01-01T00:00:01Z',
        completionTime: '2030-01-01T00:00:05Z',
        exitCode: 2,
        output: 'nvcc -o matmul matmul.cu\n./matmul\n',
        error: 'CUDA error: cudaErrorInsufficientDriver: ...\n',
        outputBytes: 33,
        errorBytes: 44,
        resultsCollected: true,
      },
    });
    const text = renderObject(gpuJobKind, job);
    for (const line of [
      /^Cluster:\s+hpc$/m,
      /^Phase:\s+Failed$/m,
      /^Message:\s+Slurm job 12 FAILED \(exit code 2\): CUDA error/m,
      /^Slurm Job:\s+12 \(minik8s-default-matmul-0f1e2d3c\)$/m,
      /^Slurm State:\s+FAILED \(NonZeroExitCode\)$/m,
      /^Finished:\s+Tue, 01 Jan 2030 00:00:05 \+0000$/m,
      /^Exit Code:\s+2$/m,
      /^Submitter:\s+pod matmul-0f1e2d-submit-1 \(attempt 1\)$/m,
      /^Program:\s+2 files, \d+ bytes: Makefile, matmul\.cu$/m,
      /^Slurm:\n {2}gres:\s+gpu:1\n {2}time:\s+10$/m,
      /^Script:\s+make\n\s+make run$/m,
      /^Output \(result\.out, 33 bytes\):\s+nvcc -o matmul matmul\.cu\n\s+\.\/matmul$/m,
      /^Error \(error\.err, 44 bytes\):\s+CUDA error: cudaErrorInsufficientDriver: \.\.\.$/m,
    ])
      assert.match(text, line);
  });
});

describe('describe secret', () => {
  it('lists keys with their sizes and never a value', () => {
    const secret = validateObject(secretKind, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'k', namespace: 'default' },
      type: 'kubernetes.io/ssh-auth',
      stringData: { 'ssh-privatekey': 'SECRET KEY MATERIAL\n', known_hosts: 'host ssh-ed25519 AAAA\n' },
    });
    const text = renderObject(secretKind, secret);
    assert.match(text, /^Type:\s+kubernetes\.io\/ssh-auth$/m);
    assert.match(text, /^Data:\n {2}known_hosts:\s+22 bytes\n {2}ssh-privatekey:\s+20 bytes$/m);
    assert.doesNotMatch(text, /SECRET KEY|AAAA|U0VDUkVU/);
  });
});
