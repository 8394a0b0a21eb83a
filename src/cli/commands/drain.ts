// `minik8s drain`: the command line; the work is in ../drain.ts.
import type { LeafCommand } from './command.js';
import { str } from './flags.js';

export const drainCommand: LeafCommand = {
  command: 'drain [node]',
  describe: 'Cordon a node and evict its pods, waiting until they are gone',
  builder: (y) =>
    y
      .positional('node', { type: 'string', describe: 'the node' })
      .option('force', { type: 'boolean', describe: 'also evict pods no controller manages (they will not come back)' })
      .option('delete-emptydir-data', { type: 'boolean', describe: 'also evict pods with emptyDir volumes (their data is lost)' })
      .option('ignore-daemonsets', { type: 'boolean', describe: 'leave DaemonSet-managed pods in place' })
      .option('grace-period', {
        type: 'string',
        requiresArg: true,
        describe: 'seconds each pod gets to stop (-1, the default: its own terminationGracePeriodSeconds)',
      })
      .option('timeout', { type: 'string', requiresArg: true, describe: 'how long evicting and waiting may take, e.g. 5m (default 0: no limit, as kubectl)' }),
  run: async (ctx, a) =>
    (await import('../drain.js')).runDrain(ctx, {
      node: str(a.node),
      force: Boolean(a.force),
      deleteEmptydirData: Boolean(a['delete-emptydir-data']),
      ignoreDaemonsets: Boolean(a['ignore-daemonsets']),
      gracePeriod: str(a['grace-period']),
      timeout: str(a.timeout),
    }),
};
