// `minik8s exec POD [-c C] [-i] -- CMD ARGS...`: runs a command in a container, prints its output, exits with its code.
import { podKind } from '../core/api/pod.js';
import { kindObjectPath } from '../core/client/api-client.js';
import { CliError } from './cli-error.js';
import type { CliContext } from './context.js';
import { containerFor, podName } from './logs.js';

export interface ExecArgs {
  pod?: string;
  container?: string;
  /** Send the CLI's stdin to the command (read to its end first: exec is not interactive here). */
  stdin?: boolean;
  command: string[];
}

interface ExecResult {
  exitCode?: number;
  stdout?: string;
  stderr?: string;
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

export async function runExec(ctx: CliContext, args: ExecArgs): Promise<number> {
  const name = podName(args.pod, 'exec');
  if (args.command.length === 0) throw new CliError('you must specify at least one command for the container');
  const container = await containerFor(ctx, name, args.container);
  const stdin = args.stdin ? await readAll(ctx.stdin) : undefined;
  const result = (await ctx.client().request('POST', `${kindObjectPath(podKind, name, ctx.namespace)}/exec`, {
    query: { container },
    body: { command: args.command, ...(stdin !== undefined ? { stdin } : {}) },
    signal: ctx.signal,
  })) as ExecResult;
  if (result.stdout) ctx.out(result.stdout);
  if (result.stderr) ctx.err(result.stderr);
  const code = typeof result.exitCode === 'number' ? result.exitCode : 1;
  // kubectl's words; the process exits with the command's own code.
  if (code !== 0) ctx.err(`command terminated with exit code ${code}\n`);
  return code;
}
