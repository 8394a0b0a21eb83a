// `minik8s apply -f`: the command line; the work is in ../apply.ts.
import type { LeafCommand } from './command.js';
import { filenameFlag, recursiveFlag, strings } from './flags.js';

export const applyCommand: LeafCommand = {
  command: 'apply',
  describe: 'Create or update objects from manifests',
  builder: (y) => y.option('f', filenameFlag).option('R', recursiveFlag),
  run: async (ctx, a) => (await import('../apply.js')).runApply(ctx, { filename: strings(a.f), recursive: Boolean(a.R) }),
};
