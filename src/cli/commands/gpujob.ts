// `minik8s gpujob output`: the command line; the work is in ../gpujob.ts.
import type { GroupCommand, LeafCommand } from './command.js';
import { str } from './flags.js';

const outputCommand: LeafCommand = {
  command: 'output [name]',
  describe: "Write a finished job's result.out and error.err into a directory",
  builder: (y) =>
    y
      .positional('name', { type: 'string', describe: 'the GpuJob' })
      .option('o', { alias: 'output-dir', type: 'string', requiresArg: true, describe: 'the directory to write them into (default: the working directory)' }),
  run: async (ctx, a) => (await import('../gpujob.js')).runGpuJobOutput(ctx, { name: str(a.name), dir: str(a.o) }),
};

export const gpujobCommand: GroupCommand = {
  command: 'gpujob',
  describe: 'GPU jobs on Slurm: minik8s gpujob output NAME [-o DIR]',
  subcommands: [outputCommand],
  required: 'minik8s gpujob needs a command: output',
};
