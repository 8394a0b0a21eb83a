// Runs one external program as the master's supervised child: leftover cleanup, spawn, health wait, restart with backoff, clean stop.
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, closeSync, constants, fchmodSync, fstatSync, openSync, readFileSync, readSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { delimiter, join, resolve } from 'node:path';
import { abortableDelay } from '../../core/controller/informer.js';
import { waitFor } from '../../core/wait-for.js';
import { StartupError } from '../../core/lifecycle/startup-error.js';

/**
 * What to supervise and how to judge it. The supervisor owns the lifecycle; the program
 * supplies only what differs between programs (its command line, files, health check, and
 * how to read its log), so etcd and the registry behave alike and word their messages alike.
 */
export interface SupervisedProgram {
  /** Prefix of supervision log lines and the noun for a leftover: `etcd`, `registry`. */
  name: string;
  /** The program as the subject of a startup error: `etcd`, `the image registry`. */
  title: string;
  /** The program in the no-setpriv warning (default: `title`): `the registry`. Apart from `title` so existing messages stay word for word. */
  shortTitle?: string;
  /** Absolute path of the executable (see findExecutable) and its arguments. */
  executable: string;
  args: string[];
  /** Holds the child's PID while it runs, so a later master can end a leftover; removed on a clean stop. */
  pidFile: string;
  /** The child's stdout and stderr are appended here; its tail explains failures. */
  logFile: string;
  /** What a leftover serves (its data or store directory), named when it will not exit. */
  leftoverFor: string;
  /** True when a command line (from /proc) is this program serving this data: only such a leftover is ended. */
  isOurs(argv: string[]): boolean;
  /** Runs before every spawn, before the log is opened: create directories, write config. */
  prepare?(): void;
  /** Runs before every spawn; throws a StartupError when the program cannot start (a port is taken). */
  preflight?(): Promise<void>;
  /** How long this program usually needs to get healthy, unless SupervisionOptions.startTimeoutMs says otherwise. */
  defaultStartTimeoutMs: number;
  /** One quick health check (should time out by itself within about a second). */
  isHealthy(): Promise<boolean>;
  /** Completes "did not … within N ms" for a health timeout: `become healthy at http://127.0.0.1:2379`. */
  healthGoal: string;
  /** Log lines never worth showing (etcd's deprecation warnings). */
  ignoreLogLine?(line: string): boolean;
  /** The lines of a log tail worth showing a person (see summarizeLogLines). */
  summarizeLog(lines: string[]): string[];
  /** A better error than "here is its log" when the tail shows a known cause (a port clash); undefined otherwise. */
  explainFailure?(lines: string[]): StartupError | undefined;
}

/** How to supervise: the knobs a managed program's options pass straight through (ManagedEtcdOptions extends this). */
export interface SupervisionOptions {
  /** Aborting stops the child (SIGTERM, then SIGKILL after stopTimeoutMs). */
  signal: AbortSignal;
  /** Where supervision messages go (default: stderr). */
  log?: (message: string) => void;
  /** How long the child may take to get healthy at start and after a restart (default: the program's defaultStartTimeoutMs). */
  startTimeoutMs?: number;
  /** How long a SIGTERMed child may take to exit before SIGKILL (default 10 s). */
  stopTimeoutMs?: number;
  /** First delay before restarting a child that died (default 500 ms); doubles per failure up to maxRestartDelayMs (default 30 s). */
  restartDelayMs?: number;
  maxRestartDelayMs?: number;
}

export interface SupervisedProcess {
  /** The running child's PID (undefined between a crash and its restart). */
  pid(): number | undefined;
  /** How many times the child has been restarted after dying. */
  restarts(): number;
  /** Resolves once the signal has aborted and the child has exited. */
  stopped: Promise<void>;
}

export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Set when the child could not be run at all (spawn failed). */
  error?: Error;
}

/** How many log lines are read back for messages; summaries pick from these. */
const TAIL_LINES = 8;
/** A run that stayed up this long was healthy: the next crash restarts after the first delay again. */
const BACKOFF_RESET_AFTER_MS = 60_000;
/** How long a SIGKILLed leftover may take to go before we give up. */
const LEFTOVER_KILL_WAIT_MS = 5_000;
const POLL_INTERVAL_MS = 50;

