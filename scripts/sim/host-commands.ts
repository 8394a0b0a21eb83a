// The host's tools for the simulated cluster (ip, nsenter, dockerd, iptables, umount): finding them, running them, and saying why they are missing.
import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/** Where the tools may live: sbin is often missing from a test runner's or a sudo user's PATH. */
const SEARCH_PATH = [...(process.env.PATH ?? '').split(':').filter(Boolean), '/usr/local/sbin', '/usr/sbin', '/sbin', '/usr/bin', '/bin'];

/** The absolute path of an executable, or undefined. */
export function findExecutable(name: string): string | undefined {
  for (const dir of SEARCH_PATH) {
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {
      /* not there */
    }
  }
  return undefined;
}

/** Why the simulated cluster cannot run here, or undefined when it can. */
export function netnsSkipReason(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root: network namespaces, a bridge, iptables and a dockerd per namespace';
  const missing = ['ip', 'nsenter', 'dockerd', 'iptables'].filter((c) => findExecutable(c) === undefined);
  if (missing.length > 0) return `needs ${missing.join(', ')} (apt-get install -y iproute2 util-linux docker.io iptables)`;
  return undefined;
}

/** The absolute path of a tool; throws when it is not installed. */
export function tool(name: string): string {
  const path = findExecutable(name);
  if (!path) throw new Error(`${name} is not installed`);
  return path;
}

/** Runs a command; resolves with its stdout, rejects with its stderr. */
export async function sh(command: string, args: string[], timeoutMs = 30_000): Promise<string> {
  try {
    const { stdout } = await execFileAsync(tool(command), args, { timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 });
    return stdout;
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`${command} ${args.join(' ')}: ${(e.stderr || e.message).trim()}`);
  }
}

export async function linkExists(name: string): Promise<boolean> {
  return sh('ip', ['link', 'show', name]).then(
    () => true,
    () => false,
  );
}

export async function netnsExists(name: string): Promise<boolean> {
  return (await sh('ip', ['netns', 'list'])).split('\n').some((line) => line.split(' ')[0] === name);
}

/** Is this exact rule in the host's iptables (filter table)? */
export async function iptablesRuleExists(rule: string[]): Promise<boolean> {
  return sh('iptables', ['-C', ...rule]).then(
    () => true,
    () => false,
  );
}
