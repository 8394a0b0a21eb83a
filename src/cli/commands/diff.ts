// `minik8s diff`: the command line; the work is in ../diff.ts.
import type { LeafCommand } from './command.js';
import { filenameFlag, recursiveFlag, strings } from './flags.js';

export const diffCommand: LeafCommand = {
  command: 'diff',
  describe: 'Show what apply -f would change, as a unified diff (exit 0: none, 1: differences, 2: error)',
  builder: (y) => y.option('f', filenameFlag).option('R', recursiveFlag),
  run: async (ctx, a) => (await import('../diff.js')).runDiff(ctx, { filename: strings(a.f), recursive: Boolean(a.R) }),
};
