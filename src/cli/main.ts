// The CLI: global flags, the command modules registered from one list, and error reporting.
import type { Argv } from 'yargs';
import { loadClientConfig } from '../core/client-config.js';
import { ApiClient } from '../core/client/api-client.js';
import { formatError } from './cli-error.js';
import { apiResourcesCommand } from './commands/api-resources.js';
import { explainCommand } from './commands/explain.js';
import { applyCommand } from './commands/apply.js';
import { autoscaleCommand } from './commands/autoscale.js';
import { commandName, type CliCommand, type Flags, type LeafCommand } from './commands/command.js';
import { cordonCommand, uncordonCommand } from './commands/cordon.js';
import { createCommand } from './commands/create.js';
import { deleteCommand } from './commands/delete.js';
import { describeCommand } from './commands/describe.js';
import { drainCommand } from './commands/drain.js';
import { execCommand } from './commands/exec.js';
import { portForwardCommand } from './commands/port-forward.js';
import { str } from './commands/flags.js';
import { functionCommand } from './commands/function.js';
import { getCommand } from './commands/get.js';
import { gpujobCommand } from './commands/gpujob.js';
import { imageCommand } from './commands/image.js';
import { invokeCommand } from './commands/invoke.js';
import { logsCommand } from './commands/logs.js';
import { rolloutCommand } from './commands/rollout.js';
import { scaleCommand } from './commands/scale.js';
import { tokenCommand } from './commands/token.js';
import { topCommand } from './commands/top.js';
import { versionCommand } from './commands/version.js';
import { kubeconfigCommand } from './commands/kubeconfig.js';
import { certificateCommand } from './commands/certificate.js';
import { workflowCommand } from './commands/workflow.js';
import { annotateCommand, labelCommand } from './commands/label.js';
import { patchCommand } from './commands/patch.js';
import { setCommand } from './commands/set.js';
import { runCommand } from './commands/run.js';
import { authCommand } from './commands/auth.js';
import { apiVersionsCommand, clusterInfoCommand } from './commands/cluster-info.js';
import { waitCommand } from './commands/wait.js';
import { eventsCommand } from './commands/events.js';
import { diffCommand } from './commands/diff.js';
import { editCommand } from './commands/edit.js';
import { dnsCommand } from './commands/dns.js';
import type { CliContext } from './context.js';

/** Where the CLI looks when neither flags, environment nor ~/.minik8s/config name a server. */
export const DEFAULT_SERVER = 'https://127.0.0.1:6443';

/**
 * Every command, in the order `--help` lists them. The modules hold only flags and a lazy import
 * of their implementation, so loading all of them costs little even for `version`.
 */
export const COMMAND_MODULES: readonly CliCommand[] = [
  applyCommand,
  createCommand,
  getCommand,
  describeCommand,
  deleteCommand,
  imageCommand,
  logsCommand,
  cordonCommand,
  uncordonCommand,
  drainCommand,
  execCommand,
  portForwardCommand,
  functionCommand,
  invokeCommand,
  rolloutCommand,
  scaleCommand,
  autoscaleCommand,
  topCommand,
  tokenCommand,
  workflowCommand,
  gpujobCommand,
  versionCommand,
  kubeconfigCommand,
  certificateCommand,
  apiResourcesCommand,
  explainCommand,
  labelCommand,
  annotateCommand,
  patchCommand,
  setCommand,
  runCommand,
  authCommand,
  clusterInfoCommand,
  apiVersionsCommand,
  waitCommand,
  eventsCommand,
  diffCommand,
  editCommand,
  dnsCommand,
];

/** The command words, sorted (the order "Did you mean this?" suggests them in). */
export const COMMANDS: readonly string[] = COMMAND_MODULES.map(commandName).sort();

export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  stdin: NodeJS.ReadableStream;
  env: NodeJS.ProcessEnv;
  now(): Date;
  signal?: AbortSignal;
}

interface GlobalFlags {
  server?: string;
  token?: string;
  kubeconfig?: string;
  namespace?: string;
}

/** Thrown from yargs' fail hook: a usage mistake, printed with a pointer to --help. */
class UsageError extends Error {}

