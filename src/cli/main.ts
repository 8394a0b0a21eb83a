// The CLI: global flags, the command table (each command module loaded only when run), and error reporting.
import { loadClientConfig } from '../core/client-config.js';
import { ApiClient } from '../core/client/api-client.js';
import { formatError } from './cli-error.js';
import type { CliContext } from './context.js';

/** Where the CLI looks when neither flags, environment nor ~/.minik8s/config name a server. */
export const DEFAULT_SERVER = 'http://127.0.0.1:6443';

export const COMMANDS = ['api-resources', 'apply', 'autoscale', 'cordon', 'create', 'delete', 'describe', 'drain', 'exec', 'function', 'get', 'gpujob', 'image', 'invoke', 'logs', 'rollout', 'scale', 'token', 'top', 'uncordon', 'version', 'workflow'] as const;

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
        const config = loadClientConfig({ server: flags.server, token: flags.token, env: io.env });
        client = new ApiClient({ server: config.server || DEFAULT_SERVER, token: config.token });
        clients.push(client);
      }
      return client;
    },
    out: io.stdout,
    err: io.stderr,
    stdin: io.stdin,
    now: io.now,
    signal: io.signal,
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
  for (let i = 0; i < argv.length;) {
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
    if (scanned && !(COMMANDS as readonly string[]).includes(scanned.command) && scanned.command !== 'help') {
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

async function runWithYargs(argv: readonly string[], io: CliIo, clients: ApiClient[]): Promise<number> {
  const { default: yargs } = await import('yargs');
  let exitCode = 0;
  /** Wraps a lazily imported command so its exit code becomes ours. */
  const run = <A>(load: () => Promise<(ctx: CliContext, args: A) => Promise<number>>, toArgs: (raw: Record<string, unknown>) => A) =>
    async (raw: Record<string, unknown>) => {
      const ctx = contextFor(io, { server: raw.server as string | undefined, token: raw.token as string | undefined, namespace: raw.namespace as string | undefined }, clients);
      exitCode = await (await load())(ctx, toArgs(raw));
    };
  const strings = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : v === undefined ? [] : [String(v)]);
  const str = (v: unknown): string | undefined => (v === undefined ? undefined : String(v));
  const filenameOption = { alias: 'filename', type: 'string', array: true, requiresArg: true, describe: 'a manifest file, a directory of them, or - for stdin' } as const;
  const recursiveOption = { alias: 'recursive', type: 'boolean', describe: 'with -f DIR, also read subdirectories' } as const;

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
    .option('server', { type: 'string', global: true, requiresArg: true, describe: 'API server URL (default: $MINIK8S_SERVER, the file $MINIK8S_CONFIG names, ~/.minik8s/config)' })
    .option('token', { type: 'string', global: true, requiresArg: true, describe: 'bearer token (default: $MINIK8S_TOKEN, the file $MINIK8S_CONFIG names, ~/.minik8s/config)' })
    .option('namespace', { alias: 'n', type: 'string', global: true, requiresArg: true, describe: 'namespace for this request' })
    .command('apply', 'Create or update objects from manifests', (y) => y
      .option('f', filenameOption)
      .option('R', recursiveOption),
    run(async () => (await import('./apply.js')).runApply, (a) => ({ filename: strings(a.f), recursive: Boolean(a.R) })))
    .command('create', 'Create objects from manifests', (y) => y
      .option('f', filenameOption)
      .option('R', recursiveOption),
    run(async () => (await import('./create.js')).runCreate, (a) => ({ filename: strings(a.f), recursive: Boolean(a.R) })))
    .command('get [resources..]', 'Display one or many objects', (y) => y
      .positional('resources', { type: 'string', array: true, describe: 'TYPE[,TYPE...] [NAME...] or TYPE/NAME...' })
      .option('o', { alias: 'output', type: 'string', requiresArg: true, describe: 'wide, yaml, json or name' })
      .option('l', { alias: 'selector', type: 'string', requiresArg: true, describe: 'label selector, e.g. app=web,tier!=db' })
      .option('field-selector', { type: 'string', requiresArg: true, describe: 'field selector, e.g. spec.nodeName=node1' })
      .option('A', { alias: 'all-namespaces', type: 'boolean', describe: 'list across all namespaces' })
      .option('w', { alias: 'watch', type: 'boolean', describe: 'after listing, watch for changes' })
      .option('show-labels', { type: 'boolean', describe: 'add a LABELS column' })
      .option('headers', { type: 'boolean', default: true, describe: 'print the header row (--no-headers omits it)' }),
    run(async () => (await import('./get.js')).runGet, (a) => ({
      resources: strings(a.resources), output: str(a.o), selector: str(a.l), fieldSelector: str(a['field-selector']),
      allNamespaces: Boolean(a.A), watch: Boolean(a.w), showLabels: Boolean(a['show-labels']), noHeaders: a.headers === false,
    })))
    .command('describe [resources..]', 'Show details of objects and their events', (y) => y
      .positional('resources', { type: 'string', array: true, describe: 'TYPE [NAME...] or TYPE/NAME...' })
      .option('l', { alias: 'selector', type: 'string', requiresArg: true, describe: 'label selector' })
      .option('A', { alias: 'all-namespaces', type: 'boolean', describe: 'across all namespaces' }),
    run(async () => (await import('./describe.js')).runDescribe, (a) => ({ resources: strings(a.resources), selector: str(a.l), allNamespaces: Boolean(a.A) })))
    .command('delete [resources..]', 'Delete objects by type and name, selector, or manifest', (y) => y
      .positional('resources', { type: 'string', array: true, describe: 'TYPE NAME... or TYPE/NAME...' })
      .option('f', filenameOption)
      .option('R', recursiveOption)
      .option('l', { alias: 'selector', type: 'string', requiresArg: true, describe: 'delete the objects matching this label selector' })
      .option('all', { type: 'boolean', describe: 'delete every object of the type in the namespace' })
      .option('cascade', { type: 'string', requiresArg: true, describe: 'background (default), foreground or orphan' })
      .option('ignore-not-found', { type: 'boolean', describe: 'treat missing objects as deleted' })
      .option('grace-period', { type: 'string', requiresArg: true, describe: 'seconds a pod gets to stop (-1: its own terminationGracePeriodSeconds)' })
      .option('now', { type: 'boolean', describe: 'stop pods at once (a grace period of 1 s)' })
      .option('force', { type: 'boolean', describe: 'with --grace-period=0: remove from the API without waiting for the containers to stop' })
      .option('wait', { type: 'boolean', default: true, describe: 'wait until the objects are gone (--wait=false to return at once)' })
      .option('timeout', { type: 'string', requiresArg: true, describe: 'how long --wait may take, e.g. 60s (default: no limit)' }),
    run(async () => (await import('./delete.js')).runDelete, (a) => ({
      resources: strings(a.resources), filename: strings(a.f), recursive: Boolean(a.R), selector: str(a.l),
      all: Boolean(a.all), cascade: str(a.cascade), ignoreNotFound: Boolean(a['ignore-not-found']),
      gracePeriod: str(a['grace-period']), now: Boolean(a.now), force: Boolean(a.force), wait: a.wait !== false, timeout: str(a.timeout),
    })))
    .command('image', 'Manage images in the cluster\'s registry: minik8s image import FILE.tar NAME[:TAG]', (y) => y
      .command('import [file] [name]', 'Load a docker save tarball or a root filesystem tar and push it to the cluster\'s registry', (yy) => yy
        .positional('file', { type: 'string', describe: 'FILE.tar (docker save output, or a tar of a root filesystem; .tar.gz too)' })
        .positional('name', { type: 'string', describe: 'NAME[:TAG] for the image (default tag latest)' })
        .option('registry', { type: 'string', requiresArg: true, describe: 'the registry HOST:PORT (default: the API server\'s host, port 5000; or $MINIK8S_REGISTRY)' }),
      run(async () => (await import('./image.js')).runImageImport, (a) => ({ file: str(a.file), name: str(a.name), registry: str(a.registry) })))
      .demandCommand(1, 'minik8s image needs a command: import'))
    .command('logs [pod]', 'Print the log of a container in a pod', (y) => y
      .positional('pod', { type: 'string', describe: 'POD or pod/POD' })
      .option('c', { alias: 'container', type: 'string', requiresArg: true, describe: 'the container (default: the only, annotated or first one)' })
      .option('f', { alias: 'follow', type: 'boolean', describe: 'keep streaming new lines' })
      .option('tail', { type: 'string', requiresArg: true, describe: 'only the last N lines (-1: all)' })
      .option('p', { alias: 'previous', type: 'boolean', describe: 'the log of the previous (restarted) instance' })
      .option('timestamps', { type: 'boolean', describe: 'prefix each line with its time' }),
    run(async () => (await import('./logs.js')).runLogs, (a) => ({
      pod: str(a.pod), container: str(a.c), follow: Boolean(a.f), tail: str(a.tail), previous: Boolean(a.p), timestamps: Boolean(a.timestamps),
    })))
    .command('cordon [nodes..]', 'Mark nodes unschedulable', (y) => y
      .positional('nodes', { type: 'string', array: true, describe: 'node names' })
      .option('l', { alias: 'selector', type: 'string', requiresArg: true, describe: 'every node matching this label selector' }),
    run(async () => (await import('./cordon.js')).runCordon, (a) => ({ nodes: strings(a.nodes), selector: str(a.l) })))
    .command('uncordon [nodes..]', 'Mark nodes schedulable again', (y) => y
      .positional('nodes', { type: 'string', array: true, describe: 'node names' })
      .option('l', { alias: 'selector', type: 'string', requiresArg: true, describe: 'every node matching this label selector' }),
    run(async () => (await import('./uncordon.js')).runUncordon, (a) => ({ nodes: strings(a.nodes), selector: str(a.l) })))
    .command('drain [node]', 'Cordon a node and evict its pods, waiting until they are gone', (y) => y
      .positional('node', { type: 'string', describe: 'the node' })
      .option('force', { type: 'boolean', describe: 'also evict pods no controller manages (they will not come back)' })
      .option('delete-emptydir-data', { type: 'boolean', describe: 'also evict pods with emptyDir volumes (their data is lost)' })
      .option('ignore-daemonsets', { type: 'boolean', describe: 'leave DaemonSet-managed pods in place' })
      .option('grace-period', { type: 'string', requiresArg: true, describe: 'seconds each pod gets to stop (-1, the default: its own terminationGracePeriodSeconds)' })
      .option('timeout', { type: 'string', requiresArg: true, describe: 'how long evicting and waiting may take, e.g. 5m (default 0: no limit, as kubectl)' }),
    run(async () => (await import('./drain.js')).runDrain, (a) => ({
      node: str(a.node), force: Boolean(a.force), deleteEmptydirData: Boolean(a['delete-emptydir-data']), ignoreDaemonsets: Boolean(a['ignore-daemonsets']),
      gracePeriod: str(a['grace-period']), timeout: str(a.timeout),
    })))
    .command('exec [pod] [command..]', 'Run a command in a container: minik8s exec POD [-c C] -- CMD ARGS...', (y) => y
      .positional('pod', { type: 'string', describe: 'POD or pod/POD' })
      .positional('command', { type: 'string', array: true, describe: 'the command and its arguments, after --' })
      .option('c', { alias: 'container', type: 'string', requiresArg: true, describe: 'the container (default: the only, annotated or first one)' })
      .option('i', { alias: 'stdin', type: 'boolean', describe: 'pass stdin to the command' }),
    run(async () => (await import('./exec.js')).runExec, (a) => ({
      // Words after `--` land in `_` (behind the command name itself), not in the positional.
      pod: str(a.pod), container: str(a.c), stdin: Boolean(a.i), command: [...strings(a.command), ...strings(a._).slice(1)],
    })))
    .command('function', 'Serverless functions: minik8s function create|update|delete|rollback|logs NAME', (y) => {
      const codeOptions = (yy: typeof y) => yy
        .positional('name', { type: 'string', describe: 'the function' })
        .option('f', { alias: 'filename', type: 'string', requiresArg: true, describe: 'the code: handler.py (def handler(event, context)), a directory, or a .zip/.tar.gz' })
        .option('requirements', { type: 'string', requiresArg: true, describe: 'a requirements.txt, installed with pip when the image is built' })
        .option('handler', { type: 'string', requiresArg: true, describe: 'module.function (default handler.handler; -f hello.py implies hello.handler)' })
        .option('env', { type: 'string', requiresArg: true, describe: 'NAME=VALUE for the function\'s environment (repeatable)' })
        .option('min-scale', { type: 'string', requiresArg: true, describe: 'pods kept even when idle (default 0: scale to zero)' })
        .option('max-scale', { type: 'string', requiresArg: true, describe: 'most pods (default 10)' })
        .option('target', { type: 'string', requiresArg: true, describe: 'requests in flight per pod the autoscaler aims at (default 10)' })
        .option('idle-grace', { type: 'string', requiresArg: true, describe: 'seconds without requests before going to zero pods (default 30)' })
        .option('timeout', { type: 'string', requiresArg: true, describe: 'seconds a request may take (default 60)' })
        .option('wait', { type: 'boolean', default: true, describe: 'follow the build until the version serves (--wait=false returns at once)' });
      const writeArgs = (a: Record<string, unknown>): import('./function.js').FunctionWriteArgs => ({
        name: str(a.name), file: str(a.f), requirements: str(a.requirements), handler: str(a.handler), env: strings(a.env),
        minScale: str(a['min-scale']), maxScale: str(a['max-scale']), target: str(a.target), idleGrace: str(a['idle-grace']), timeout: str(a.timeout),
        soft: Boolean(a.soft), hard: Boolean(a.hard), wait: a.wait !== false,
      });
      return y
        .command('create [name]', 'Create a function from code and build its first version', (yy) => codeOptions(yy),
          run(async () => (await import('./function.js')).runFunctionCreate, writeArgs))
        .command('update [name]', 'Change a function\'s code or settings: a new version, rolled out --soft (default) or --hard', (yy) => codeOptions(yy)
          .option('soft', { type: 'boolean', describe: 'old pods serve until the new version has a Ready pod' })
          .option('hard', { type: 'boolean', describe: 'old pods stop at once; the next request cold-starts the new version' }),
        run(async () => (await import('./function.js')).runFunctionUpdate, writeArgs))
        .command('rollback [name]', 'Serve an earlier version again (its image is reused: no build)', (yy) => yy
          .positional('name', { type: 'string', describe: 'the function' })
          .option('to', { type: 'string', requiresArg: true, describe: 'the version (default: the newest built one before the serving one)' })
          .option('soft', { type: 'boolean', describe: 'old pods serve until the version has a Ready pod' })
          .option('hard', { type: 'boolean', describe: 'old pods stop at once' })
          .option('wait', { type: 'boolean', default: true, describe: 'wait until the version serves' }),
        run(async () => (await import('./function.js')).runFunctionRollback, (a) => ({ name: str(a.name), to: str(a.to), soft: Boolean(a.soft), hard: Boolean(a.hard), wait: a.wait !== false })))
        .command('delete [names..]', 'Delete functions with their versions, ReplicaSets and pods', (yy) => yy
          .positional('names', { type: 'string', array: true, describe: 'the functions' })
          .option('wait', { type: 'boolean', default: true, describe: 'wait until everything is gone' }),
        run(async () => (await import('./function.js')).runFunctionDelete, (a) => ({ names: strings(a.names), wait: a.wait !== false })))
        .command('logs [name]', 'Print the logs of a function\'s pods, each line prefixed with its pod', (yy) => yy
          .positional('name', { type: 'string', describe: 'the function' })
          .option('f', { alias: 'follow', type: 'boolean', describe: 'keep streaming, following pods as they come' })
          .option('tail', { type: 'string', requiresArg: true, describe: 'only the last N lines of each pod (-1: all)' }),
        run(async () => (await import('./function-logs.js')).runFunctionLogs, (a) => ({ name: str(a.name), follow: Boolean(a.f), tail: str(a.tail) })))
        .command('invocations [name] [id]', 'List a function\'s last calls (ID, VERSION, TRIGGER, STATUS, COLD, DURATION, AGE), or one in full', (yy) => yy
          .positional('name', { type: 'string', describe: 'the function' })
          .positional('id', { type: 'string', describe: 'one invocation, printed in full (result, error, traceback, stdout, stderr)' })
          .option('o', { alias: 'output', type: 'string', requiresArg: true, describe: 'wide, json or yaml (full records)' })
          .option('limit', { type: 'string', requiresArg: true, describe: 'only the newest N' })
          .option('headers', { type: 'boolean', default: true, describe: 'print the header row (--no-headers omits it)' }),
        run(async () => (await import('./function-invocations.js')).runFunctionInvocations, (a) => ({
          name: str(a.name), id: str(a.id), output: str(a.o), limit: str(a.limit), noHeaders: a.headers === false,
        })))
        .demandCommand(1, 'minik8s function needs a command: create, update, delete, rollback, logs or invocations');
    })
    .command('invoke [target] [name]', 'Call a function (or run a workflow) through the activator: minik8s invoke NAME [--data JSON|@file] | invoke workflow NAME --data JSON', (y) => y
      .positional('target', { type: 'string', describe: 'the function, or `workflow` followed by the workflow\'s name' })
      .positional('name', { type: 'string', describe: 'the workflow (after `workflow`)' })
      .option('d', { alias: 'data', type: 'string', requiresArg: true, describe: 'the body: JSON (or text), @FILE, or @- for stdin' })
      .option('path', { type: 'string', requiresArg: true, describe: 'sub-path (and query) the handler sees, e.g. /items/7?full=1' })
      .option('method', { alias: 'X', type: 'string', requiresArg: true, describe: 'HTTP method (default POST)' })
      .option('activator', { type: 'string', requiresArg: true, describe: 'the activator URL (default: $MINIK8S_ACTIVATOR, the function\'s URL, what the master says)' }),
    run(async () => (await import('./invoke.js')).runInvoke, (a) => ({
      target: str(a.target), name: str(a.name), data: str(a.d), path: str(a.path), method: str(a.method), activator: str(a.activator), env: io.env,
    })))
    .command('rollout [command] [resources..]', 'Manage the rollout of a Deployment: minik8s rollout status|history|undo|pause|resume deploy/NAME', (y) => y
      .positional('command', { type: 'string', describe: 'status, history, undo, pause or resume' })
      .positional('resources', { type: 'string', array: true, describe: 'deploy/NAME or deployment NAME' })
      .option('to-revision', { type: 'string', requiresArg: true, describe: 'undo: the revision to roll back to (default: the previous one)' })
      .option('revision', { type: 'string', requiresArg: true, describe: 'history: show the pod template of this revision' })
      .option('watch', { alias: 'w', type: 'boolean', default: true, describe: 'status: wait until the rollout finishes (--watch=false reports once)' })
      .option('timeout', { type: 'string', requiresArg: true, describe: 'status: seconds to wait before giving up (0: forever)' }),
    run(async () => (await import('./rollout.js')).runRollout, (a) => ({
      command: str(a.command) as import('./rollout.js').RolloutCommand, resources: strings(a.resources), toRevision: str(a['to-revision']), revision: str(a.revision), watch: a.watch !== false, timeoutSeconds: str(a.timeout),
    })))
    .command('scale [resources..]', 'Set the number of replicas of a ReplicaSet or Deployment: minik8s scale rs/NAME --replicas=N', (y) => y
      .positional('resources', { type: 'string', array: true, describe: 'TYPE NAME... or TYPE/NAME...' })
      .option('replicas', { type: 'string', requiresArg: true, describe: 'the new number of replicas' })
      .option('current-replicas', { type: 'string', requiresArg: true, describe: 'only scale if the number of replicas is this now' }),
    run(async () => (await import('./scale.js')).runScale, (a) => ({ resources: strings(a.resources), replicas: str(a.replicas), currentReplicas: str(a['current-replicas']) })))
    .command('autoscale [resources..]', 'Create a HorizontalPodAutoscaler for a Deployment or ReplicaSet: minik8s autoscale deployment NAME --min=2 --max=10 --cpu-percent=80', (y) => y
      .positional('resources', { type: 'string', array: true, describe: 'TYPE NAME or TYPE/NAME (deployment, replicaset)' })
      .option('min', { type: 'string', requiresArg: true, describe: 'the fewest pods (default 1)' })
      .option('max', { type: 'string', requiresArg: true, describe: 'the most pods (required)' })
      .option('cpu-percent', { type: 'string', requiresArg: true, describe: 'the target average cpu utilization, percent of the pods\' requests (default: the server\'s, 80)' })
      .option('name', { type: 'string', requiresArg: true, describe: 'the autoscaler\'s name (default: the target\'s)' }),
    run(async () => (await import('./autoscale.js')).runAutoscale, (a) => ({
      resources: strings(a.resources), min: str(a.min), max: str(a.max), cpuPercent: str(a['cpu-percent']), name: str(a.name),
    })))
    .command('top [resource] [name]', 'Show CPU and memory use of pods or nodes', (y) => y
      .positional('resource', { type: 'string', describe: 'pods or nodes' })
      .positional('name', { type: 'string', describe: 'one pod or node' })
      .option('A', { alias: 'all-namespaces', type: 'boolean', describe: 'pods of every namespace' })
      .option('headers', { type: 'boolean', default: true, describe: 'print the header row (--no-headers omits it)' }),
    run(async () => (await import('./top.js')).runTop, (a) => ({
      resource: str(a.resource), name: str(a.name), allNamespaces: Boolean(a.A), noHeaders: a.headers === false,
    })))
    .command('token', 'Manage join tokens: minik8s token create|list|delete', (y) => y
      .command('create', 'Make a join token and print it (only the token)', (yy) => yy
        .option('ttl', { type: 'string', requiresArg: true, describe: 'how long it works, e.g. 24h, 90m, 1h30m (default 24h); 0: never expires' })
        .option('description', { type: 'string', requiresArg: true, describe: 'what the token is for' }),
      run(async () => (await import('./token.js')).runToken, (a) => ({ action: 'create' as const, ttl: str(a.ttl), description: str(a.description) })))
      .command('list', 'List join tokens (IDs and expiry, never secrets)', (yy) => yy
        .option('headers', { type: 'boolean', default: true, describe: 'print the header row (--no-headers omits it)' }),
      run(async () => (await import('./token.js')).runToken, (a) => ({ action: 'list' as const, noHeaders: a.headers === false })))
      .command('delete [ids..]', 'Revoke join tokens by ID', (yy) => yy
        .positional('ids', { type: 'string', array: true, describe: 'token IDs (the part before the dot)' }),
      run(async () => (await import('./token.js')).runToken, (a) => ({ action: 'delete' as const, ids: strings(a.ids) })))
      .demandCommand(1, 'minik8s token needs a command: create, list or delete'))
    .command('workflow', 'Workflow executions: minik8s workflow executions NAME | workflow execution NAME EXECUTION', (y) => y
      .command('executions [name]', 'List a workflow\'s executions, newest first', (yy) => yy
        .positional('name', { type: 'string', describe: 'the workflow' })
        .option('o', { alias: 'output', type: 'string', requiresArg: true, describe: 'wide, json or yaml' })
        .option('headers', { type: 'boolean', default: true, describe: 'print the header row (--no-headers omits it)' }),
      run(async () => (await import('./workflow.js')).runWorkflowExecutions, (a) => ({ name: str(a.name), output: str(a.o), noHeaders: a.headers === false })))
      .command('execution [name] [execution]', 'Show one execution with its history (state entered, exited, failed, retried, caught)', (yy) => yy
        .positional('name', { type: 'string', describe: 'the workflow' })
        .positional('execution', { type: 'string', describe: 'the execution, as `workflow executions` lists it' })
        .option('o', { alias: 'output', type: 'string', requiresArg: true, describe: 'json or yaml' }),
      run(async () => (await import('./workflow.js')).runWorkflowExecution, (a) => ({ name: str(a.name), execution: str(a.execution), output: str(a.o) })))
      .demandCommand(1, 'minik8s workflow needs a command: executions or execution'))
    .command('gpujob', 'GPU jobs on Slurm: minik8s gpujob output NAME [-o DIR]', (y) => y
      .command('output [name]', 'Write a finished job\'s result.out and error.err into a directory', (yy) => yy
        .positional('name', { type: 'string', describe: 'the GpuJob' })
        .option('o', { alias: 'output-dir', type: 'string', requiresArg: true, describe: 'the directory to write them into (default: the working directory)' }),
      run(async () => (await import('./gpujob.js')).runGpuJobOutput, (a) => ({ name: str(a.name), dir: str(a.o) })))
      .demandCommand(1, 'minik8s gpujob needs a command: output'))
    .command('version', 'Print the client and server versions', (y) => y
      .option('client', { type: 'boolean', describe: 'only the client version' })
      .option('o', { alias: 'output', type: 'string', requiresArg: true, describe: 'json' }),
    run(async () => (await import('./version.js')).runVersion, (a) => ({ client: Boolean(a.client), output: str(a.o) })))
    .command('api-resources', 'List the resource types the cluster serves', (y) => y
      .option('namespaced', { type: 'boolean', describe: 'true: only namespaced types; false: only cluster-scoped ones' })
      .option('o', { alias: 'output', type: 'string', requiresArg: true, describe: 'wide or name' }),
    run(async () => (await import('./api-resources.js')).runApiResources, (a) => ({ namespaced: a.namespaced as boolean | undefined, output: str(a.o) })))
    .command('help', false, () => {}, () => { parser.showHelp('log'); })
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
