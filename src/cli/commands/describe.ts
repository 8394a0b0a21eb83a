// `minik8s describe`: the command line; the work is in ../describe.ts.
import type { LeafCommand } from './command.js';
import { str, strings } from './flags.js';

export const describeCommand: LeafCommand = {
  command: 'describe [resources..]',
  describe: 'Show details of objects and their events',
  builder: (y) =>
    y
      .positional('resources', { type: 'string', array: true, describe: 'TYPE [NAME...] or TYPE/NAME...' })
      .option('l', { alias: 'selector', type: 'string', requiresArg: true, describe: 'label selector' })
      .option('A', { alias: 'all-namespaces', type: 'boolean', describe: 'across all namespaces' }),
  run: async (ctx, a) =>
    (await import('../describe.js')).runDescribe(ctx, { resources: strings(a.resources), selector: str(a.l), allNamespaces: Boolean(a.A) }),
};
