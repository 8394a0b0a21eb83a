// `minik8s logs`: the command line; the work is in ../logs.ts.
import type { LeafCommand } from './command.js';
import { str } from './flags.js';

export const logsCommand: LeafCommand = {
  command: 'logs [pod]',
  describe: 'Print the log of a container in a pod',
  builder: (y) =>
    y
      .positional('pod', { type: 'string', describe: 'POD or pod/POD' })
      .option('c', { alias: 'container', type: 'string', requiresArg: true, describe: 'the container (default: the only, annotated or first one)' })
      .option('f', { alias: 'follow', type: 'boolean', describe: 'keep streaming new lines' })
      .option('tail', { type: 'string', requiresArg: true, describe: 'only the last N lines (-1: all)' })
      .option('p', { alias: 'previous', type: 'boolean', describe: 'the log of the previous (restarted) instance' })
      .option('timestamps', { type: 'boolean', describe: 'prefix each line with its time' }),
  run: async (ctx, a) =>
    (await import('../logs.js')).runLogs(ctx, {
      pod: str(a.pod),
      container: str(a.c),
      follow: Boolean(a.f),
      tail: str(a.tail),
      previous: Boolean(a.p),
      timestamps: Boolean(a.timestamps),
    }),
};
