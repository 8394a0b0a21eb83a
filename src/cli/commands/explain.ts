// `minik8s explain`: the command line; the work is in ../explain.ts.
import type { LeafCommand } from './command.js';

export const explainCommand: LeafCommand = {
  command: 'explain <resource>',
  describe: 'Describe the fields of a resource type, from the server',
  builder: (y) =>
    y
      .positional('resource', { type: 'string', describe: 'TYPE[.field...], e.g. pod.spec.containers' })
      .option('recursive', { type: 'boolean', default: false, describe: 'list the fields of fields, without descriptions' }),
  run: async (ctx, a) => (await import('../explain.js')).runExplain(ctx, { path: String(a.resource), recursive: Boolean(a.recursive) }),
};
