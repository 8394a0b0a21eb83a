// `minik8s wait`: the command line; the work is in ../wait.ts.
import type { LeafCommand } from './command.js';
import { str, strings } from './flags.js';

export const waitCommand: LeafCommand = {
  command: 'wait [resources..]',
  describe: "Wait for a condition on objects: minik8s wait pod/NAME --for=condition=Ready|delete|jsonpath='{.status.phase}'=Running",
  builder: (y) =>
    y
      .positional('resources', { type: 'string', array: true, describe: 'TYPE NAME... or TYPE/NAME...' })
      .option('for', { type: 'string', requiresArg: true, describe: "condition=NAME[=VALUE], delete, create or jsonpath='{EXPR}'[=VALUE]" })
      .option('timeout', { type: 'string', requiresArg: true, describe: 'how long to wait, e.g. 30s (default), 5m' })
      .option('l', { alias: 'selector', type: 'string', requiresArg: true, describe: 'wait for the objects this label selector matches' })
      .option('all', { type: 'boolean', describe: 'wait for every object of the type in the namespace' }),
  run: async (ctx, a) =>
    (await import('../wait.js')).runWait(ctx, {
      resources: strings(a.resources),
      for: str(a.for),
      timeout: str(a.timeout),
      selector: str(a.l),
      all: Boolean(a.all),
    }),
};
