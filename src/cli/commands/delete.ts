// `minik8s delete`: the command line; the work is in ../delete.ts.
import type { LeafCommand } from './command.js';
import { filenameFlag, recursiveFlag, str, strings } from './flags.js';

export const deleteCommand: LeafCommand = {
  command: 'delete [resources..]',
  describe: 'Delete objects by type and name, selector, or manifest',
  builder: (y) =>
    y
      .positional('resources', { type: 'string', array: true, describe: 'TYPE NAME... or TYPE/NAME...' })
      .option('f', filenameFlag)
      .option('R', recursiveFlag)
      .option('l', { alias: 'selector', type: 'string', requiresArg: true, describe: 'delete the objects matching this label selector' })
      .option('all', { type: 'boolean', describe: 'delete every object of the type in the namespace' })
      .option('cascade', { type: 'string', requiresArg: true, describe: 'background (default), foreground or orphan' })
      .option('ignore-not-found', { type: 'boolean', describe: 'treat missing objects as deleted' })
      .option('grace-period', { type: 'string', requiresArg: true, describe: 'seconds a pod gets to stop (-1: its own terminationGracePeriodSeconds)' })
      .option('now', { type: 'boolean', describe: 'stop pods at once (a grace period of 1 s)' })
      .option('force', { type: 'boolean', describe: 'with --grace-period=0: remove from the API without waiting for the containers to stop' })
      .option('wait', { type: 'boolean', default: true, describe: 'wait until the objects are gone (--wait=false to return at once)' })
      .option('timeout', { type: 'string', requiresArg: true, describe: 'how long --wait may take, e.g. 60s (default: no limit)' }),
  run: async (ctx, a) =>
    (await import('../delete.js')).runDelete(ctx, {
      resources: strings(a.resources),
      filename: strings(a.f),
      recursive: Boolean(a.R),
      selector: str(a.l),
      all: Boolean(a.all),
      cascade: str(a.cascade),
      ignoreNotFound: Boolean(a['ignore-not-found']),
      gracePeriod: str(a['grace-period']),
      now: Boolean(a.now),
      force: Boolean(a.force),
      wait: a.wait !== false,
      timeout: str(a.timeout),
    }),
};
