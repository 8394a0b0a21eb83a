// `minik8s events`: the command line; the work is in ../events.ts.
import type { LeafCommand } from './command.js';
import { headersFlag, str, strings } from './flags.js';

export const eventsCommand: LeafCommand = {
  command: 'events',
  describe: 'List events, oldest first: minik8s events [-A] [--for TYPE/NAME] [--types Warning,Normal] [-w]',
  builder: (y) =>
    y
      .option('A', { alias: 'all-namespaces', type: 'boolean', describe: 'events of every namespace' })
      .option('for', { type: 'string', requiresArg: true, describe: 'only events about this object, TYPE/NAME' })
      .option('types', { type: 'string', array: true, requiresArg: true, describe: 'only events of these types: Normal, Warning (comma-separated)' })
      .option('o', { alias: 'output', type: 'string', requiresArg: true, describe: 'json or yaml' })
      .option('headers', headersFlag)
      .option('w', { alias: 'watch', type: 'boolean', describe: 'after the current events, print each new one as it comes, until interrupted' }),
  run: async (ctx, a) =>
    (await import('../events.js')).runEvents(ctx, {
      allNamespaces: Boolean(a.A),
      for: str(a.for),
      types: strings(a.types),
      output: str(a.o),
      noHeaders: a.headers === false,
      watch: Boolean(a.w),
    }),
};
