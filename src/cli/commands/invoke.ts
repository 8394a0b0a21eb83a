// `minik8s invoke`: the command line; the work is in ../invoke.ts.
import type { LeafCommand } from './command.js';
import { str } from './flags.js';

export const invokeCommand: LeafCommand = {
  command: 'invoke [target] [name]',
  describe: 'Call a function (or run a workflow) through the activator: minik8s invoke NAME [--data JSON|@file] | invoke workflow NAME --data JSON',
  builder: (y) =>
    y
      .positional('target', { type: 'string', describe: "the function, or `workflow` followed by the workflow's name" })
      .positional('name', { type: 'string', describe: 'the workflow (after `workflow`)' })
      .option('d', { alias: 'data', type: 'string', requiresArg: true, describe: 'the body: JSON (or text), @FILE, or @- for stdin' })
      .option('path', { type: 'string', requiresArg: true, describe: 'sub-path (and query) the handler sees, e.g. /items/7?full=1' })
      .option('method', { alias: 'X', type: 'string', requiresArg: true, describe: 'HTTP method (default POST)' })
      .option('activator', {
        type: 'string',
        requiresArg: true,
        describe: "the activator URL (default: $MINIK8S_ACTIVATOR, the function's URL, what the master says)",
      }),
  run: async (ctx, a) =>
    (await import('../invoke.js')).runInvoke(ctx, {
      target: str(a.target),
      name: str(a.name),
      data: str(a.d),
      path: str(a.path),
      method: str(a.method),
      activator: str(a.activator),
      env: ctx.env,
    }),
};
