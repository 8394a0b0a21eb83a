// `minik8s rollout status|history|undo|pause|resume`: the command line; the work is in ../rollout.ts.
import type { RolloutCommand } from '../rollout.js';
import type { LeafCommand } from './command.js';
import { str, strings } from './flags.js';

export const rolloutCommand: LeafCommand = {
  command: 'rollout [command] [resources..]',
  describe: 'Manage the rollout of a Deployment: minik8s rollout status|history|undo|pause|resume deploy/NAME',
  builder: (y) =>
    y
      .positional('command', { type: 'string', describe: 'status, history, undo, pause or resume' })
      .positional('resources', { type: 'string', array: true, describe: 'deploy/NAME or deployment NAME' })
      .option('to-revision', { type: 'string', requiresArg: true, describe: 'undo: the revision to roll back to (default: the previous one)' })
      .option('revision', { type: 'string', requiresArg: true, describe: 'history: show the pod template of this revision' })
      .option('watch', { alias: 'w', type: 'boolean', default: true, describe: 'status: wait until the rollout finishes (--watch=false reports once)' })
      .option('timeout', { type: 'string', requiresArg: true, describe: 'status: seconds to wait before giving up (0: forever)' }),
  run: async (ctx, a) =>
    (await import('../rollout.js')).runRollout(ctx, {
      // Checked against the known subcommands by runRollout, which names them in its error.
      command: str(a.command) as RolloutCommand,
      resources: strings(a.resources),
      toRevision: str(a['to-revision']),
      revision: str(a.revision),
      watch: a.watch !== false,
      timeoutSeconds: str(a.timeout),
    }),
};
