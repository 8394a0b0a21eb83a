// Runs the network tools (ip, bridge, iptables, iptables-restore, iptables-save), found in sbin too, and fails with their own stderr.
import { accessSync, constants } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';

/** One invocation of a network tool: what the pure planners hand to a shell. */
export interface NetCommand {
  tool: 'ip' | 'bridge' | 'iptables' | 'iptables-restore' | 'iptables-save';
  args: string[];
  /** Written to the tool's stdin (iptables-restore reads its rules there). */
  input?: string;
}

/** Runs a command and resolves with its stdout; the default runner is execa, tests pass a fake. */
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

/** The real runner: each command bounded by 30 s, so a wedged tool fails a reconcile instead of stalling it. */
export const runNetCommand: NetRunner = async (command) => {
  const file = locate(command.tool);
  try {
    const result = await execa(file, command.args, { input: command.input, timeout: 30_000, stripFinalNewline: false });
    return result.stdout;
  } catch (err) {
    const e = err as { stderr?: string; shortMessage?: string; message: string };
    throw new NetCommandError(command, (e.stderr || e.shortMessage || e.message).trim(), { cause: err });
  }
};

/** The command as a shell would show it, for logs. */
export function formatNetCommand(command: NetCommand): string {
  return `${command.tool} ${command.args.join(' ')}`;
}
