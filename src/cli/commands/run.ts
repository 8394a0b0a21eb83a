// `minik8s run`: the command line; the work is in ../run.ts.
import type { LeafCommand } from './command.js';
import { str, strings } from './flags.js';

export const runCommand: LeafCommand = {
  command: 'run [name] [args..]',
  describe: 'Run an image in a pod: minik8s run NAME --image=IMAGE [--restart=Never] [--command] -- ARGS',
  builder: (y) =>
    y
      .positional('name', { type: 'string', describe: 'the pod name' })
      .positional('args', { type: 'string', array: true, describe: "after --: the container's arguments (with --command, its command)" })
      .option('image', { type: 'string', requiresArg: true, describe: 'the container image' })
      .option('command', { type: 'boolean', describe: 'the words after -- are the command, not arguments' })
      .option('restart', { type: 'string', requiresArg: true, describe: 'Always (default), OnFailure or Never' })
      .option('labels', { alias: 'l', type: 'string', requiresArg: true, describe: 'the pod labels, KEY=VAL,... (default run=NAME)' })
      .option('env', { type: 'string', array: true, requiresArg: true, describe: 'an environment variable, KEY=VAL (repeatable)' })
      .option('port', { type: 'string', requiresArg: true, describe: 'the port the container exposes' })
      .option('image-pull-policy', { type: 'string', requiresArg: true, describe: 'Always, IfNotPresent or Never' }),
  run: async (ctx, a) =>
    (await import('../run.js')).runRun(ctx, {
      name: str(a.name),
      image: str(a.image),
      args: [...strings(a.args), ...strings(a._).slice(1)],
      command: Boolean(a.command),
      restart: str(a.restart),
      labels: str(a.labels),
      env: strings(a.env),
      port: str(a.port),
      imagePullPolicy: str(a['image-pull-policy']),
    }),
};
