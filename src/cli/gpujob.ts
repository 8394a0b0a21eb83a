// `minik8s gpujob output NAME [-o DIR]`: writes a finished GPU job's result.out and error.err, as the master stored them.
import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { gpuJobKind, isFinalPhase, type GpuJob } from '../core/api/gpujob.js';
import { kindObjectPath } from '../core/client/api-client.js';
import { streamRequest } from '../core/client/stream-request.js';
import { NotFoundError } from '../core/errors.js';
import { CliError } from './cli-error.js';
import type { CliContext } from './context.js';

export interface GpuJobOutputArgs {
  name?: string;
  /** The directory to write into (default: the working directory); made if missing. */
  dir?: string;
}

export const OUTPUT_FILES = ['result.out', 'error.err'] as const;

function jobName(arg: string | undefined): string {
  const name = arg?.replace(/^(gpujobs?|gj)(\.minik8s\.io)?\//, '');
  if (!name) throw new CliError("minik8s gpujob output needs the job's name: minik8s gpujob output NAME [-o DIR]");
  return name;
}

export async function runGpuJobOutput(ctx: CliContext, args: GpuJobOutputArgs): Promise<number> {
  const name = jobName(args.name);
  const client = ctx.client();
  const job = (await client.get(gpuJobKind, { namespace: ctx.namespace, name })) as GpuJob;
  const phase = job.status?.phase ?? 'Pending';
  if (!isFinalPhase(phase)) {
    throw new CliError(`gpujob "${name}" is ${phase}: its result.out and error.err are stored when it ends (minik8s get gpujob ${name} -w)`);
  }
  const dir = args.dir ?? '.';
  await mkdir(dir, { recursive: true });
  for (const file of OUTPUT_FILES) {
    let res: IncomingMessage;
    try {
      res = await streamRequest(client, 'GET', `${kindObjectPath(gpuJobKind, name, ctx.namespace)}/output/${file}`, { signal: ctx.signal });
    } catch (err) {
      // A job that failed before Slurm ran it (refused by sbatch, no submitter) has no files.
      if (err instanceof NotFoundError) {
        ctx.err(`gpujob "${name}" has no ${file}: ${job.status?.message ?? phase}\n`);
        continue;
      }
      throw err;
    }
    const path = join(dir, file);
    await pipeline(res, createWriteStream(path));
    ctx.out(`${path}\n`);
  }
  return 0;
}