/** The absolute path of an executable: `name` itself when it has a slash, else the first match on PATH. */
export function findExecutable(name: string, path = process.env.PATH ?? ''): string | undefined {
  const candidates = name.includes('/')
    ? [resolve(name)]
    : path
        .split(delimiter)
        .filter(Boolean)
        .map((dir) => join(dir, name));
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // Not here: try the next directory.
    }
  }
  return undefined;
}

/**
 * Resolves to the error code when host:port cannot be bound (EADDRINUSE, EACCES, EADDRNOTAVAIL), undefined when it is free.
 * `host` may be bracketed IPv6 (`[::]`); empty means every address.
 */
export function probePort(port: number, host = '127.0.0.1'): Promise<string | undefined> {
  return new Promise((resolvePromise) => {
    const server = createServer();
    server.once('error', (err: NodeJS.ErrnoException) => resolvePromise(err.code ?? 'EUNKNOWN'));
    server.listen({ port, host: host.replace(/^\[(.*)\]$/, '$1') || '0.0.0.0', exclusive: true }, () => server.close(() => resolvePromise(undefined)));
  });
}

/** A /proc/PID/cmdline's contents as argv; undefined when empty (a zombie, or a process that is exiting). */
export function parseCmdline(raw: string): string[] | undefined {
  if (!raw) return undefined;
  return raw.split('\0').filter((s, i, all) => s !== '' || i < all.length - 1);
}

/** The command line of a live process, or undefined when it is gone or exiting. */
function processArgs(pid: number): string[] | undefined {
  try {
    return parseCmdline(readFileSync(`/proc/${pid}/cmdline`, 'utf8'));
  } catch {
    return undefined;
  }
}

/** True while the process has not finished exiting: a zombie (or a vanished PID) has closed its sockets. */
function stillRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/** waitFor as a yes/no: true once `check` holds, false when the time runs out or the signal aborts. */
function pollUntil(check: () => boolean | Promise<boolean>, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
  return waitFor(check, { timeoutMs, intervalMs: POLL_INTERVAL_MS, signal }).then(
    () => true,
    () => false,
  );
}

/** The restart delay after one more failed attempt: doubled, up to `maxMs`. */
export function nextRestartDelay(delayMs: number, maxMs: number): number {
  return Math.min(delayMs * 2, maxMs);
}

/** The delay before restarting a child that ran `ranMs`: a run that stayed up a while earns the first delay again. */
export function delayAfterRun(options: { delayMs: number; firstMs: number; ranMs: number }): number {
  return options.ranMs > BACKOFF_RESET_AFTER_MS ? options.firstMs : options.delayMs;
}

/** How a child ended, as said after "etcd: " or "registry: ". */
export function describeExit(exit: ChildExit): string {
  if (exit.error) return `could not run (${exit.error.message})`;
  return exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
}

/** A program's log lines worth showing a person: its last few errors when there are any, else its last lines, each cleaned by `strip`. */
export function summarizeLogLines(lines: string[], options: { isError: (line: string) => boolean; strip: (line: string) => string }): string[] {
  const errors = lines.filter(options.isError);
  return (errors.length ? errors.slice(-3) : lines.slice(-5)).map(options.strip);
}

/** The startup error text: `SUBJECT WHY`, then the summarised log lines, or where the log is when there are none. */
export function startFailureMessage(options: { title: string; why: string; summary: string[]; logFile: string }): string {
  const { summary, logFile } = options;
  const said = summary.length ? `; its last log lines (full log in ${logFile}):\n  ${summary.join('\n  ')}` : ` (see ${logFile})`;
  return `${options.title} ${options.why}${said}`;
}

