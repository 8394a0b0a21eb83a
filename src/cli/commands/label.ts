// `minik8s label` and `minik8s annotate`: the command lines; the work is in ../label.ts.
import type { LeafCommand } from './command.js';
import { str, strings } from './flags.js';

function metadataCommand(verb: 'label' | 'annotate', field: 'labels' | 'annotations', describe: string): LeafCommand {
  return {
    command: `${verb} [args..]`,
    describe,
    builder: (y) =>
      y
        .positional('args', { type: 'string', array: true, describe: 'TYPE NAME... or TYPE/NAME..., then KEY=VAL to set and KEY- to remove' })
        .option('overwrite', { type: 'boolean', describe: 'allow changing a key that already has a value' })
        .option('l', { alias: 'selector', type: 'string', requiresArg: true, describe: 'act on the objects this label selector matches' })
        .option('all', { type: 'boolean', describe: 'act on every object of the type in the namespace' }),
    run: async (ctx, a) =>
      (await import('../label.js')).runLabel(ctx, { field, args: strings(a.args), overwrite: Boolean(a.overwrite), selector: str(a.l), all: Boolean(a.all) }),
  };
}

export const labelCommand = metadataCommand('label', 'labels', 'Update the labels on objects: minik8s label pod/NAME KEY=VAL KEY-');
export const annotateCommand = metadataCommand('annotate', 'annotations', 'Update the annotations on objects: minik8s annotate pod/NAME KEY=VAL KEY-');
