// `minik8s create -f` and `minik8s create namespace|secret generic NAME`: the command line; the work is in ../create.ts and ../create-resource.ts.
import type { LeafCommand } from './command.js';
import { filenameFlag, recursiveFlag, str, strings } from './flags.js';

export const createCommand: LeafCommand = {
  command: 'create [words..]',
  describe: 'Create objects from manifests, or one namespace or secret from flags',
  builder: (y) =>
    y
      .positional('words', { type: 'string', array: true, describe: 'namespace NAME | secret generic NAME | configmap NAME (without -f)' })
      .option('f', filenameFlag)
      .option('R', recursiveFlag)
      .option('from-literal', { type: 'string', array: true, requiresArg: true, describe: 'secret, configmap: a KEY=VALUE entry (repeatable)' })
      .option('from-file', {
        type: 'string',
        array: true,
        requiresArg: true,
        describe: 'secret, configmap: a file, KEY=FILE, or a directory of files (repeatable)',
      })
      .option('type', { type: 'string', requiresArg: true, describe: 'secret: its type (default Opaque)' }),
  run: async (ctx, a) => {
    const words = strings(a.words);
    if (words.length === 0) return (await import('../create.js')).runCreate(ctx, { filename: strings(a.f), recursive: Boolean(a.R) });
    return (await import('../create-resource.js')).runCreateResource(ctx, {
      words,
      fromLiteral: strings(a['from-literal']),
      fromFile: strings(a['from-file']),
      type: str(a.type),
    });
  },
};
