// `minik8s token create|list|delete`: the command lines; the work is in ../token.ts.
import type { GroupCommand, LeafCommand } from './command.js';
import { headersFlag, str, strings } from './flags.js';

const createCommand: LeafCommand = {
  command: 'create',
  describe: 'Make a join token and print it (only the token)',
  builder: (y) =>
    y
      .option('ttl', { type: 'string', requiresArg: true, describe: 'how long it works, e.g. 24h, 90m, 1h30m (default 24h); 0: never expires' })
      .option('description', { type: 'string', requiresArg: true, describe: 'what the token is for' }),
  run: async (ctx, a) => (await import('../token.js')).runToken(ctx, { action: 'create', ttl: str(a.ttl), description: str(a.description) }),
};

const listCommand: LeafCommand = {
  command: 'list',
  describe: 'List join tokens (IDs and expiry, never secrets)',
  builder: (y) => y.option('headers', headersFlag),
  run: async (ctx, a) => (await import('../token.js')).runToken(ctx, { action: 'list', noHeaders: a.headers === false }),
};

const deleteCommand: LeafCommand = {
  command: 'delete [ids..]',
  describe: 'Revoke join tokens by ID',
  builder: (y) => y.positional('ids', { type: 'string', array: true, describe: 'token IDs (the part before the dot)' }),
  run: async (ctx, a) => (await import('../token.js')).runToken(ctx, { action: 'delete', ids: strings(a.ids) }),
};

export const tokenCommand: GroupCommand = {
  command: 'token',
  describe: 'Manage join tokens: minik8s token create|list|delete',
  subcommands: [createCommand, listCommand, deleteCommand],
  required: 'minik8s token needs a command: create, list or delete',
};
