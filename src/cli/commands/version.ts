// `minik8s version`: the command line; the work is in ../version.ts (main runs plain invocations without yargs).
import type { LeafCommand } from './command.js';
import { str } from './flags.js';

export const versionCommand: LeafCommand = {
  command: 'version',
  describe: 'Print the client and server versions',
  builder: (y) =>
    y
      .option('client', { type: 'boolean', describe: 'only the client version' })
      .option('o', { alias: 'output', type: 'string', requiresArg: true, describe: 'json' }),
  run: async (ctx, a) => (await import('../version.js')).runVersion(ctx, { client: Boolean(a.client), output: str(a.o) }),
};
