// Benchmark of a trivial GPU job from `minik8s apply` to Succeeded, against sbatch to COMPLETED of the same batch script on the same Slurm in the same run (the floor); prints one JSON object (progress goes to stderr).
//
// It builds a one-machine simulated cluster (test/helpers/netns-node.ts: the master on a host
// bridge, a worker in a network namespace with its own dockerd) and a real one-machine Slurm
// (test/helpers/slurm.ts, with `batch_sched_delay=0`), whose controller the worker's pods reach
// over the bridge. A warm-up job puts the submitter image on the node. Then BENCH_JOBS times,
// alternating: (a) a GpuJob whose script is `echo hello`, timed from the start of `minik8s apply`
// (a new process, as a user runs it) until the API shows it Succeeded (polled every 50 ms), and
// (b) the floor: the batch script the master renders for such a job, submitted on the host with
// `sbatch` from a fresh directory, timed until `scontrol show job`, asked again as soon as it
// answers, reports it COMPLETED (sbatch --wait would add its own 2 s polling). The
// submitter polls Slurm every BENCH_POLL_SECONDS (the SlurmCluster default, 1 s). Everything made
// is removed at the end, also on failure or Ctrl-C.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GpuJob } from '../src/core/api/gpujob.js';
import { renderBatchScript } from '../src/core/api/gpujob-batch-script.js';
import { waitFor } from '../src/core/wait-for.js';
import { BINARY } from '../test/helpers/master.js';
import { createNetnsCluster, netnsSkipReason, type NetnsCluster } from '../test/helpers/netns-node.js';
import { slurmSkipReason, startSlurm, type RunningSlurm } from '../test/helpers/slurm.js';

const JOBS = Number(process.env.BENCH_JOBS ?? 5);
const POLL_SECONDS = Number(process.env.BENCH_POLL_SECONDS ?? 1);
const NS = `bench-gpujob-${process.pid}`;

const startedAt = performance.now();
function log(message: string): void {
  process.stderr.write(`[gpujob ${((performance.now() - startedAt) / 1000).toFixed(1)}s] ${message}\n`);
}

function stats(seconds: number[]): { median: number; mean: number; min: number; max: number; runs: number[] } {
  const sorted = [...seconds].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  const round = (x: number) => Math.round(x * 1000) / 1000;
  return {
    median: round(median),
    mean: round(seconds.reduce((a, b) => a + b, 0) / seconds.length),
    min: round(sorted[0]!),
    max: round(sorted[sorted.length - 1]!),
    runs: seconds.map(round),
  };
}

