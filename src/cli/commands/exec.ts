// `minik8s exec POD -- CMD`: the command line; the work is in ../exec.ts.
import type { LeafCommand } from './command.js';
import { str, strings } from './flags.js';

export const execCommand: LeafCommand = {
  command: 'exec [pod] [command..]',
  describe: 'Run a command in a container: minik8s exec POD [-c C] [-i] [-t] -- CMD ARGS...',
  builder: (y) =>
    y
      .positional('pod', { type: 'string', describe: 'POD or pod/POD' })
      .positional('command', { type: 'string', array: true, describe: 'the command and its arguments, after --' })
      .option('c', { alias: 'container', type: 'string', requiresArg: true, describe: 'the container (default: the only, annotated or first one)' })
      .option('i', { alias: 'stdin', type: 'boolean', describe: 'pass stdin to the command' })
      .option('t', { alias: 'tty', type: 'boolean', describe: 'give the command a terminal (raw mode on ours, resized with the window)' }),
  run: async (ctx, a) =>
    (await import('../exec.js')).runExec(ctx, {
      // Words after `--` land in `_` (behind the command name itself), not in the positional.
      pod: str(a.pod),
      container: str(a.c),
      stdin: Boolean(a.i),
      tty: Boolean(a.t),
      command: [...strings(a.command), ...strings(a._).slice(1)],
    }),
};
