// `minik8s cluster-info` and `minik8s api-versions`: the command lines; the work is in ../cluster-info.ts.
import type { LeafCommand } from './command.js';

export const clusterInfoCommand: LeafCommand = {
  command: 'cluster-info',
  describe: 'Show where the control plane and cluster services answer',
  builder: (y) => y,
  run: async (ctx) => (await import('../cluster-info.js')).runClusterInfo(ctx),
};

export const apiVersionsCommand: LeafCommand = {
  command: 'api-versions',
  describe: 'Print the API group versions the server serves, one a line',
  builder: (y) => y,
  run: async (ctx) => (await import('../cluster-info.js')).runApiVersions(ctx),
};
