// `minik8s function create|update|rollback|delete|logs|invocations`: the command lines; the work is in ../function.ts, ../function-logs.ts and ../function-invocations.ts.
import type { Argv } from 'yargs';
import type { FunctionWriteArgs } from '../function.js';
import type { Flags, GroupCommand, LeafCommand } from './command.js';
import { headersFlag, str, strings } from './flags.js';

/** The code and settings create and update both take. */
const codeFlags = (y: Argv) =>
  y
    .positional('name', { type: 'string', describe: 'the function' })
    .option('f', {
      alias: 'filename',
      type: 'string',
      requiresArg: true,
      describe: 'the code: handler.py (def handler(event, context)), a directory, or a .zip/.tar.gz',
    })
    .option('requirements', { type: 'string', requiresArg: true, describe: 'a requirements.txt, installed with pip when the image is built' })
    .option('handler', { type: 'string', requiresArg: true, describe: 'module.function (default handler.handler; -f hello.py implies hello.handler)' })
    .option('env', { type: 'string', requiresArg: true, describe: "NAME=VALUE for the function's environment (repeatable)" })
    .option('min-scale', { type: 'string', requiresArg: true, describe: 'pods kept even when idle (default 0: scale to zero)' })
    .option('max-scale', { type: 'string', requiresArg: true, describe: 'most pods (default 10)' })
    .option('target', { type: 'string', requiresArg: true, describe: 'requests in flight per pod the autoscaler aims at (default 10)' })
    .option('idle-grace', { type: 'string', requiresArg: true, describe: 'seconds without requests before going to zero pods (default 30)' })
    .option('timeout', { type: 'string', requiresArg: true, describe: 'seconds a request may take (default 60)' })
    .option('wait', { type: 'boolean', default: true, describe: 'follow the build until the version serves (--wait=false returns at once)' });

const writeArgs = (a: Flags): FunctionWriteArgs => ({
  name: str(a.name),
  file: str(a.f),
  requirements: str(a.requirements),
  handler: str(a.handler),
  env: strings(a.env),
  minScale: str(a['min-scale']),
  maxScale: str(a['max-scale']),
  target: str(a.target),
  idleGrace: str(a['idle-grace']),
  timeout: str(a.timeout),
  soft: Boolean(a.soft),
  hard: Boolean(a.hard),
  wait: a.wait !== false,
});

const createCommand: LeafCommand = {
  command: 'create [name]',
  describe: 'Create a function from code and build its first version',
  builder: codeFlags,
  run: async (ctx, a) => (await import('../function.js')).runFunctionCreate(ctx, writeArgs(a)),
};

const updateCommand: LeafCommand = {
  command: 'update [name]',
  describe: "Change a function's code or settings: a new version, rolled out --soft (default) or --hard",
  builder: (y) =>
    codeFlags(y)
      .option('soft', { type: 'boolean', describe: 'old pods serve until the new version has a Ready pod' })
      .option('hard', { type: 'boolean', describe: 'old pods stop at once; the next request cold-starts the new version' }),
  run: async (ctx, a) => (await import('../function.js')).runFunctionUpdate(ctx, writeArgs(a)),
};

const rollbackCommand: LeafCommand = {
  command: 'rollback [name]',
  describe: 'Serve an earlier version again (its image is reused: no build)',
  builder: (y) =>
    y
      .positional('name', { type: 'string', describe: 'the function' })
      .option('to', { type: 'string', requiresArg: true, describe: 'the version (default: the newest built one before the serving one)' })
      .option('soft', { type: 'boolean', describe: 'old pods serve until the version has a Ready pod' })
      .option('hard', { type: 'boolean', describe: 'old pods stop at once' })
      .option('wait', { type: 'boolean', default: true, describe: 'wait until the version serves' }),
  run: async (ctx, a) =>
    (await import('../function.js')).runFunctionRollback(ctx, {
      name: str(a.name),
      to: str(a.to),
      soft: Boolean(a.soft),
      hard: Boolean(a.hard),
      wait: a.wait !== false,
    }),
};

const deleteCommand: LeafCommand = {
  command: 'delete [names..]',
  describe: 'Delete functions with their versions, ReplicaSets and pods',
  builder: (y) =>
    y
      .positional('names', { type: 'string', array: true, describe: 'the functions' })
      .option('wait', { type: 'boolean', default: true, describe: 'wait until everything is gone' }),
  run: async (ctx, a) => (await import('../function.js')).runFunctionDelete(ctx, { names: strings(a.names), wait: a.wait !== false }),
};

const logsCommand: LeafCommand = {
  command: 'logs [name]',
  describe: "Print the logs of a function's pods, each line prefixed with its pod",
  builder: (y) =>
    y
      .positional('name', { type: 'string', describe: 'the function' })
      .option('f', { alias: 'follow', type: 'boolean', describe: 'keep streaming, following pods as they come' })
      .option('tail', { type: 'string', requiresArg: true, describe: 'only the last N lines of each pod (-1: all)' }),
  run: async (ctx, a) => (await import('../function-logs.js')).runFunctionLogs(ctx, { name: str(a.name), follow: Boolean(a.f), tail: str(a.tail) }),
};

const invocationsCommand: LeafCommand = {
  command: 'invocations [name] [id]',
  describe: "List a function's last calls (ID, VERSION, TRIGGER, STATUS, COLD, DURATION, AGE), or one in full",
  builder: (y) =>
    y
      .positional('name', { type: 'string', describe: 'the function' })
      .positional('id', { type: 'string', describe: 'one invocation, printed in full (result, error, traceback, stdout, stderr)' })
      .option('o', { alias: 'output', type: 'string', requiresArg: true, describe: 'wide, json or yaml (full records)' })
      .option('limit', { type: 'string', requiresArg: true, describe: 'only the newest N' })
      .option('headers', headersFlag),
  run: async (ctx, a) =>
    (await import('../function-invocations.js')).runFunctionInvocations(ctx, {
      name: str(a.name),
      id: str(a.id),
      output: str(a.o),
      limit: str(a.limit),
      noHeaders: a.headers === false,
    }),
};

export const functionCommand: GroupCommand = {
  command: 'function',
  describe: 'Serverless functions: minik8s function create|update|delete|rollback|logs NAME',
  subcommands: [createCommand, updateCommand, rollbackCommand, deleteCommand, logsCommand, invocationsCommand],
  required: 'minik8s function needs a command: create, update, delete, rollback, logs or invocations',
};
