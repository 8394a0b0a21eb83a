// Runs the network tools (ip, bridge, iptables, iptables-restore, iptables-save), found in sbin too, and fails with their own stderr.
import { accessSync, constants } from 'node:fs';
import { join } from 'node:path';
import { spawn } from 'node:child_process';

/** One invocation of a network tool: what the pure planners hand to a shell. */
export interface NetCommand {
  tool: 'ip' | 'bridge' | 'iptables' | 'iptables-restore' | 'iptables-save';
  args: string[];
  /** Written to the tool's stdin (iptables-restore reads its rules there). */
  input?: string;
}

/** Runs a command and resolves with its stdout; the default runner spawns the tool, tests pass a fake. */
export type NetRunner = (command: NetCommand) => Promise<string>;

/** A failed network command: the command line and what the tool said. */
export class NetCommandError extends Error {
  readonly stderr: string;
  constructor(command: NetCommand, stderr: string, options?: { cause?: unknown }) {
    super(`${command.tool} ${command.args.join(' ')}: ${stderr || 'failed'}`, options);
    this.name = 'NetCommandError';
    this.stderr = stderr;
  }
}

// Daemons started from a user's shell or a test runner often lack sbin on PATH, where these tools live.
const SEARCH_PATH = [...(process.env.PATH ?? '').split(':').filter(Boolean), '/usr/local/sbin', '/usr/sbin', '/sbin', '/usr/bin', '/bin'];
const found = new Map<string, string>();

function locate(tool: string): string {
  let path = found.get(tool);
  if (path) return path;
  for (const dir of SEARCH_PATH) {
    try {
      accessSync(join(dir, tool), constants.X_OK);
      path = join(dir, tool);
      break;
    } catch {
      /* not there */
    }
  }
  if (!path) {
    const pkg = tool.startsWith('iptables') ? 'iptables' : 'iproute2';
    throw new NetCommandError({ tool: tool as NetCommand['tool'], args: [] }, `${tool} is not installed (apt-get install -y ${pkg})`);
  }
  found.set(tool, path);
  return path;
}

/** How long one tool may run before it is killed and its command fails. */
const COMMAND_TIMEOUT_MS = 30_000;

/**
 * The real runner: each command bounded by 30 s, so a wedged tool fails a reconcile instead of
 * stalling it. Spawned by hand rather than through execa: when the process is out of file
 * descriptors (EMFILE) Node's spawn returns a child without pipes and emits 'error' on the next
 * tick; execa 9 then throws a TypeError and leaves that 'error' unheard, an uncaught exception
 * that killed the master. Here every failure to run a tool is this command's rejection.
 */
export const runNetCommand: NetRunner = (command) =>
  new Promise<string>((resolve, reject) => {
    const file = locate(command.tool);
    let settled = false;
    const fail = (stderr: string, cause?: unknown) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      reject(new NetCommandError(command, stderr.trim(), { cause }));
    };
    let timer: NodeJS.Timeout | undefined;
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(file, command.args, { stdio: ['pipe', 'pipe', 'pipe'] });
    } catch (err) {
      fail(`cannot run ${command.tool}: ${(err as Error).message}`, err);
      return;
    }
    // Listened to before anything else can emit it: EMFILE, ENOENT, EACCES all arrive here.
    child.on('error', (err) => fail(`cannot run ${command.tool}: ${err.message}`, err));
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout?.on('data', (b: Buffer) => out.push(b));
    child.stderr?.on('data', (b: Buffer) => err.push(b));
    // A tool that exits before reading its input closes the pipe: that is its exit's story, not an error of ours.
    child.stdin?.on('error', () => {});
    child.stdin?.end(command.input ?? '');
    timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(`timed out after ${COMMAND_TIMEOUT_MS} ms`);
    }, COMMAND_TIMEOUT_MS);
    child.on('close', (code, signal) => {
      if (settled) return;
      const stderr = Buffer.concat(err).toString();
      if (code === 0) {
        settled = true;
        clearTimeout(timer);
        resolve(Buffer.concat(out).toString());
        return;
      }
      fail(stderr || (signal ? `killed by ${signal}` : `exited with code ${code}`));
    });
  });

/** The command as a shell would show it, for logs. */
export function formatNetCommand(command: NetCommand): string {
  return `${command.tool} ${command.args.join(' ')}`;
}
