// `minik8s top pods|nodes`: the command line; the work is in ../top.ts.
import type { LeafCommand } from './command.js';
import { headersFlag, str } from './flags.js';

export const topCommand: LeafCommand = {
  command: 'top [resource] [name]',
  describe: 'Show CPU and memory use of pods or nodes',
  builder: (y) =>
    y
      .positional('resource', { type: 'string', describe: 'pods or nodes' })
      .positional('name', { type: 'string', describe: 'one pod or node' })
      .option('A', { alias: 'all-namespaces', type: 'boolean', describe: 'pods of every namespace' })
      .option('headers', headersFlag),
  run: async (ctx, a) =>
    (await import('../top.js')).runTop(ctx, {
      resource: str(a.resource),
      name: str(a.name),
      allNamespaces: Boolean(a.A),
      noHeaders: a.headers === false,
    }),
};
