// `minik8s patch`: the command line; the work is in ../patch.ts.
import type { LeafCommand } from './command.js';
import { str, strings } from './flags.js';

export const patchCommand: LeafCommand = {
  command: 'patch [resources..]',
  describe: 'Update fields of an object with a strategic merge, JSON merge or JSON patch',
  builder: (y) =>
    y
      .positional('resources', { type: 'string', array: true, describe: 'TYPE NAME or TYPE/NAME' })
      .option('p', { alias: 'patch', type: 'string', requiresArg: true, describe: 'the patch, JSON or YAML' })
      .option('patch-file', { type: 'string', requiresArg: true, describe: 'a file holding the patch' })
      .option('type', { type: 'string', requiresArg: true, describe: 'strategic (default), merge or json' })
      .option('subresource', { type: 'string', requiresArg: true, describe: 'patch this subresource, e.g. status or scale' }),
  run: async (ctx, a) =>
    (await import('../patch.js')).runPatch(ctx, {
      resources: strings(a.resources),
      patch: str(a.p),
      patchFile: str(a['patch-file']),
      type: str(a.type),
      subresource: str(a.subresource),
    }),
};
