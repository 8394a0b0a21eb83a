// `minik8s auth can-i`: the command line; the work is in ../auth.ts.
import type { GroupCommand, LeafCommand } from './command.js';
import { str } from './flags.js';

const canI: LeafCommand = {
  command: 'can-i <verb> [resource] [name]',
  describe: 'Check whether an action is allowed: minik8s auth can-i create pods [-n NS]',
  builder: (y) =>
    y
      .positional('verb', { type: 'string', describe: 'get, list, watch, create, update, patch, delete, * ...' })
      .positional('resource', { type: 'string', describe: 'TYPE, TYPE/NAME, TYPE.GROUP or a URL path such as /healthz' })
      .positional('name', { type: 'string', describe: 'the object name' })
      .option('A', { alias: 'all-namespaces', type: 'boolean', describe: 'ask about every namespace' })
      .option('subresource', { type: 'string', requiresArg: true, describe: 'a subresource, e.g. log or scale' })
      .option('q', { alias: 'quiet', type: 'boolean', describe: 'print nothing; the exit code answers' })
      .option('as', { type: 'string', requiresArg: true, describe: 'ask as this user (needs the impersonate verb)' })
      .option('as-group', { type: 'string', array: true, requiresArg: true, describe: 'and as this group (repeatable)' }),
  run: async (ctx, a) =>
    (await import('../auth.js')).runCanI(ctx, {
      verb: String(a.verb),
      resource: str(a.resource),
      name: str(a.name),
      subresource: str(a.subresource),
      allNamespaces: Boolean(a.A),
      quiet: Boolean(a.q),
      as: str(a.as),
      asGroups: ((a['as-group'] as unknown[] | undefined) ?? []).map(String),
    }),
};

export const authCommand: GroupCommand = {
  command: 'auth',
  describe: 'Inspect authorization (can-i)',
  subcommands: [canI],
  required: 'auth needs a subcommand: can-i',
};
