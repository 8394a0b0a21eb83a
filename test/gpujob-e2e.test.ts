// End to end, GPU jobs on a real one-machine Slurm from two simulated machines, the API over HTTPS: apply -> submitter pod (trusting the cluster CA) -> sbatch -> gpujob output, for a C job, the CUDA example (nvcc under Slurm, no driver to run), a broken build, two jobs at once, a cancelled job, and a cluster out of reach.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GpuJob } from '../src/core/api/gpujob.js';
import type { Secret } from '../src/core/api/secret.js';
import { ApiClient } from '../src/core/client/api-client.js';
import { waitFor } from '../src/core/wait-for.js';
import { BINARY } from './helpers/master.js';
import { createNetnsCluster, netnsSkipReason, type NetnsCluster } from './helpers/netns-node.js';
import { slurmSkipReason, startLoginNode, startSlurm, type RunningSlurm } from './helpers/slurm.js';

const NS = `gpu-${process.pid}`;
const ROOT = process.cwd();
const skip =
  netnsSkipReason() ??
  slurmSkipReason() ??
  (existsSync('/usr/local/bin/nvcc') || existsSync('/usr/local/cuda/bin/nvcc') ? undefined : 'needs nvcc (CUDA) to build the CUDA example');
const CUDA_ERROR = 'CUDA error: cudaErrorInsufficientDriver: CUDA driver version is insufficient for CUDA runtime version';

