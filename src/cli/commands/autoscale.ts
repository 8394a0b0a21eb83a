// `minik8s autoscale`: the command line; the work is in ../autoscale.ts.
import type { LeafCommand } from './command.js';
import { str, strings } from './flags.js';

export const autoscaleCommand: LeafCommand = {
  command: 'autoscale [resources..]',
  describe: 'Create a HorizontalPodAutoscaler for a Deployment or ReplicaSet: minik8s autoscale deployment NAME --min=2 --max=10 --cpu-percent=80',
  builder: (y) =>
    y
      .positional('resources', { type: 'string', array: true, describe: 'TYPE NAME or TYPE/NAME (deployment, replicaset)' })
      .option('min', { type: 'string', requiresArg: true, describe: 'the fewest pods (default 1)' })
      .option('max', { type: 'string', requiresArg: true, describe: 'the most pods (required)' })
      .option('cpu-percent', {
        type: 'string',
        requiresArg: true,
        describe: "the target average cpu utilization, percent of the pods' requests (default: the server's, 80)",
      })
      .option('name', { type: 'string', requiresArg: true, describe: "the autoscaler's name (default: the target's)" }),
  run: async (ctx, a) =>
    (await import('../autoscale.js')).runAutoscale(ctx, {
      resources: strings(a.resources),
      min: str(a.min),
      max: str(a.max),
      cpuPercent: str(a['cpu-percent']),
      name: str(a.name),
    }),
};
