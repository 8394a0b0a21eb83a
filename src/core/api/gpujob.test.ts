// The GpuJob, SlurmCluster and Secret schemas: what they accept, default and refuse, and the default batch commands for a program.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { defaultScript, gpuJobKind, jobScript, MAX_PROGRAM_BYTES, type GpuJob } from './gpujob.js';
import { secretKind, secretValue, type Secret } from './secret.js';
import { slurmClusterKind, type SlurmCluster } from './slurmcluster.js';
import { validateObject, validateUpdate } from './validate.js';
import { InvalidError } from '../errors.js';

function job(spec: Record<string, unknown>): Record<string, unknown> {
  return { apiVersion: 'minik8s.io/v1', kind: 'GpuJob', metadata: { name: 'mm', namespace: 'default' }, spec: { cluster: 'hpc', ...spec } };
}

function invalid(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof InvalidError, String(err));
    return err.message;
  }
  assert.fail('expected a 422');
}

describe('GpuJob schema', () => {
  it('accepts a program with a Makefile and Slurm parameters, with an empty status', () => {
    const out = validateObject(
      gpuJobKind,
      job({
        program: { files: { Makefile: 'all:\n\tnvcc -o mm mm.cu\n', 'mm.cu': '__global__ void k() {}\n', 'data/in.txt': '1 2\n' } },
        slurm: { partition: 'dgx2', nodes: 1, ntasks: 1, cpusPerTask: 6, gpus: 1, gres: 'gpu:1', mem: '4G', time: '00:10:00', extra: ['--exclusive'] },
      }),
    ) as GpuJob;
    assert.equal(out.spec.slurm?.gpus, 1);
    assert.deepEqual(out.status, {});
  });

  const refusals: [string, Record<string, unknown>, RegExp][] = [
    ['a manifest path the CLI did not resolve', { program: { path: './matmul' } }, /spec\.program\.path: Forbidden: is read by minik8s apply/],
    ['no program at all', { program: {} }, /spec\.program\.files: Required value: the job has no program/],
    ['a file name climbing out of the job directory', { program: { files: { '../x.c': 'int main(){}' } } }, /file name "\.\.\/x\.c": must be a relative path/],
    ['an absolute file name', { program: { files: { '/etc/passwd': 'x' } } }, /file name "\/etc\/passwd"/],
    ['a hidden file', { program: { files: { '.bashrc': 'x' } } }, /file name "\.bashrc"/],
    [
      'nothing to run',
      { program: { files: { 'a.c': 'x', 'b.c': 'y' } } },
      /spec\.script: Required value: the program has no Makefile and not exactly one \.cu or \.c file/,
    ],
    [
      'a directive with a newline',
      { program: { files: { 'a.c': 'x' } }, slurm: { extra: ['--exclusive\nrm -rf /'] } },
      /spec\.slurm\.extra\[0\]: Invalid value: .*must be one line/,
    ],
    [
      'a time limit Slurm would refuse',
      { program: { files: { 'a.c': 'x' } }, slurm: { time: 'ten minutes' } },
      /spec\.slurm\.time: Invalid value: "ten minutes": must be a Slurm time limit/,
    ],
    ['a memory size without digits', { program: { files: { 'a.c': 'x' } }, slurm: { mem: 'G' } }, /spec\.slurm\.mem/],
    ['zero nodes', { program: { files: { 'a.c': 'x' } }, slurm: { nodes: 0 } }, /spec\.slurm\.nodes: Invalid value: 0: must be greater than or equal to 1/],
    [
      'a program over the limit',
      { program: { files: { 'a.c': 'x'.repeat(MAX_PROGRAM_BYTES + 1) } } },
      /spec\.program: Invalid value: "1048577 bytes": Too long/,
    ],
    ['a binary file that is not base64', { program: { binaryFiles: { 'in.bin': 'not base64!' } }, script: './x' }, /must be base64/],
    [
      'a file that another file needs as its directory',
      { program: { files: { 'mm.cu': 'x', data: 'x', 'data/in.txt': '1' } } },
      /spec\.program\.files\[data\]: Invalid value: "data": is a file, but "data\/in\.txt" needs it to be a directory/,
    ],
    [
      'a file both as text and binary',
      { program: { files: { 'in.bin': 'x' }, binaryFiles: { 'in.bin': 'AAEC' } }, script: './x' },
      /spec\.program\.binaryFiles\.in\.bin: Duplicate value/,
    ],
  ];
  for (const [name, spec, message] of refusals) {
    it(`refuses ${name}`, () =>
      assert.match(
        invalid(() => validateObject(gpuJobKind, job(spec))),
        message,
      ));
  }

  it('refuses any change of spec after create, as a Job does its template', () => {
    const a = validateObject(gpuJobKind, job({ program: { files: { 'a.c': 'int main(){}' } } }));
    const b = validateObject(gpuJobKind, job({ program: { files: { 'a.c': 'int main(){return 1;}' } } }));
    assert.match(
      invalid(() => validateUpdate(gpuJobKind, a, b)),
      /spec: Forbidden: field is immutable/,
    );
    assert.doesNotThrow(() => validateUpdate(gpuJobKind, a, { ...a, metadata: { ...a.metadata, finalizers: ['x'] } }));
  });
});