describe('GPU jobs on a real Slurm, from apply to gpujob output', { skip }, () => {
  let cluster: NetnsCluster | undefined;
  let slurm: RunningSlurm | undefined;
  let work = '';
  const timings: string[] = [];

  const master = () => cluster!.master;
  /** The admin's client over HTTPS, trusting the cluster CA only. */
  let client: ApiClient | undefined;
  /** The answer's JSON, as the caller says it is. */
  const api = async <T = unknown>(method: string, path: string, body?: unknown) =>
    (await client!.request(method, path, body === undefined ? {} : { body })) as T;
  const cli = (...args: string[]) => spawnSync(process.execPath, [BINARY, ...args], { env: master().env, encoding: 'utf8', timeout: 300_000 });
  const ok = (...args: string[]) => {
    const r = cli(...args);
    assert.equal(r.status, 0, `minik8s ${args.join(' ')}: ${r.stderr}${r.stdout}`);
    return r.stdout;
  };
  const job = (name: string) => api<GpuJob>('GET', `/apis/minik8s.io/v1/namespaces/${NS}/gpujobs/${name}`);
  const until = (name: string, what: string, test: (j: GpuJob) => boolean, timeoutMs = 300_000) =>
    waitFor(
      async () => {
        const j = await job(name);
        return test(j) ? j : undefined;
      },
      { timeoutMs, intervalMs: 250, description: `gpujob ${name} ${what}` },
    );
  const finished = (name: string) => until(name, 'to finish', (j) => j.status?.phase === 'Succeeded' || j.status?.phase === 'Failed');
  const output = (name: string) => {
    const dir = join(work, `out-${name}`);
    ok('gpujob', 'output', name, '-n', NS, '-o', dir);
    return { result: readFileSync(join(dir, 'result.out'), 'utf8'), error: readFileSync(join(dir, 'error.err'), 'utf8') };
  };
  const podsOf = async (j: GpuJob) =>
    (await api<{ items: unknown[] }>('GET', `/api/v1/namespaces/${NS}/pods?labelSelector=minik8s.io/gpujob-uid%3D${j.metadata.uid}`)).items;
  /** A job directory of files beside its manifest, applied through the CLI as users do. */
  const writeJob = (name: string, files: Record<string, string>, spec: Record<string, unknown> = {}) => {
    const dir = join(work, name);
    mkdirSync(join(dir, 'program'), { recursive: true });
    for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, 'program', file), text);
    writeFileSync(
      join(dir, 'job.yaml'),
      JSON.stringify({ apiVersion: 'minik8s.io/v1', kind: 'GpuJob', metadata: { name }, spec: { cluster: 'hpc', program: { path: 'program' }, ...spec } }),
    );
    return join(dir, 'job.yaml');
  };
  const lap = (started: number, what: string) => timings.push(`${what} in ${((Date.now() - started) / 1000).toFixed(1)} s`);

  before(
    async () => {
      const started = Date.now();
      work = mkdtempSync(join(tmpdir(), 'minik8s-gpujob-e2e-'));
      // The submitter image (cached: seconds when it is up to date), before the cluster copies the registry store.
      const built = spawnSync('bash', [join(ROOT, 'scripts', 'build-images.sh'), '--only', 'slurm-client'], { encoding: 'utf8', timeout: 15 * 60_000 });
      assert.equal(built.status, 0, `build-images.sh --only slurm-client: ${built.stderr}${built.stdout}`);
      lap(started, 'submitter image');
      // HTTPS with the cluster CA, as masters serve by default: the submitter pods must verify it.
      cluster = await createNetnsCluster({ machines: ['g1', 'g2'], tls: true, log: (line) => timings.push(line) });
      client = new ApiClient({ server: cluster.master.url, token: cluster.master.token, tls: { ca: cluster.master.ca } });
      slurm = await startSlurm({ controllerAddress: cluster.hostIP, gpus: 1, cpus: 2 });
      lap(started, `cluster and Slurm (controller ${cluster.hostIP}:${slurm.controllerPort}) up`);
      await api('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
      const clusters = join(work, 'clusters.yaml');
      writeFileSync(
        clusters,
        [
          { name: 'hpc', conf: slurm.conf },
          // A configuration naming a port nothing listens on: the cluster cannot be reached (until the test mends it).
          { name: 'down', conf: join(slurm.root, 'down.conf') },
        ]
          .map(({ name, conf }) =>
            JSON.stringify({
              apiVersion: 'minik8s.io/v1',
              kind: 'SlurmCluster',
              metadata: { name },
              spec: { mode: 'local', local: { slurmConf: conf, mungeSocketDir: slurm!.mungeSocketDir, workDir: slurm!.workDir }, pollIntervalSeconds: 0.5 },
            }),
          )
          .join('\n---\n'),
      );
      ok('apply', '-n', NS, '-f', clusters);
    },
    { timeout: 25 * 60_000 },
  );

  after(
    async () => {
      client?.close();
      await slurm?.stop().catch((err: Error) => console.log(`stopping Slurm: ${err.message}`));
      await cluster?.destroy();
      if (work) rmSync(work, { recursive: true, force: true });
      console.log(`gpujob e2e timings:\n  ${timings.join('\n  ')}`);
    },
    { timeout: 300_000 },
  );

  it('runs a Makefile C job over HTTPS: apply, Succeeded, the expected result.out, pods and job directory gone', async () => {
    assert.match(master().url, /^https:\/\//);
    const started = Date.now();
    assert.match(ok('apply', '-n', NS, '-f', join(ROOT, 'examples', 'gpu', 'hello-c.yaml')), /gpujob\.minik8s\.io\/hello-c created/);
    const j = await finished('hello-c');
    lap(started, 'C job: apply to Succeeded');
    assert.equal(j.status?.phase, 'Succeeded', JSON.stringify(j.status));
    assert.equal(j.status?.message, `Slurm job ${j.status?.jobId} COMPLETED on ${slurm!.nodeName}`);
    assert.equal(j.status?.exitCode, 0);
    assert.equal(j.status?.node, slurm!.nodeName);
    assert.ok(j.status?.startTime && j.status.completionTime && j.status.submitTime, JSON.stringify(j.status));
    const out = output('hello-c');
    assert.equal(out.result, 'cc -O2 -Wall -o hello hello.c\nhello from a Slurm batch job\nsum of the squares of 1..100 = 338350\n');
    assert.equal(out.error, '');
    assert.equal(j.status?.output, out.result);
    // The submitter reached the API over HTTPS with the cluster CA from the job's token Secret.
    const secret = await api<Secret>('GET', `/api/v1/namespaces/${NS}/secrets/gpujob-token-${j.metadata.uid}`);
    assert.equal(Buffer.from(secret.data?.['ca.crt'] ?? '', 'base64').toString('utf8'), master().ca);

    const table = ok('get', 'gpujobs', '-n', NS);
    assert.match(table, /^NAME\s+PHASE\s+SLURM-ID\s+NODE\s+AGE\n/);
    assert.match(table, new RegExp(`\\nhello-c\\s+Succeeded\\s+${j.status?.jobId}\\s+${slurm!.nodeName}\\s+\\d+s\\n`));
    const described = ok('describe', 'gpujob', 'hello-c', '-n', NS);
    assert.match(described, /Phase:\s+Succeeded/);
    assert.match(described, /Script:\s+make\n\s+make run/);
    assert.match(described, /sum of the squares of 1\.\.100 = 338350/);

    await waitFor(async () => (await podsOf(j)).length === 0, { timeoutMs: 60_000, intervalMs: 250, description: 'the submitter pod to be removed' });
    // The submitter removes it right after its last report.
    await waitFor(() => !existsSync(j.status!.jobDirectory!), {
      timeoutMs: 30_000,
      intervalMs: 100,
      description: 'the job directory to be removed once the results are collected',
    });
  });

  it('compiles the CUDA example with nvcc under Slurm; its run fails for want of a driver and the job is Failed with that error', async () => {
    const started = Date.now();
    ok('apply', '-n', NS, '-f', join(ROOT, 'examples', 'gpu', 'matmul.yaml'));
    const j = await finished('matmul');
    lap(started, 'CUDA job: apply to Failed');
    assert.equal(j.status?.phase, 'Failed', JSON.stringify(j.status));
    assert.equal(j.status?.reason, 'JobFailed');
    assert.equal(j.status?.message, `Slurm job ${j.status?.jobId} FAILED (exit code 2): ${CUDA_ERROR}`);
    assert.equal(j.status?.slurmState, 'FAILED');
    const out = output('matmul');
    // Built by nvcc on the Slurm node, then run: the binary exists, so the build succeeded.
    assert.equal(out.result, 'nvcc -O2 -arch=sm_90 -o matmul matmul.cu\n./matmul 1024\n');
    assert.equal(out.error.split('\n')[0], CUDA_ERROR);
  });

  it("fails a job whose build fails, with the compiler's message", async () => {
    const source = 'int main(void) {\n  int y = 1;\n  x = y;\n  return 0;\n}\n';
    ok('apply', '-n', NS, '-f', writeJob('broken', { 'broken.c': source, Makefile: 'broken: broken.c\n\tcc -o broken broken.c\n' }));
    const j = await finished('broken');
    assert.equal(j.status?.phase, 'Failed', JSON.stringify(j.status));
    // The compiler here, in the job's locale, says exactly this.
    writeFileSync(join(work, 'broken.c'), source);
    const cc = spawnSync('cc', ['-c', '-o', join(work, 'broken.o'), join(work, 'broken.c')], {
      cwd: work,
      encoding: 'utf8',
      env: { ...process.env, LANG: 'C.UTF-8', LC_ALL: '' },
    });
    const line = cc.stderr
      .split('\n')
      .find((l) => / error: /.test(l))!
      .replace(`${work}/`, '');
    assert.equal(j.status?.message, `Slurm job ${j.status?.jobId} FAILED (exit code 2): ${line}`);
    assert.match(output('broken').error, /make: \*\*\* \[Makefile:2: broken\] Error 1/);
  });

  it('runs two jobs at once without mixing their files', async () => {
    // Each writes its tag into mine.txt, then waits for the other at a meeting point outside both
    // job directories (so they must be running together), then reads mine.txt back.
    const meet = join(slurm!.root, 'meet');
    mkdirSync(meet);
    const source = [
      '#include <stdio.h>',
      '#include <unistd.h>',
      'int main(int argc, char **argv) {',
      '  char path[512], buf[16] = {0};',
      '  FILE *f = fopen("mine.txt", "w"); fprintf(f, "%s\\n", argv[2]); fclose(f);',
      '  snprintf(path, sizeof path, "%s/%s", argv[1], argv[2]); fclose(fopen(path, "w"));',
      '  snprintf(path, sizeof path, "%s/%s", argv[1], argv[3]);',
      '  for (int i = 0; access(path, F_OK) != 0; i++) {',
      '    if (i > 1200) { fprintf(stderr, "job %s never met job %s\\n", argv[2], argv[3]); return 3; }',
      '    usleep(100000);',
      '  }',
      '  sleep(1);',
      '  f = fopen("mine.txt", "r"); fgets(buf, sizeof buf, f);',
      '  printf("job %s read %s", argv[2], buf);',
      '  return 0;',
      '}',
      '',
    ].join('\n');
    const dir = join(work, 'pair');
    mkdirSync(dir);
    for (const [tag, other] of [
      ['a', 'b'],
      ['b', 'a'],
    ] as const) {
      const manifest = writeJob(
        `pair-${tag}`,
        { 'main.c': source, Makefile: 'main: main.c\n\t@cc -o main main.c\n' },
        { keepJobDirectory: true, script: `make\n./main ${meet} ${tag} ${other}` },
      );
      // One directory applied at once: each job's files beside the manifests (a job uploads nothing from outside its manifest's directory).
      cpSync(join(work, `pair-${tag}`, 'program'), join(dir, `program-${tag}`), { recursive: true });
      writeFileSync(join(dir, `${tag}.yaml`), readFileSync(manifest, 'utf8').replace('"path":"program"', `"path":"program-${tag}"`));
    }
    const started = Date.now();
    ok('apply', '-n', NS, '-f', dir);
    const [a, b] = await Promise.all([finished('pair-a'), finished('pair-b')]);
    lap(started, 'two jobs at once: apply to both Succeeded');
    assert.equal(a.status?.phase, 'Succeeded', JSON.stringify(a.status));
    assert.equal(b.status?.phase, 'Succeeded', JSON.stringify(b.status));
    assert.equal(output('pair-a').result, 'job a read a\n');
    assert.equal(output('pair-b').result, 'job b read b\n');
    assert.notEqual(a.status?.jobDirectory, b.status?.jobDirectory);
    for (const [j, tag] of [
      [a, 'a'],
      [b, 'b'],
    ] as const) {
      assert.equal(readFileSync(join(j.status!.jobDirectory!, 'mine.txt'), 'utf8'), `${tag}\n`);
      assert.deepEqual(readdirSync(j.status!.jobDirectory!).sort(), ['Makefile', 'error.err', 'job.sbatch', 'main', 'main.c', 'mine.txt', 'result.out']);
    }
  });

  it('cancels a running job in Slurm when the job is deleted', async () => {
    ok('apply', '-n', NS, '-f', writeJob('long', { 'note.txt': 'nothing to build\n' }, { script: 'echo started\nsleep 600' }));
    // The submitter records Slurm's state; the controller turns it into the phase a moment later: wait for both.
    const running = await until('long', 'to run in Slurm and be Running', (j) => j.status?.slurmState === 'RUNNING' && j.status?.phase === 'Running');
    assert.equal(running.status?.reason, 'SlurmRunning');
    const id = running.status!.jobId!;
    const started = Date.now();
    ok('delete', 'gpujob', 'long', '-n', NS, '--timeout', '240s');
    lap(started, 'delete of a running job (scancel through a canceller pod)');
    assert.match(slurm!.job(id)?.JobState ?? 'gone', /^CANCELLED/);
    assert.equal(slurm!.command('squeue', ['-h', '-o', '%i']).split('\n').includes(id), false);
    // The submitter and the canceller were deleted with the job; they stop within their grace period.
    await waitFor(async () => (await podsOf(running)).length === 0, { timeoutMs: 60_000, intervalMs: 250, description: "the job's pods to be gone" });
  });

  it('runs a job through a login node over SSH, with the key and host key from a Secret', async () => {
    const login = await startLoginNode(slurm!, cluster!.hostIP);
    try {
      const manifest = join(work, 'login.yaml');
      writeFileSync(
        manifest,
        [
          {
            apiVersion: 'v1',
            kind: 'Secret',
            metadata: { name: 'login-key' },
            type: 'kubernetes.io/ssh-auth',
            stringData: { 'ssh-privatekey': login.privateKey, known_hosts: login.knownHosts },
          },
          {
            apiVersion: 'minik8s.io/v1',
            kind: 'SlurmCluster',
            metadata: { name: 'login' },
            spec: {
              mode: 'ssh',
              ssh: { host: login.address, port: login.port, user: login.user, secretName: 'login-key', workDir: join(slurm!.root, 'ssh-jobs') },
              pollIntervalSeconds: 0.5,
            },
          },
        ]
          .map((o) => JSON.stringify(o))
          .join('\n---\n'),
      );
      ok('apply', '-n', NS, '-f', manifest);
      const secret = ok('describe', 'secret', 'login-key', '-n', NS);
      assert.match(secret, /ssh-privatekey:\s+\d+ bytes/);
      assert.doesNotMatch(secret + ok('get', 'secrets', '-n', NS), /PRIVATE KEY|ssh-ed25519/);
      const hello = Object.fromEntries(['hello.c', 'Makefile'].map((f) => [f, readFileSync(join(ROOT, 'examples', 'gpu', 'hello-c', f), 'utf8')]));
      const started = Date.now();
      ok('apply', '-n', NS, '-f', writeJob('via-ssh', hello, { cluster: 'login' }));
      const j = await finished('via-ssh');
      lap(started, 'C job over SSH: apply to Succeeded');
      assert.equal(j.status?.phase, 'Succeeded', JSON.stringify(j.status));
      assert.equal(output('via-ssh').result, 'cc -O2 -Wall -o hello hello.c\nhello from a Slurm batch job\nsum of the squares of 1..100 = 338350\n');
      assert.ok(j.status?.jobDirectory?.startsWith(join(slurm!.root, 'ssh-jobs')), j.status?.jobDirectory);
      await waitFor(() => !existsSync(j.status!.jobDirectory!), {
        timeoutMs: 30_000,
        intervalMs: 100,
        description: 'the job directory on the login node to be removed',
      });
    } finally {
      await login.stop();
    }
  });

  it('says Unknown while the cluster cannot be reached, and carries on when it can', async () => {
    const conf = readFileSync(slurm!.conf, 'utf8');
    const deadPort = conf.replace(/^SlurmctldPort=\d+$/m, 'SlurmctldPort=1');
    writeFileSync(join(slurm!.root, 'down.conf'), deadPort);
    ok('apply', '-n', NS, '-f', writeJob('later', { 'note.txt': 'x\n' }, { cluster: 'down', script: 'echo done' }));
    const unknown = await until('later', 'to be Unknown', (j) => j.status?.phase === 'Unknown', 180_000);
    assert.equal(unknown.status?.reason, 'ClusterUnreachable');
    assert.match(unknown.status!.message!, /^cannot reach the Slurm cluster: .*Unable to contact slurm controller/);
    writeFileSync(join(slurm!.root, 'down.conf'), conf);
    const j = await finished('later');
    assert.equal(j.status?.phase, 'Succeeded', JSON.stringify(j.status));
    assert.equal(output('later').result, 'done\n');
  });
});
