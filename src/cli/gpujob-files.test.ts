// A GpuJob manifest's program.path read by the CLI: a file, a directory (hidden files left out, binary ones base64), the limits, and every manifest in examples/gpu valid once read.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gpuJobKind, MAX_PROGRAM_BYTES, type GpuJob } from '../core/api/gpujob.js';
import { validateObject } from '../core/api/validate.js';
import { CliError } from './cli-error.js';
import { readProgram, resolveGpuJobManifest } from './gpujob-files.js';
import { readManifests } from './manifests.js';

describe('program.path', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'gpujob-files-'));
    mkdirSync(join(dir, 'prog', 'data'), { recursive: true });
    mkdirSync(join(dir, 'prog', '.git'));
    writeFileSync(join(dir, 'prog', 'Makefile'), 'run:\n\t./x\n');
    writeFileSync(join(dir, 'prog', 'x.cu'), '__global__ void k() {}\n');
    writeFileSync(join(dir, 'prog', 'data', 'in.bin'), Buffer.from([0, 1, 2, 255]));
    writeFileSync(join(dir, 'prog', '.git', 'HEAD'), 'ref\n');
    writeFileSync(join(dir, 'prog', '.hidden'), 'x');
    writeFileSync(join(dir, 'one.cu'), '__global__ void k() {}\n');
    writeFileSync(join(dir, 'job.yaml'), 'apiVersion: minik8s.io/v1\nkind: GpuJob\nmetadata: {name: j}\nspec:\n  cluster: hpc\n  program: {path: prog}\n');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('reads a directory relative to the manifest: text as text, binary as base64, hidden files left out', async () => {
    const [m] = await readManifests([join(dir, 'job.yaml')]);
    const spec = (m!.object as GpuJob).spec;
    assert.deepEqual(spec.program, {
      files: { Makefile: 'run:\n\t./x\n', 'x.cu': '__global__ void k() {}\n' },
      binaryFiles: { 'data/in.bin': Buffer.from([0, 1, 2, 255]).toString('base64') },
    });
    assert.doesNotThrow(() => validateObject(gpuJobKind, { ...m!.object, metadata: { name: 'j', namespace: 'default' } }));
  });

  it('reads a single source file under its own name', async () => {
    const out = await resolveGpuJobManifest(
      { apiVersion: 'minik8s.io/v1', kind: 'GpuJob', metadata: { name: 'j' }, spec: { cluster: 'hpc', program: { path: 'one.cu' } } },
      join(dir, 'x.yaml'),
    );
    assert.deepEqual((out as GpuJob).spec.program, { files: { 'one.cu': '__global__ void k() {}\n' } });
  });

  const refusals: [string, () => Promise<unknown>, RegExp][] = [
    ['a path that does not exist', () => readProgram(join(dir, 'nope')), /the program path ".*nope" does not exist/],
    [
      'both path and files',
      () =>
        resolveGpuJobManifest(
          { apiVersion: 'minik8s.io/v1', kind: 'GpuJob', metadata: { name: 'j' }, spec: { program: { path: 'prog', files: { a: 'b' } } } },
          join(dir, 'x.yaml'),
        ),
      /spec\.program has both path and files/,
    ],
  ];
  for (const [name, fn, message] of refusals) {
    it(`refuses ${name}`, async () => {
      await assert.rejects(fn, (err: unknown) => err instanceof CliError && message.test(err.message));
    });
  }

  it("refuses a path or a symbolic link that leads outside the manifest's directory, naming it (defect 13)", async () => {
    const outside = mkdtempSync(join(tmpdir(), 'gpujob-outside-'));
    try {
      writeFileSync(join(outside, 'id_rsa'), 'PRIVATE KEY\n');
      const manifestDir = join(dir, 'jobs');
      mkdirSync(join(manifestDir, 'prog'), { recursive: true });
      writeFileSync(join(manifestDir, 'prog', 'main.c'), 'int main(){}\n');
      const job = (path: string) => ({ apiVersion: 'minik8s.io/v1', kind: 'GpuJob', metadata: { name: 'j' }, spec: { cluster: 'hpc', program: { path } } });
      const manifest = join(manifestDir, 'job.yaml');
      await assert.rejects(
        resolveGpuJobManifest(job('../one.cu'), manifest),
        (err: unknown) => err instanceof CliError && /spec\.program\.path "\.\.\/one\.cu" is outside the manifest's directory/.test(err.message),
      );
      await assert.rejects(resolveGpuJobManifest(job(join(outside, 'id_rsa')), manifest), /is outside the manifest's directory/);
      // A link inside the program directory to a file elsewhere, and a program path that is such a link.
      symlinkSync(join(outside, 'id_rsa'), join(manifestDir, 'prog', 'key'));
      await assert.rejects(
        resolveGpuJobManifest(job('prog'), manifest),
        (err: unknown) => err instanceof CliError && /the program file "key" resolves to .*id_rsa, outside the manifest's directory/.test(err.message),
      );
      rmSync(join(manifestDir, 'prog', 'key'));
      symlinkSync(outside, join(manifestDir, 'elsewhere'));
      await assert.rejects(resolveGpuJobManifest(job('elsewhere'), manifest), /resolves to .*outside the manifest's directory/);
      // Links that stay inside are fine.
      symlinkSync(join(manifestDir, 'prog', 'main.c'), join(manifestDir, 'prog', 'alias.c'));
      const ok = await resolveGpuJobManifest(job('prog'), manifest);
      assert.deepEqual(Object.keys((ok as GpuJob).spec.program.files ?? {}).sort(), ['alias.c', 'main.c']);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it('refuses a program over the limit before sending anything', async () => {
    const big = join(dir, 'big');
    mkdirSync(big);
    writeFileSync(join(big, 'data.txt'), 'x'.repeat(MAX_PROGRAM_BYTES + 1));
    await assert.rejects(() => readProgram(big), /is more than 1 MiB: a GpuJob carries sources, not data sets/);
  });
});

describe('examples/gpu', () => {
  const root = join(process.cwd(), 'examples', 'gpu');
  const files = readdirSync(root)
    .filter((f) => f.endsWith('.yaml'))
    .sort();

  it('has the CUDA job, the C job and both kinds of cluster', () => {
    assert.deepEqual(files, ['hello-c.yaml', 'matmul.yaml', 'slurmcluster-local.yaml', 'slurmcluster-ssh.yaml']);
  });

  for (const file of files) {
    it(`${file} is valid once apply has read its program`, async () => {
      for (const m of await readManifests([join(root, file)])) {
        validateObject(m.def, { ...m.object, metadata: { namespace: 'default', ...m.object.metadata } });
      }
    });
  }

  it('uploads the CUDA example with its Makefile, and runs make then make run', async () => {
    const [m] = await readManifests([join(root, 'matmul.yaml')]);
    const job = validateObject(gpuJobKind, { ...m!.object, metadata: { namespace: 'default', ...m!.object.metadata } }) as GpuJob;
    assert.deepEqual(Object.keys(job.spec.program.files ?? {}).sort(), ['Makefile', 'matmul.cu']);
    assert.match(job.spec.program.files!['matmul.cu']!, /__shared__ float As\[TILE\]\[TILE\]/);
    assert.match(job.spec.program.files!.Makefile!, /-arch=\$\(ARCH\)/);
  });
});
