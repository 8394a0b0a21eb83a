// Processes the simulated cluster starts, known by PID and start time (which a reused PID does not share): start with output to a file, wait until ready, stop.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, fstatSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { waitFor } from '../../src/core/wait-for.js';

/** How a process is told from a later one given the same PID. */
export interface ProcessIdentity {
  /** Start time in clock ticks since boot (/proc/PID/stat field 22). */
  startTime?: string;
  /** A string its command line must hold. */
  cmdlineIncludes?: string;
}

/** State and start time from /proc/PID/stat; undefined when there is no such process. */
export function procStat(pid: number): { state: string; startTime: string } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may hold spaces: the fields after the last ')' are fixed (state is field 3, starttime 22).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0]!, startTime: fields[19]! };
  } catch {
    return undefined;
  }
}

/** `roots` and every process below them (by parent PID in /proc). */
export function withDescendants(roots: readonly number[]): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(entry));
      children.set(ppid, list);
    } catch {
      /* gone meanwhile */
    }
  }
  const out = new Set<number>();
  const visit = (pid: number) => {
    if (out.has(pid)) return;
    out.add(pid);
    for (const c of children.get(pid) ?? []) visit(c);
  };
  roots.forEach(visit);
  return [...out];
}

export function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
  } catch {
    return '';
  }
}

/** Is it still running, and still the process we mean? A zombie counts as gone. */
export function isRunning(pid: number, identity: ProcessIdentity): boolean {
  const stat = procStat(pid);
  if (!stat || stat.state === 'Z' || stat.state === 'X') return false;
  if (identity.startTime !== undefined && stat.startTime !== identity.startTime) return false;
  if (identity.cmdlineIncludes !== undefined && !commandLine(pid).includes(identity.cmdlineIncludes)) return false;
  return true;
}

/** SIGTERM, and SIGKILL if it is still running at the deadline; resolves once it has gone. */
export async function stopPid(pid: number, identity: ProcessIdentity, what: string, termMs: number): Promise<void> {
  if (!isRunning(pid, identity)) return;
  process.kill(pid, 'SIGTERM');
  try {
    await waitFor(() => !isRunning(pid, identity), { timeoutMs: termMs, intervalMs: 50, description: `${what} (pid ${pid}) to exit on SIGTERM` });
  } catch {
    if (isRunning(pid, identity)) process.kill(pid, 'SIGKILL');
    await waitFor(() => !isRunning(pid, identity), { timeoutMs: 10_000, intervalMs: 50, description: `${what} (pid ${pid}) to exit on SIGKILL` });
  }
}

export function readPidFile(path: string): number | undefined {
  try {
    const pid = Number(readFileSync(path, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** A child process we started, its output going to a file (a pipe would break, and kill dockerd, should this process die first). */
export interface Started {
  child: ChildProcess;
  pid: number;
  /** Its start time in /proc, which tells it from a later process given the same PID. */
  startTime: string;
  logFile: string;
  output(): string;
  exited(): boolean;
}

export interface StartProcessOptions {
  command: string;
  args: string[];
  logFile: string;
  env?: NodeJS.ProcessEnv;
  /** In a session of its own, and not holding this process's event loop: it outlives this process and a Ctrl-C meant for it. */
  detached?: boolean;
}

export function startProcess(o: StartProcessOptions): Started {
  const fd = openSync(o.logFile, 'a');
  // A process started again appends to the same log: its output() is only what it wrote itself.
  const from = fstatSync(fd).size;
  let child: ChildProcess;
  try {
    child = spawn(o.command, o.args, { env: o.env ?? process.env, stdio: ['ignore', fd, fd], detached: o.detached ?? false });
  } finally {
    closeSync(fd);
  }
  let spawnError = '';
  // A spawn failure (ENOENT) shows up as an exit, not as an unhandled error.
  child.on('error', (err) => {
    spawnError = `\nspawn failed: ${err.message}`;
  });
  if (child.pid === undefined) throw new Error(`could not start ${o.command}`);
  if (o.detached) child.unref();
  const pid = child.pid;
  // Until it is waited for, even a process that has already exited is in /proc (a zombie).
  const startTime = procStat(pid)?.startTime;
  if (startTime === undefined) throw new Error(`${o.command} (pid ${pid}) is not in /proc`);
  return {
    child,
    pid,
    startTime,
    logFile: o.logFile,
    output: () => {
      try {
        return readFileSync(o.logFile).subarray(from).toString('utf8').slice(-65_536) + spawnError;
      } catch {
        return spawnError;
      }
    },
    exited: () => child.exitCode !== null || child.signalCode !== null,
  };
}

/**
 * Waits for `check` (see waitFor) while the process runs: fails at once, with its output, if it
 * exits first or `signal` aborts, and with its output on the deadline too.
 */
export async function untilReady<T>(p: Started, what: string, check: () => T | Promise<T>, timeoutMs: number, signal?: AbortSignal): Promise<NonNullable<T>> {
  const stop = new AbortController();
  let onExit = () => {};
  let onAbort = () => {};
  const ended = new Promise<never>((_, reject) => {
    onExit = () => {
      stop.abort();
      reject(new Error(`${what}: pid ${p.pid} exited early (code ${p.child.exitCode}, signal ${p.child.signalCode}):\n${p.output().slice(-4000)}`));
    };
    onAbort = () => {
      stop.abort();
      reject(new Error(`interrupted while waiting for ${what}`));
    };
    if (p.exited()) onExit();
    else p.child.once('exit', onExit);
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([
      waitFor(check, { timeoutMs, intervalMs: 50, description: what, signal: stop.signal }).catch((err: Error) => {
        if (stop.signal.aborted) return ended;
        throw new Error(`${err.message}\n${p.output().slice(-4000)}`, { cause: err });
      }),
      ended,
    ]);
  } finally {
    p.child.off('exit', onExit);
    signal?.removeEventListener('abort', onAbort);
    stop.abort();
  }
}