/** Builds the per-run context; the client (and config file read) only when a command asks. */
function contextFor(io: CliIo, flags: GlobalFlags, clients: ApiClient[]): CliContext {
  let client: ApiClient | undefined;
  return {
    namespace: flags.namespace || 'default',
    namespaceExplicit: Boolean(flags.namespace),
    client() {
      if (!client) {
        const config = loadClientConfig({ server: flags.server, token: flags.token, kubeconfig: flags.kubeconfig, env: io.env });
        client = new ApiClient({
          server: config.server || DEFAULT_SERVER,
          token: config.token,
          tls: { ca: config.ca, cert: config.cert, key: config.key },
        });
        clients.push(client);
      }
      return client;
    },
    out: io.stdout,
    err: io.stderr,
    stdin: io.stdin,
    now: io.now,
    signal: io.signal,
    env: io.env,
  };
}

/** Levenshtein distance, for "Did you mean this?" on mistyped commands. */
function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length]!;
}

const GLOBAL_VALUE_FLAGS = new Set(['--server', '--token', '-n', '--namespace']);

/** Reads one global flag at argv[i] into `flags`; returns how many arguments it used (0: not a global flag). */
function readGlobalFlag(argv: readonly string[], i: number, flags: GlobalFlags): number {
  const arg = argv[i]!;
  const eq = /^(--server|--token|--namespace|-n)=(.*)$/.exec(arg);
  let name: string;
  let value: string;
  let used: number;
  if (eq) [name, value, used] = [eq[1]!, eq[2]!, 1];
  else if (GLOBAL_VALUE_FLAGS.has(arg) && i + 1 < argv.length) [name, value, used] = [arg, argv[i + 1]!, 2];
  else return 0;
  if (name === '--server') flags.server = value;
  else if (name === '--token') flags.token = value;
  else flags.namespace = value;
  return used;
}

/**
 * Splits leading global flags from the command word without loading yargs: lets `version`
 * skip yargs entirely (it costs ~100 ms to load) and gives kubectl's unknown-command error.
 * Returns undefined when the arguments are anything but plain global flags before a word.
 */
export function scanCommand(argv: readonly string[]): { flags: GlobalFlags; command: string; rest: string[] } | undefined {
  const flags: GlobalFlags = {};
  for (let i = 0; i < argv.length; ) {
    const used = readGlobalFlag(argv, i, flags);
    if (used) {
      i += used;
      continue;
    }
    if (argv[i]!.startsWith('-')) return undefined;
    return { flags, command: argv[i]!, rest: argv.slice(i + 1) };
  }
  return undefined;
}

/** `minik8s version [--client] [-o json]` plus global flags, nothing else: handled without yargs. */
export function fastVersionArgs(rest: readonly string[], flags: GlobalFlags): { client: boolean; output?: string } | undefined {
  const out: { client: boolean; output?: string } = { client: false };
  for (let i = 0; i < rest.length; i++) {
    const used = readGlobalFlag(rest, i, flags);
    if (used) {
      i += used - 1;
      continue;
    }
    const arg = rest[i]!;
    if (arg === '--client' || arg === '--client=true') out.client = true;
    else if ((arg === '-o' || arg === '--output') && i + 1 < rest.length) out.output = rest[++i];
    else if (/^(-o|--output)=/.test(arg)) out.output = arg.slice(arg.indexOf('=') + 1);
    else return undefined;
  }
  return out;
}

function unknownCommand(command: string): string {
  const near = COMMANDS.filter((c) => distance(c, command) <= 2 || c.startsWith(command));
  const hint = near.length ? `\n\nDid you mean this?\n${near.map((c) => `\t${c}`).join('\n')}` : '';
  return `error: unknown command "${command}" for "minik8s"${hint}\n`;
}

