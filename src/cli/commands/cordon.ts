// `minik8s cordon` and `uncordon`: the command lines (alike but for the verb); the work is in ../cordon.ts and ../uncordon.ts.
import type { LeafCommand } from './command.js';
import { str, strings } from './flags.js';

const nodeFlags: LeafCommand['builder'] = (y) =>
  y
    .positional('nodes', { type: 'string', array: true, describe: 'node names' })
    .option('l', { alias: 'selector', type: 'string', requiresArg: true, describe: 'every node matching this label selector' });

export const cordonCommand: LeafCommand = {
  command: 'cordon [nodes..]',
  describe: 'Mark nodes unschedulable',
  builder: nodeFlags,
  run: async (ctx, a) => (await import('../cordon.js')).runCordon(ctx, { nodes: strings(a.nodes), selector: str(a.l) }),
};

export const uncordonCommand: LeafCommand = {
  command: 'uncordon [nodes..]',
  describe: 'Mark nodes schedulable again',
  builder: nodeFlags,
  run: async (ctx, a) => (await import('../uncordon.js')).runUncordon(ctx, { nodes: strings(a.nodes), selector: str(a.l) }),
};
