// `minik8s set image|env`: the command lines; the work is in ../set.ts.
import type { GroupCommand, LeafCommand } from './command.js';
import { str, strings } from './flags.js';

const setImage: LeafCommand = {
  command: 'image [args..]',
  describe: "Update a pod's or pod template's container images: minik8s set image deployment/NAME CONTAINER=IMAGE",
  builder: (y) =>
    y
      .positional('args', { type: 'string', array: true, describe: 'TYPE NAME or TYPE/NAME, then CONTAINER=IMAGE (* for all)' })
      .option('l', { alias: 'selector', type: 'string', requiresArg: true, describe: 'act on the objects this label selector matches' })
      .option('all', { type: 'boolean', describe: 'act on every object of the type in the namespace' }),
  run: async (ctx, a) => (await import('../set.js')).runSetImage(ctx, { args: strings(a.args), selector: str(a.l), all: Boolean(a.all) }),
};

const setEnv: LeafCommand = {
  command: 'env [args..]',
  describe: "Update a pod's or pod template's environment variables: minik8s set env deployment/NAME KEY=VAL KEY-",
  builder: (y) =>
    y
      .positional('args', { type: 'string', array: true, describe: 'TYPE NAME or TYPE/NAME, then KEY=VAL to set and KEY- to remove' })
      .option('c', { alias: 'containers', type: 'string', requiresArg: true, describe: 'only this container (default: all)' })
      .option('list', { type: 'boolean', describe: 'print the variables instead of changing them' })
      .option('overwrite', { type: 'boolean', default: true, describe: 'change variables that already have a value' })
      .option('l', { alias: 'selector', type: 'string', requiresArg: true, describe: 'act on the objects this label selector matches' })
      .option('all', { type: 'boolean', describe: 'act on every object of the type in the namespace' }),
  run: async (ctx, a) =>
    (await import('../set.js')).runSetEnv(ctx, {
      args: strings(a.args),
      containers: str(a.c),
      list: Boolean(a.list),
      overwrite: a.overwrite !== false,
      selector: str(a.l),
      all: Boolean(a.all),
    }),
};

export const setCommand: GroupCommand = {
  command: 'set',
  describe: 'Set specific features on objects (image, env)',
  subcommands: [setImage, setEnv],
  required: 'set needs a subcommand: image or env',
};