/** Runs one CLI invocation; resolves with the exit code and never throws. */
export async function runCli(argv: readonly string[], ioOverrides: Partial<CliIo> = {}): Promise<number> {
  const io: CliIo = {
    stdout: (text) => void process.stdout.write(text),
    stderr: (text) => void process.stderr.write(text),
    stdin: process.stdin,
    env: process.env,
    now: () => new Date(),
    ...ioOverrides,
  };
  const clients: ApiClient[] = [];
  try {
    const scanned = scanCommand(argv);
    if (scanned && !COMMANDS.includes(scanned.command) && scanned.command !== 'help') {
      io.stderr(unknownCommand(scanned.command));
      return 1;
    }
    if (scanned?.command === 'version') {
      const fast = fastVersionArgs(scanned.rest, scanned.flags);
      if (fast) return await (await import('./version.js')).runVersion(contextFor(io, scanned.flags, clients), fast);
    }
    return await runWithYargs(argv, io, clients);
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr(`error: ${err.message}\nSee 'minik8s --help' for usage.\n`);
    } else {
      io.stderr(formatError(err, io.env));
    }
    return 1;
  } finally {
    for (const client of clients) client.close();
  }
}

/** yargs-parser reads a lone `-` as a positional, so `-f -` (stdin) is rewritten to `--filename=-` first. */
export function joinStdinFilename(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if ((argv[i] === '-f' || argv[i] === '--filename') && argv[i + 1] === '-') {
      out.push('--filename=-');
      i++;
    } else {
      out.push(argv[i]!);
    }
  }
  return out;
}

/** Adds one command module to `y`: a group with its subcommands, or a command that `run` runs. */
function register(y: Argv, command: CliCommand, run: (command: LeafCommand, flags: Flags) => Promise<void>): void {
  if ('subcommands' in command) {
    y.command(command.command, command.describe, (sub) => {
      for (const subcommand of command.subcommands) register(sub, subcommand, run);
      return sub.demandCommand(1, command.required);
    });
  } else {
    y.command(command.command, command.describe, command.builder, (flags) => run(command, flags));
  }
}

async function runWithYargs(argv: readonly string[], io: CliIo, clients: ApiClient[]): Promise<number> {
  const { default: yargs } = await import('yargs');
  let exitCode = 0;

  const parser = yargs(joinStdinFilename(argv))
    .scriptName('minik8s')
    .usage('minik8s controls a minik8s cluster (and, with --role, runs one).\n\nUsage: minik8s <command> [flags]')
    .exitProcess(false)
    .strict()
    .version(false)
    .help('help')
    .alias('h', 'help')
    .wrap(null)
    .parserConfiguration({ 'parse-numbers': false, 'parse-positional-numbers': false })
    .option('server', {
      type: 'string',
      global: true,
      requiresArg: true,
      describe: 'API server URL (default: $MINIK8S_SERVER, --kubeconfig, $KUBECONFIG, the file $MINIK8S_CONFIG names, ~/.minik8s/config)',
    })
    .option('kubeconfig', {
      type: 'string',
      global: true,
      requiresArg: true,
      describe: "a kubeconfig file (its current context's server, CA, client certificate and token); default: $KUBECONFIG",
    })
    .option('token', {
      type: 'string',
      global: true,
      requiresArg: true,
      describe: 'bearer token (default: $MINIK8S_TOKEN, the file $MINIK8S_CONFIG names, ~/.minik8s/config)',
    })
    .option('namespace', { alias: 'n', type: 'string', global: true, requiresArg: true, describe: 'namespace for this request' });
  for (const command of COMMAND_MODULES) {
    register(parser, command, async (leaf, flags) => {
      const ctx = contextFor(
        io,
        { server: str(flags.server), token: str(flags.token), kubeconfig: str(flags.kubeconfig), namespace: str(flags.namespace) },
        clients,
      );
      exitCode = await leaf.run(ctx, flags);
    });
  }
  parser
    .command(
      'help',
      false,
      () => {},
      () => {
        parser.showHelp('log');
      },
    )
    .fail((message, err) => {
      // Errors from command handlers pass through untouched; yargs' own complaints are usage errors.
      if (err) throw err;
      throw new UsageError(message);
    });

  if (argv.length === 0) {
    parser.showHelp('log');
    return 0;
  }
  await parser.parseAsync();
  return exitCode;
}
