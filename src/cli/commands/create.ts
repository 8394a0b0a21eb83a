// `minik8s create -f` and `minik8s create namespace|secret generic NAME`: the command line; the work is in ../create.ts and ../create-resource.ts.
import type { LeafCommand } from './command.js';
import { filenameFlag, recursiveFlag, str, strings } from './flags.js';

export const createCommand: LeafCommand = {
  command: 'create [words..]',
  describe: 'Create objects from manifests, one namespace, secret or configmap from flags, or a ServiceAccount token',
  builder: (y) =>
    y
      .positional('words', {
        type: 'string',
        array: true,
        describe: 'namespace NAME | secret generic NAME | configmap NAME | token SERVICEACCOUNT (without -f)',
      })
      .option('f', filenameFlag)
      .option('R', recursiveFlag)
      .option('from-literal', { type: 'string', array: true, requiresArg: true, describe: 'secret, configmap: a KEY=VALUE entry (repeatable)' })
      .option('from-file', {
        type: 'string',
        array: true,
        requiresArg: true,
        describe: 'secret, configmap: a file, KEY=FILE, or a directory of files (repeatable)',
      })
      .option('type', { type: 'string', requiresArg: true, describe: 'secret: its type (default Opaque)' })
      .option('duration', { type: 'string', requiresArg: true, describe: "token: its lifetime, e.g. 1h (default: the server's, 1h)" })
      .option('audience', { type: 'string', array: true, requiresArg: true, describe: 'token: an audience (repeatable; default the API server)' })
      .option('bound-object-kind', { type: 'string', requiresArg: true, describe: 'token: bind it to this kind of object (Pod)' })
      .option('bound-object-name', { type: 'string', requiresArg: true, describe: 'token: the object it is bound to' })
      .option('bound-object-uid', { type: 'string', requiresArg: true, describe: "token: that object's uid" }),
  run: async (ctx, a) => {
    const words = strings(a.words);
    if (words.length === 0) return (await import('../create.js')).runCreate(ctx, { filename: strings(a.f), recursive: Boolean(a.R) });
    if (words[0] === 'token') {
      return (await import('../create-token.js')).runCreateToken(ctx, {
        names: words.slice(1),
        duration: str(a.duration),
        audience: strings(a.audience),
        boundObjectKind: str(a['bound-object-kind']),
        boundObjectName: str(a['bound-object-name']),
        boundObjectUid: str(a['bound-object-uid']),
      });
    }
    return (await import('../create-resource.js')).runCreateResource(ctx, {
      words,
      fromLiteral: strings(a['from-literal']),
      fromFile: strings(a['from-file']),
      type: str(a.type),
    });
  },
};
