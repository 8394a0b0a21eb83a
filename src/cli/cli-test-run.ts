// Runs the CLI in-process against a test API server and collects what it printed, for the verbs' unit tests.
import { Readable } from 'node:stream';
import { runCli } from './main.js';

export interface CliRun {
  code: number;
  out: string;
  err: string;
}

export async function runCliAgainst(
  server: string,
  args: readonly string[],
  options: { now?: Date; env?: NodeJS.ProcessEnv; stdin?: string } = {},
): Promise<CliRun> {
  let out = '';
  let err = '';
  // Before any `--`, so that the words after it stay the command's own.
  const dashes = args.indexOf('--');
  const withServer = dashes < 0 ? [...args, '--server', server] : [...args.slice(0, dashes), '--server', server, ...args.slice(dashes)];
  const code = await runCli(withServer, {
    stdout: (s) => {
      out += s;
    },
    stderr: (s) => {
      err += s;
    },
    stdin: Readable.from([Buffer.from(options.stdin ?? '')]),
    env: options.env ?? {},
    now: () => options.now ?? new Date(),
  });
  return { code, out, err };
}