/** The last non-empty lines written to `logFile` since `offset` (at most the last 64 KiB), for error messages. */
export function readLogTail(logFile: string, offset: number, ignore: (line: string) => boolean = () => false): string[] {
  let fd: number | undefined;
  try {
    fd = openSync(logFile, 'r');
    const size = fstatSync(fd).size;
    const start = Math.max(offset, size - 64 * 1024);
    const buf = Buffer.alloc(Math.max(0, size - start));
    readSync(fd, buf, 0, buf.length, start);
    return buf
      .toString('utf8')
      .split('\n')
      .map((l) => l.trimEnd())
      .filter((l) => l !== '' && !ignore(l))
      .slice(-TAIL_LINES);
  } catch {
    return [];
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Ends a copy of the program left over by an earlier master (named by the pidfile), by its PID, and waits for it to go.
 * Resolves true when there was one. A pidfile naming anything else (a reused PID) is ignored.
 */
export async function endLeftover(options: {
  program: Pick<SupervisedProgram, 'name' | 'pidFile' | 'leftoverFor' | 'isOurs'>;
  stopTimeoutMs: number;
  log: (message: string) => void;
}): Promise<boolean> {
  const { program, log } = options;
  let pid: number;
  try {
    pid = Number.parseInt(readFileSync(program.pidFile, 'utf8').trim(), 10);
  } catch {
    return false;
  }
  if (!Number.isInteger(pid) || pid <= 1) return false;
  const args = processArgs(pid);
  if (args === undefined || !program.isOurs(args)) return false;
  log(`${program.name}: stopping leftover ${program.name} (PID ${pid}) from an earlier run`);
  // Wait for the exit itself, not for the command line to go: it vanishes before the sockets close.
  // A command line that turns into another program's means the PID was reused: ours is gone.
  const gone = () => {
    if (!stillRunning(pid)) return true;
    const now = processArgs(pid);
    return now !== undefined && !program.isOurs(now);
  };
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return true;
  }
  if (await pollUntil(gone, options.stopTimeoutMs)) return true;
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    return true;
  }
  if (!(await pollUntil(gone, LEFTOVER_KILL_WAIT_MS))) {
    throw new StartupError(`a leftover ${program.name} (PID ${pid}) for ${program.leftoverFor} does not exit; stop it and start again`);
  }
  return true;
}

interface RunningChild {
  child: ChildProcess;
  /** Where the log stood when this child started: its tail is read from here. */
  logOffset: number;
  exited: Promise<ChildExit>;
}

/**
 * Ends a leftover, starts the program, waits until it is healthy, and keeps it running
 * (restarting it with a doubling backoff when it dies) until `options.signal` aborts.
 * Rejects with a StartupError when the first start fails; later failures are logged and retried.
 */