describe('defaultScript', () => {
  const cases: [string, Record<string, string>, string | undefined][] = [
    ['a Makefile with a run target: build, then run', { Makefile: 'all: mm\nrun: mm\n\t./mm\n', 'mm.cu': '' }, 'make\nmake run'],
    ['a Makefile without one: make', { makefile: 'all:\n\tcc x.c\n' }, 'make'],
    ['one .cu file: nvcc, then the binary', { 'matmul.cu': '' }, 'nvcc -O2 -o matmul matmul.cu\n./matmul'],
    ['one .c file: cc, then the binary', { 'hello.c': '', 'input.txt': '' }, 'cc -O2 -o hello hello.c\n./hello'],
    ['two sources and no Makefile: the job must say', { 'a.cu': '', 'b.cu': '' }, undefined],
    ['a source only in a subdirectory: the job must say', { 'src/a.c': '' }, undefined],
  ];
  for (const [name, files, want] of cases) it(name, () => assert.equal(defaultScript(Object.keys(files), files), want));

  it("jobScript prefers the job's own script", () => {
    const spec = (validateObject(gpuJobKind, job({ program: { files: { 'a.c': '' } }, script: 'echo hi' })) as GpuJob).spec;
    assert.equal(jobScript(spec), 'echo hi');
  });
});

describe('SlurmCluster schema', () => {
  const cluster = (spec: Record<string, unknown>) => ({
    apiVersion: 'minik8s.io/v1',
    kind: 'SlurmCluster',
    metadata: { name: 'hpc', namespace: 'default' },
    spec,
  });

  it("fills in local mode's paths, the image and the poll interval", () => {
    const out = validateObject(slurmClusterKind, cluster({ mode: 'local' })) as SlurmCluster;
    assert.deepEqual(out.spec.local, { slurmConf: '/etc/slurm/slurm.conf', mungeSocketDir: '/run/munge', workDir: '/var/lib/minik8s/slurm-jobs' });
    assert.equal(out.spec.image, 'minik8s/slurm-client:22.05');
    assert.equal(out.spec.pollIntervalSeconds, 1);
  });

  it('takes ssh mode with a login node and a Secret, defaulting port and keys', () => {
    const out = validateObject(
      slurmClusterKind,
      cluster({ mode: 'ssh', ssh: { host: 'login.hpc.example', user: 'stu123', secretName: 'hpc-key' } }),
    ) as SlurmCluster;
    assert.deepEqual(out.spec.ssh, {
      host: 'login.hpc.example',
      port: 22,
      user: 'stu123',
      secretName: 'hpc-key',
      privateKeyKey: 'ssh-privatekey',
      knownHostsKey: 'known_hosts',
      workDir: 'minik8s-jobs',
    });
  });

  const refusals: [string, Record<string, unknown>, RegExp][] = [
    ['ssh mode without a login node', { mode: 'ssh' }, /spec\.ssh: Required value: mode ssh needs the login node/],
    ['ssh settings in local mode', { mode: 'local', ssh: { host: 'h', user: 'u', secretName: 's' } }, /spec\.ssh: Forbidden: only with mode ssh/],
    [
      'a relative work directory in local mode',
      { mode: 'local', local: { workDir: 'jobs' } },
      /spec\.local\.workDir: Invalid value: "jobs": must be an absolute path/,
    ],
    ['a path with ..', { mode: 'local', local: { workDir: '/srv/../etc' } }, /must not contain '\.\.'/],
    ['an unknown mode', { mode: 'kubernetes' }, /spec\.mode: Unsupported value: "kubernetes": supported values: "local", "ssh"/],
  ];
  for (const [name, spec, message] of refusals) {
    it(`refuses ${name}`, () =>
      assert.match(
        invalid(() => validateObject(slurmClusterKind, cluster(spec))),
        message,
      ));
  }
});

describe('Secret schema', () => {
  const secret = (extra: Record<string, unknown>) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'k', namespace: 'default' }, ...extra });

  it('folds stringData into base64 data and stores no stringData', () => {
    const out = validateObject(secretKind, secret({ data: { a: Buffer.from('one').toString('base64') }, stringData: { 'ssh-privatekey': 'KEY\n' } })) as Secret;
    assert.equal(out.type, 'Opaque');
    assert.equal('stringData' in out, false);
    assert.equal(secretValue(out, 'ssh-privatekey'), 'KEY\n');
    assert.equal(secretValue(out, 'a'), 'one');
  });

  it('refuses data that is not base64 and keys that could not name a file', () => {
    assert.match(
      invalid(() => validateObject(secretKind, secret({ data: { a: 'not base64' } }))),
      /must be base64/,
    );
    assert.match(
      invalid(() => validateObject(secretKind, secret({ stringData: { 'a/b': 'x' } }))),
      /a valid config key/,
    );
  });

  it('keeps an immutable Secret as it is', () => {
    const a = validateObject(secretKind, secret({ immutable: true, stringData: { k: 'v' } }));
    const b = validateObject(secretKind, secret({ immutable: true, stringData: { k: 'w' } }));
    assert.match(
      invalid(() => validateUpdate(secretKind, a, b)),
      /data: Forbidden: field is immutable/,
    );
  });

  it('prints the number of keys, never a value, in tables', () => {
    const out = validateObject(secretKind, secret({ stringData: { a: 'x', b: 'y' } }));
    assert.deepEqual(
      secretKind.columns!.map((c) => c.value(out)),
      ['Opaque', '2'],
    );
  });
});
