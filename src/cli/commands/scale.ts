// `minik8s scale`: the command line; the work is in ../scale.ts.
import type { LeafCommand } from './command.js';
import { str, strings } from './flags.js';

export const scaleCommand: LeafCommand = {
  command: 'scale [resources..]',
  describe: 'Set the number of replicas of a ReplicaSet or Deployment: minik8s scale rs/NAME --replicas=N',
  builder: (y) =>
    y
      .positional('resources', { type: 'string', array: true, describe: 'TYPE NAME... or TYPE/NAME...' })
      .option('replicas', { type: 'string', requiresArg: true, describe: 'the new number of replicas' })
      .option('current-replicas', { type: 'string', requiresArg: true, describe: 'only scale if the number of replicas is this now' }),
  run: async (ctx, a) =>
    (await import('../scale.js')).runScale(ctx, { resources: strings(a.resources), replicas: str(a.replicas), currentReplicas: str(a['current-replicas']) }),
};
