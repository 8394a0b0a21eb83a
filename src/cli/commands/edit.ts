// `minik8s edit`: the command line; the work is in ../edit.ts.
import type { LeafCommand } from './command.js';
import { str, strings } from './flags.js';

export const editCommand: LeafCommand = {
  command: 'edit [resources..]',
  describe: 'Edit an object in $KUBE_EDITOR or $EDITOR (default vi) and save the changes to the server',
  builder: (y) =>
    y
      .positional('resources', { type: 'string', array: true, describe: 'TYPE/NAME or TYPE NAME' })
      .option('o', { alias: 'output', type: 'string', requiresArg: true, describe: 'the format to edit in: yaml (default) or json' }),
  run: async (ctx, a) => (await import('../edit.js')).runEdit(ctx, { resources: strings(a.resources), output: str(a.o) }),
};
