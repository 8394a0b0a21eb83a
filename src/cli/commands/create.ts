// `minik8s create -f`: the command line; the work is in ../create.ts.
import type { LeafCommand } from './command.js';
import { filenameFlag, recursiveFlag, strings } from './flags.js';

export const createCommand: LeafCommand = {
  command: 'create',
  describe: 'Create objects from manifests',
  builder: (y) => y.option('f', filenameFlag).option('R', recursiveFlag),
  run: async (ctx, a) => (await import('../create.js')).runCreate(ctx, { filename: strings(a.f), recursive: Boolean(a.R) }),
};