export async function startSupervisedProcess(program: SupervisedProgram, options: SupervisionOptions): Promise<SupervisedProcess> {
  const { signal } = options;
  const startTimeoutMs = options.startTimeoutMs ?? program.defaultStartTimeoutMs;
  const stopTimeoutMs = options.stopTimeoutMs ?? 10_000;
  const firstDelay = options.restartDelayMs ?? 500;
  const maxDelay = options.maxRestartDelayMs ?? 30_000;
  const log = options.log ?? ((m: string) => process.stderr.write(`${m}\n`));
  const { name, pidFile, logFile } = program;
  const preflight = async () => {
    await program.preflight?.();
  };
  const tailOf = (run: RunningChild) => readLogTail(logFile, run.logOffset, program.ignoreLogLine);

  // setpriv asks the kernel to SIGTERM the child when the master dies, however it dies.
  const setpriv = findExecutable('setpriv');
  if (!setpriv) log(`${name}: setpriv not found; ${program.shortTitle ?? program.title} may outlive a master that is killed`);

  /** Turns the program's own complaint into our error: a known cause, or the tail of its log. */
  const startFailure = (tail: string[], why: string): StartupError =>
    program.explainFailure?.(tail) ?? new StartupError(startFailureMessage({ title: program.title, why, summary: program.summarizeLog(tail), logFile }));

  const spawnChild = (): RunningChild => {
    program.prepare?.();
    const fd = openSync(logFile, 'a', 0o600);
    // The mode above applies to a new file only: a log an older version left 0644 is made private too.
    fchmodSync(fd, 0o600);
    const logOffset = fstatSync(fd).size;
    const [command, argv] = setpriv ? [setpriv, ['--pdeathsig', 'SIGTERM', '--', program.executable, ...program.args]] : [program.executable, program.args];
    let child: ChildProcess;
    try {
      // Own session: a Ctrl-C meant for the master must not reach the child before the master stops it.
      child = spawn(command, argv, { stdio: ['ignore', fd, fd], detached: true });
    } finally {
      closeSync(fd);
    }
    const exited = new Promise<ChildExit>((resolvePromise) => {
      child.once('exit', (code, sig) => resolvePromise({ code, signal: sig }));
      child.once('error', (error) => resolvePromise({ code: null, signal: null, error }));
    });
    if (child.pid !== undefined) writeFileSync(pidFile, `${child.pid}\n`, { mode: 0o644 });
    return { child, logOffset, exited };
  };

  /** Waits until healthy; rejects with the program's own words if it exits first or never gets healthy. */
  const waitHealthy = async (run: RunningChild): Promise<void> => {
    let exit: ChildExit | undefined;
    void run.exited.then((e) => {
      exit = e;
    });
    const ok = await pollUntil(async () => exit !== undefined || (await program.isHealthy()), startTimeoutMs, signal);
    if (exit) {
      if (exit.error) throw new StartupError(`cannot run ${program.title} (${program.executable}): ${exit.error.message}`);
      throw startFailure(tailOf(run), `${describeExit(exit)} while starting`);
    }
    if (!ok && !signal.aborted) {
      run.child.kill('SIGKILL');
      await run.exited;
      throw startFailure(tailOf(run), `did not ${program.healthGoal} within ${startTimeoutMs} ms`);
    }
  };

  const stopChild = async (run: RunningChild): Promise<void> => {
    if (run.child.exitCode !== null || run.child.signalCode !== null) return;
    run.child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([
      run.exited.then(() => false),
      new Promise<boolean>((r) => {
        timer = setTimeout(() => r(true), stopTimeoutMs);
      }),
    ]);
    clearTimeout(timer);
    if (timedOut) {
      log(`${name}: did not exit within ${stopTimeoutMs} ms of SIGTERM; sending SIGKILL`);
      run.child.kill('SIGKILL');
      await run.exited;
    }
  };

  if (await endLeftover({ program, stopTimeoutMs, log })) {
    // A multi-threaded process shows as exited while its last threads still hold its listening sockets:
    // give them a moment to let go before preflight calls the port taken.
    await pollUntil(
      () =>
        preflight().then(
          () => true,
          () => false,
        ),
      LEFTOVER_KILL_WAIT_MS,
    );
  }
  await preflight();
  let current: RunningChild | undefined = spawnChild();
  try {
    await waitHealthy(current);
  } catch (err) {
    await stopChild(current);
    rmSync(pidFile, { force: true });
    throw err;
  }

  let restarts = 0;
  const waitExitOrAbort = (run: RunningChild) =>
    Promise.race([
      run.exited,
      new Promise<undefined>((r) => {
        if (signal.aborted) r(undefined);
        else signal.addEventListener('abort', () => r(undefined), { once: true });
      }),
    ]);
  const supervise = async (): Promise<void> => {
    let delay = firstDelay;
    let startedAt = Date.now();
    while (current && !signal.aborted) {
      const run: RunningChild = current;
      const exit = await waitExitOrAbort(run);
      if (!exit) break;
      current = undefined;
      delay = delayAfterRun({ delayMs: delay, firstMs: firstDelay, ranMs: Date.now() - startedAt });
      // The program's own last words say why only when it exited by itself.
      const tail = exit.code ? program.summarizeLog(tailOf(run)) : [];
      log(`${name}: ${describeExit(exit)} unexpectedly; restarting in ${delay} ms${tail.length ? `; last log lines:\n  ${tail.join('\n  ')}` : ''}`);
      while (!current && !signal.aborted) {
        await abortableDelay(delay, signal);
        if (signal.aborted) break;
        delay = nextRestartDelay(delay, maxDelay);
        let attempt: RunningChild | undefined;
        try {
          await preflight();
          attempt = spawnChild();
          await waitHealthy(attempt);
          current = attempt;
          startedAt = Date.now();
          restarts++;
          log(`${name}: restarted (PID ${attempt.child.pid})`);
        } catch (err) {
          if (attempt) await stopChild(attempt);
          log(`${name}: restart failed, trying again in ${delay} ms: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
    }
    if (current) await stopChild(current);
    current = undefined;
    rmSync(pidFile, { force: true });
  };

  return {
    pid: () => current?.child.pid,
    restarts: () => restarts,
    stopped: supervise(),
  };
}
