// GpuJob subresources: `submission` (everything a submitter pod needs, the SSH key included) and `output/result.out|error.err` (uploaded by the submitter, downloaded by `minik8s gpujob output`).
import type { Context } from 'hono';
import { gpuJobKind, type GpuJob } from '../../core/api/gpujob.js';
import { secretKind, secretValue, type Secret } from '../../core/api/secret.js';
import { slurmClusterKind, type SlurmCluster } from '../../core/api/slurmcluster.js';
import { NotFoundError } from '../../core/errors.js';
import { BATCH_SCRIPT_FILE, ERROR_FILE, jobDirectory, renderBatchScript, RESULT_FILE, slurmJobName } from '../../core/api/gpujob-batch-script.js';
import type { GpuJobOutputs } from './gpujob-outputs.js';
import { isOutputFile } from './gpujob-outputs.js';
import type { ObjectService } from './object-service.js';
import type { ApiHono } from './server.js';

export interface GpuJobSubmission {
  apiVersion: 'minik8s.io/v1';
  kind: 'GpuJobSubmission';
  namespace: string;
  name: string;
  uid: string;
  mode: 'local' | 'ssh';
  jobName: string;
  jobDirectory: string;
  batchScript: string;
  batchScriptFile: string;
  resultFile: string;
  errorFile: string;
  files: Record<string, string>;
  binaryFiles: Record<string, string>;
  keepJobDirectory: boolean;
  pollIntervalSeconds: number;
  /** The Slurm job an earlier submitter reported, for a new one to resume. */
  jobId?: string;
  local?: { slurmConf: string };
  ssh?: { host: string; port: number; user: string; privateKey: string; knownHosts?: string };
}

/** Pure: the submission for one job on one cluster (and the Secret holding the SSH key, in ssh mode). */
export function buildSubmission(job: GpuJob, cluster: SlurmCluster, secret?: Secret): GpuJobSubmission {
  const spec = cluster.spec;
  const namespace = job.metadata.namespace ?? 'default';
  const workDir = spec.mode === 'ssh' ? spec.ssh!.workDir : spec.local!.workDir;
  const submission: GpuJobSubmission = {
    apiVersion: 'minik8s.io/v1',
    kind: 'GpuJobSubmission',
    namespace,
    name: job.metadata.name ?? '',
    uid: job.metadata.uid ?? '',
    mode: spec.mode,
    jobName: slurmJobName(job),
    jobDirectory: jobDirectory(workDir, job),
    batchScript: renderBatchScript(job),
    batchScriptFile: BATCH_SCRIPT_FILE,
    resultFile: RESULT_FILE,
    errorFile: ERROR_FILE,
    files: job.spec.program.files ?? {},
    binaryFiles: job.spec.program.binaryFiles ?? {},
    keepJobDirectory: job.spec.keepJobDirectory ?? false,
    pollIntervalSeconds: spec.pollIntervalSeconds,
    ...(job.status?.jobId ? { jobId: job.status.jobId } : {}),
  };
  if (spec.mode === 'local') {
    submission.local = { slurmConf: spec.local!.slurmConf };
    return submission;
  }
  const ssh = spec.ssh!;
  const privateKey = secret ? secretValue(secret, ssh.privateKeyKey) : undefined;
  if (!secret || privateKey === undefined) {
    throw new NotFoundError(
      `secret "${ssh.secretName}" ${secret ? `has no key "${ssh.privateKeyKey}"` : 'not found'}: SlurmCluster "${cluster.metadata.name}" takes its SSH private key from it`,
    );
  }
  const knownHosts = secretValue(secret, ssh.knownHostsKey);
  submission.ssh = { host: ssh.host, port: ssh.port, user: ssh.user, privateKey, ...(knownHosts !== undefined ? { knownHosts } : {}) };
  return submission;
}

export interface GpuJobRoutesOptions {
  service: ObjectService;
  outputs: GpuJobOutputs;
}

const JOB_PATH = '/apis/minik8s.io/v1/namespaces/:namespace/gpujobs/:name';

/** The request body as chunks: the Node socket when there is one, else the web Request (tests). */
async function* bodyChunks(c: Context): AsyncIterable<Uint8Array> {
  const incoming = (c.env as { incoming?: NodeJS.ReadableStream } | undefined)?.incoming;
  if (incoming) {
    for await (const chunk of incoming) yield typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Uint8Array);
    return;
  }
  if (!c.req.raw.body) return;
  const reader = c.req.raw.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    yield value;
  }
}

export function registerGpuJobRoutes(app: ApiHono, options: GpuJobRoutesOptions): void {
  const { service, outputs } = options;
  const getJob = (c: Context) => service.get(gpuJobKind, c.req.param('namespace'), c.req.param('name') ?? '') as Promise<GpuJob>;

  app.get(`${JOB_PATH}/submission`, async (c) => {
    const job = await getJob(c);
    const namespace = job.metadata.namespace!;
    const cluster = (await service.get(slurmClusterKind, namespace, job.spec.cluster)) as SlurmCluster;
    let secret: Secret | undefined;
    if (cluster.spec.mode === 'ssh') {
      try {
        secret = (await service.get(secretKind, namespace, cluster.spec.ssh!.secretName)) as Secret;
      } catch (err) {
        if (!(err instanceof NotFoundError)) throw err;
      }
    }
    return c.json(buildSubmission(job, cluster, secret));
  });

  app.put(`${JOB_PATH}/output/:file`, async (c) => {
    const file = c.req.param('file') ?? '';
    if (!isOutputFile(file)) throw new NotFoundError(`a GpuJob has two outputs, result.out and error.err, not ${JSON.stringify(file)}`);
    const job = await getJob(c);
    const size = await outputs.write(job.metadata.uid!, file, bodyChunks(c));
    return c.json({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', message: `stored ${file} (${size} bytes)`, code: 200 });
  });

  app.get(`${JOB_PATH}/output/:file`, async (c) => {
    const file = c.req.param('file') ?? '';
    if (!isOutputFile(file)) throw new NotFoundError(`a GpuJob has two outputs, result.out and error.err, not ${JSON.stringify(file)}`);
    const job = await getJob(c);
    const found = await outputs.read(job.metadata.uid!, file);
    if (!found)
      throw new NotFoundError(`gpujob "${job.metadata.name}" has no ${file} yet: it is stored when the job ends (phase ${job.status?.phase ?? 'Pending'})`);
    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        try {
          for await (const chunk of found.stream) controller.enqueue(chunk as Uint8Array);
          controller.close();
        } catch (err) {
          controller.error(err);
        }
      },
    });
    return new Response(body, { status: 200, headers: { 'content-type': 'application/octet-stream', 'content-length': String(found.size) } });
  });
}
