// `minik8s apply -f`: the command line; the work is in ../apply.ts.
import type { LeafCommand } from './command.js';
import { filenameFlag, recursiveFlag, str, strings } from './flags.js';

export const applyCommand: LeafCommand = {
  command: 'apply',
  describe: 'Create or update objects from manifests',
  builder: (y) =>
    y
      .option('f', filenameFlag)
      .option('R', recursiveFlag)
      .option('server-side', { type: 'boolean', describe: 'apply on the server, which records field ownership and refuses conflicts' })
      .option('force-conflicts', { type: 'boolean', describe: 'with --server-side, take fields other managers own' })
      .option('field-manager', { type: 'string', requiresArg: true, describe: 'with --server-side, the manager to record (default: minik8s)' }),
  run: async (ctx, a) =>
    (await import('../apply.js')).runApply(ctx, {
      filename: strings(a.f),
      recursive: Boolean(a.R),
      ...(a['server-side'] ? { serverSide: { fieldManager: str(a['field-manager']) ?? 'minik8s', force: Boolean(a['force-conflicts']) } } : {}),
    }),
};
