// `minik8s describe gpujob` and `describe secret`: a job's Slurm story (ids, times, exit code, the ends of its outputs), and a Secret's keys with sizes only.
import { jobScript, type GpuJob } from '../core/api/gpujob.js';
import type { Secret } from '../core/api/secret.js';
import { describeTime, type DescribeWriter } from './describe-writer.js';

/** Lines of a text block as values: kubectl prints multi-line values under the key. */
function lines(text: string | undefined): string[] {
  const trimmed = (text ?? '').replace(/\n+$/, '');
  return trimmed === '' ? [] : trimmed.split('\n');
}

function bytes(n: number | undefined): string {
  if (n === undefined) return '';
  return n < 1024 ? `${n} bytes` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

export function describeGpuJob(w: DescribeWriter, job: GpuJob): void {
  const st = job.status ?? {};
  w.field(0, 'Cluster', job.spec.cluster);
  w.field(0, 'Phase', job.metadata.deletionTimestamp ? `Terminating (${st.phase ?? 'Pending'})` : (st.phase ?? 'Pending'));
  if (st.reason) w.field(0, 'Reason', st.reason);
  if (st.message) w.field(0, 'Message', st.message);
  w.field(0, 'Slurm Job', st.jobId ? `${st.jobId}${st.jobName ? ` (${st.jobName})` : ''}` : undefined);
  w.field(0, 'Slurm State', st.slurmState ? `${st.slurmState}${st.slurmReason && st.slurmReason !== 'None' ? ` (${st.slurmReason})` : ''}` : undefined);
  w.field(0, 'Node', st.node);
  w.field(0, 'Job Directory', st.jobDirectory);
  w.field(0, 'Submitted', describeTime(st.submitTime));
  w.field(0, 'Started', describeTime(st.startTime));
  w.field(0, 'Finished', describeTime(st.completionTime));
  w.field(0, 'Exit Code', st.exitCode === undefined ? undefined : `${st.exitCode}${st.signal ? ` (signal ${st.signal})` : ''}`);
  if (st.clusterReachable === false) w.field(0, 'Cluster Reachable', `False: ${st.clusterMessage ?? ''}`);
  w.field(0, 'Submitter', st.attempts ? `pod ${st.podName ?? '?'} (attempt ${st.attempts})` : undefined);
  if (st.submitterError) w.field(0, 'Submitter Error', st.submitterError);

  const files = Object.keys(job.spec.program.files ?? {});
  const binary = Object.keys(job.spec.program.binaryFiles ?? {});
  const size =
    Object.values(job.spec.program.files ?? {}).reduce((n, t) => n + Buffer.byteLength(t), 0) +
    Object.values(job.spec.program.binaryFiles ?? {}).reduce((n, b) => n + Buffer.byteLength(b, 'base64'), 0);
  w.field(0, 'Program', `${files.length + binary.length} files, ${bytes(size)}: ${[...files, ...binary].sort().join(', ')}`);
  const slurm = Object.entries(job.spec.slurm ?? {}).filter(([, v]) => v !== undefined);
  if (slurm.length) {
    w.section(0, 'Slurm');
    for (const [k, v] of slurm) w.field(1, k, Array.isArray(v) ? v.join(' ') : String(v));
  } else {
    w.field(0, 'Slurm', '<cluster defaults>');
  }
  w.field(0, 'Script', lines(jobScript(job.spec)));
  if (st.resultsCollected) {
    w.field(0, `Output (result.out, ${bytes(st.outputBytes)})`, lines(st.output).length ? lines(st.output) : ['<empty>']);
    w.field(0, `Error (error.err, ${bytes(st.errorBytes)})`, lines(st.error).length ? lines(st.error) : ['<empty>']);
  }
}

export function describeSecret(w: DescribeWriter, secret: Secret): void {
  w.field(0, 'Type', secret.type);
  const keys = Object.keys(secret.data ?? {}).sort();
  if (keys.length === 0) {
    w.field(0, 'Data', '<none>');
    return;
  }
  // As kubectl: sizes, never values.
  w.section(0, 'Data');
  for (const k of keys) w.field(1, k, `${Buffer.byteLength(secret.data![k]!, 'base64')} bytes`);
}