async function main(): Promise<void> {
  const skip = netnsSkipReason() ?? slurmSkipReason();
  if (skip) throw new Error(`cannot run: ${skip}`);
  let cluster: NetnsCluster | undefined;
  let slurm: RunningSlurm | undefined;
  const work = mkdtempSync(join(tmpdir(), 'minik8s-bench-gpujob-'));
  const stop = () => {
    log('interrupted: cleaning up');
    void (slurm?.stop() ?? Promise.resolve()).finally(() => void (cluster?.destroy() ?? Promise.resolve()).finally(() => process.exit(130)));
  };
  process.once('SIGINT', stop);
  try {
    const built = spawnSync('bash', [join(process.cwd(), 'scripts', 'build-images.sh'), '--only', 'slurm-client'], { encoding: 'utf8', timeout: 15 * 60_000 });
    if (built.status !== 0) throw new Error(`build-images.sh --only slurm-client: ${built.stderr}`);
    cluster = await createNetnsCluster({ machines: ['b1'], tls: false, log: (line) => log(line) });
    slurm = await startSlurm({ controllerAddress: cluster.hostIP });
    log(`Slurm up, controller ${cluster.hostIP}:${slurm.controllerPort}`);
    const master = cluster.master;
    const api = async (method: string, path: string, body?: unknown): Promise<unknown> => {
      const res = await fetch(`${master.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${master.token}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(30_000),
      });
      const json = (await res.json()) as { message?: string } | null;
      if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${json?.message}`);
      return json;
    };
    await api('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    await api('POST', `/apis/minik8s.io/v1/namespaces/${NS}/slurmclusters`, {
      apiVersion: 'minik8s.io/v1',
      kind: 'SlurmCluster',
      metadata: { name: 'hpc' },
      spec: {
        mode: 'local',
        local: { slurmConf: slurm.conf, mungeSocketDir: slurm.mungeSocketDir, workDir: slurm.workDir },
        pollIntervalSeconds: POLL_SECONDS,
      },
    });
    const manifest = (name: string) => {
      const dir = join(work, name);
      mkdirSync(dir);
      writeFileSync(join(dir, 'note.txt'), 'a trivial job\n');
      const file = join(work, `${name}.yaml`);
      writeFileSync(
        file,
        JSON.stringify({
          apiVersion: 'minik8s.io/v1',
          kind: 'GpuJob',
          metadata: { name },
          spec: { cluster: 'hpc', program: { path: name }, script: 'echo hello' },
        }),
      );
      return file;
    };
    const viaMinik8s = async (name: string): Promise<number> => {
      const file = manifest(name);
      const t0 = performance.now();
      const applied = spawnSync(process.execPath, [BINARY, 'apply', '-n', NS, '-f', file], { env: master.env, encoding: 'utf8', timeout: 120_000 });
      if (applied.status !== 0) throw new Error(`apply: ${applied.stderr}`);
      const job = await waitFor(
        async () => {
          const j = (await api('GET', `/apis/minik8s.io/v1/namespaces/${NS}/gpujobs/${name}`)) as GpuJob;
          return j.status?.phase === 'Succeeded' || j.status?.phase === 'Failed' ? j : undefined;
        },
        { timeoutMs: 300_000, intervalMs: 50, description: `gpujob ${name} to finish` },
      );
      const seconds = (performance.now() - t0) / 1000;
      if (job.status?.phase !== 'Succeeded') throw new Error(`gpujob ${name} ${job.status?.phase}: ${job.status?.message}`);
      return seconds;
    };
    const floor = (i: number): number => {
      const dir = join(slurm!.workDir, `floor-${i}`);
      mkdirSync(dir);
      const script = renderBatchScript({
        metadata: { name: `floor-${i}`, namespace: NS, uid: `floor${i}` },
        spec: { cluster: 'hpc', program: { files: { 'note.txt': '' } }, script: 'echo hello', slurm: {} } as GpuJob['spec'],
      });
      writeFileSync(join(dir, 'job.sbatch'), script);
      const env = { ...process.env, SLURM_CONF: slurm!.conf };
      const t0 = performance.now();
      const r = spawnSync('sbatch', ['--parsable', 'job.sbatch'], { cwd: dir, encoding: 'utf8', env, timeout: 60_000 });
      if (r.status !== 0) throw new Error(`sbatch: ${r.stderr}`);
      const id = r.stdout.trim().split(';')[0]!;
      // As closely as it can be seen: scontrol asked again as soon as it answers (sbatch --wait polls every 2 s or more).
      for (;;) {
        const state = /JobState=(\S+)/.exec(spawnSync('scontrol', ['show', 'job', '-o', id], { encoding: 'utf8', env, timeout: 60_000 }).stdout)?.[1];
        if (state && !['PENDING', 'CONFIGURING', 'RUNNING', 'COMPLETING'].includes(state)) {
          if (state !== 'COMPLETED') throw new Error(`floor job ${id} ended ${state}`);
          return (performance.now() - t0) / 1000;
        }
        if (performance.now() - t0 > 300_000) throw new Error(`floor job ${id} did not end within 300 s`);
      }
    };

    log('warm-up job (puts the submitter image on the node)');
    const warm = await viaMinik8s('warmup');
    log(`warm-up: ${warm.toFixed(2)} s`);
    floor(0);
    const measured: number[] = [];
    const floors: number[] = [];
    for (let i = 1; i <= JOBS; i++) {
      measured.push(await viaMinik8s(`trivial-${i}`));
      floors.push(floor(i));
      log(`round ${i}: apply to Succeeded ${measured[i - 1]!.toFixed(2)} s, sbatch to COMPLETED ${floors[i - 1]!.toFixed(2)} s`);
    }
    const m = stats(measured);
    const f = stats(floors);
    process.stdout.write(
      `${JSON.stringify(
        {
          benchmark: 'gpujob',
          machine: { cpus: cpus().length, model: cpus()[0]?.model },
          jobs: JOBS,
          pollIntervalSeconds: POLL_SECONDS,
          warmupSeconds: Math.round(warm * 1000) / 1000,
          applyToSucceededSeconds: m,
          floorSbatchToCompletedSeconds: f,
          ratio: { median: Math.round((m.median / f.median) * 100) / 100, mean: Math.round((m.mean / f.mean) * 100) / 100 },
          overheadMedianSeconds: Math.round((m.median - f.median) * 1000) / 1000,
        },
        null,
        2,
      )}\n`,
    );
  } finally {
    process.off('SIGINT', stop);
    await slurm?.stop().catch((err: Error) => log(`stopping Slurm: ${err.message}`));
    await cluster?.destroy();
    rmSync(work, { recursive: true, force: true });
  }
}

await main().catch((err) => {
  process.stderr.write(`bench gpujob failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
