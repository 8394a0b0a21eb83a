// `minik8s api-resources`: the command line; the work is in ../api-resources.ts.
import type { LeafCommand } from './command.js';
import { str } from './flags.js';

export const apiResourcesCommand: LeafCommand = {
  command: 'api-resources',
  describe: 'List the resource types the cluster serves',
  builder: (y) =>
    y
      .option('namespaced', { type: 'boolean', describe: 'true: only namespaced types; false: only cluster-scoped ones' })
      .option('o', { alias: 'output', type: 'string', requiresArg: true, describe: 'wide or name' }),
  run: async (ctx, a) => (await import('../api-resources.js')).runApiResources(ctx, { namespaced: a.namespaced as boolean | undefined, output: str(a.o) }),
};
