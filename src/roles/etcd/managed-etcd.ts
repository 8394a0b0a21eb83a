// Runs etcd as the master's supervised child: checks, spawn, health wait, restart with backoff, clean stop.
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, closeSync, constants, fstatSync, mkdirSync, openSync, readFileSync, readSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { basename, delimiter, isAbsolute, join, resolve } from 'node:path';
import { portInUseMessage, StartupError } from '../startup-error.js';

export interface ManagedEtcdOptions {
  /** The master's data directory: etcd keeps its data in DATA_DIR/etcd, its log in etcd.log, its PID in etcd.pid. */
  dataDir: string;
  /** Client port on 127.0.0.1 (default 2379). */
  clientPort?: number;
  /** Peer port on 127.0.0.1 (default clientPort + 1). */
  peerPort?: number;
  /** The etcd executable: a name looked up on PATH, or a path (default `etcd`). */
  binary?: string;
  /** Where supervision messages go (default: stderr). */
  log?: (message: string) => void;
  /** Aborting stops etcd (SIGTERM, then SIGKILL after stopTimeoutMs). */
  signal: AbortSignal;
  /** How long etcd may take to answer /health at start and after a restart (default 30 s). */
  startTimeoutMs?: number;
  /** How long a SIGTERMed etcd may take to exit before SIGKILL (default 10 s). */
  stopTimeoutMs?: number;
  /** First delay before restarting an etcd that died (default 500 ms); doubles per failure up to maxRestartDelayMs. */
  restartDelayMs?: number;
  maxRestartDelayMs?: number;
}

export interface ManagedEtcd {
  /** Client URLs to hand to the store. */
  endpoints: string[];
  /** The running etcd's PID (undefined between a crash and its restart). */
  pid(): number | undefined;
  /** How many times etcd has been restarted after dying. */
  restarts(): number;
  /** Resolves once the signal has aborted and etcd has exited. */
  stopped: Promise<void>;
}

export interface EtcdLayout {
  etcdDataDir: string;
  pidFile: string;
  logFile: string;
}

const MEMBER_NAME = 'minik8s';
const TAIL_LINES = 8;

export function etcdLayout(dataDir: string): EtcdLayout {
  const dir = resolve(dataDir);
  return { etcdDataDir: join(dir, 'etcd'), pidFile: join(dir, 'etcd.pid'), logFile: join(dir, 'etcd.log') };
}

/** etcd's command line (without the executable): a one-member cluster listening on 127.0.0.1 only. */
export function etcdArgs(options: { dataDir: string; clientPort: number; peerPort: number }): string[] {
  const client = `http://127.0.0.1:${options.clientPort}`;
  const peer = `http://127.0.0.1:${options.peerPort}`;
  return [
    '--name', MEMBER_NAME,
    '--data-dir', etcdLayout(options.dataDir).etcdDataDir,
    '--listen-client-urls', client,
    '--advertise-client-urls', client,
    '--listen-peer-urls', peer,
    '--initial-advertise-peer-urls', peer,
    '--initial-cluster', `${MEMBER_NAME}=${peer}`,
    '--initial-cluster-state', 'new',
  ];
}

/** The absolute path of an executable: `name` itself when it has a slash, else the first match on PATH. */
export function findExecutable(name: string, path = process.env.PATH ?? ''): string | undefined {
  const candidates = name.includes('/') ? [resolve(name)] : path.split(delimiter).filter(Boolean).map((dir) => join(dir, name));
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

/** Resolves to the error code when 127.0.0.1:port cannot be bound (EADDRINUSE, EACCES), undefined when it is free. */
export function probePort(port: number): Promise<string | undefined> {
  return new Promise((resolvePromise) => {
    const server = createServer();
    server.once('error', (err: NodeJS.ErrnoException) => resolvePromise(err.code ?? 'EUNKNOWN'));
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => server.close(() => resolvePromise(undefined)));
  });
}

/** The command line of a live process, or undefined when it is gone (zombies have none). */
function processArgs(pid: number): string[] | undefined {
  try {
    const raw = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    if (!raw) return undefined;
    return raw.split('\0').filter((s, i, all) => s !== '' || i < all.length - 1);
  } catch {
    return undefined;
  }
}

/** True when `args` is an etcd whose data dir is `etcdDataDir`. */
export function isOurEtcd(args: string[], etcdDataDir: string): boolean {
  if (args.length === 0 || !basename(args[0]!).startsWith('etcd')) return false;
  for (let i = 1; i < args.length; i++) {
    const a = args[i]!;
    if ((a === '--data-dir' || a === '-data-dir') && args[i + 1] === etcdDataDir) return true;
    if (a === `--data-dir=${etcdDataDir}` || a === `-data-dir=${etcdDataDir}`) return true;
  }
  return false;
}

function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolvePromise) => {
    if (signal.aborted) return resolvePromise();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolvePromise();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

/** Polls until `check` is true or the deadline passes; false on timeout. */
async function pollUntil(check: () => boolean | Promise<boolean>, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() >= deadline || signal?.aborted) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Ends an etcd left over by an earlier master (named by the pidfile), by its PID, and waits for it to go. */
async function endLeftoverEtcd(layout: EtcdLayout, stopTimeoutMs: number, log: (m: string) => void): Promise<void> {
  let pid: number;
  try {
    pid = Number.parseInt(readFileSync(layout.pidFile, 'utf8').trim(), 10);
  } catch {
    return;
  }
  const ours = () => {
    const args = processArgs(pid);
    return args !== undefined && isOurEtcd(args, layout.etcdDataDir);
  };
  if (!Number.isInteger(pid) || pid <= 1 || !ours()) return;
  log(`etcd: stopping leftover etcd (PID ${pid}) from an earlier run`);
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return;
  }
  if (await pollUntil(() => !ours(), stopTimeoutMs)) return;
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    return;
  }
  if (!(await pollUntil(() => !ours(), 5_000))) {
    throw new StartupError(`a leftover etcd (PID ${pid}) for ${layout.etcdDataDir} does not exit; stop it and start again`);
  }
}

/** The last lines etcd wrote to its log since `offset`, for error messages. */
function logTail(logFile: string, offset: number): string[] {
  let fd: number | undefined;
  try {
    fd = openSync(logFile, 'r');
    const size = fstatSync(fd).size;
    const start = Math.max(offset, size - 64 * 1024);
    const buf = Buffer.alloc(Math.max(0, size - start));
    readSync(fd, buf, 0, buf.length, start);
    return buf.toString('utf8').split('\n').map((l) => l.trimEnd())
      .filter((l) => l !== '' && !l.startsWith('[WARNING] Deprecated'))
      .slice(-TAIL_LINES);
  } catch {
    return [];
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** etcd's log lines worth showing a person: its errors when there are any, else the last lines, without timestamps. */
export function summarizeLog(lines: string[]): string[] {
  const errors = lines.filter((l) => / [CEF] \| /.test(l));
  return (errors.length ? errors.slice(-3) : lines.slice(-5)).map((l) => l.replace(/^\d{4}-\d\d-\d\d [\d:.]+ [A-Z] \| /, ''));
}

async function isHealthy(clientUrl: string): Promise<boolean> {
  try {
    const res = await fetch(`${clientUrl}/health`, { signal: AbortSignal.timeout(1_000) });
    const body = (await res.json()) as { health?: unknown };
    return res.ok && (body.health === 'true' || body.health === true);
  } catch {
    return false;
  }
}

interface RunningChild {
  child: ChildProcess;
  logOffset: number;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>;
}

/** Starts etcd, waits until it is healthy, and keeps it running until `options.signal` aborts. */
export async function startManagedEtcd(options: ManagedEtcdOptions): Promise<ManagedEtcd> {
  const clientPort = options.clientPort ?? 2379;
  const peerPort = options.peerPort ?? clientPort + 1;
  const startTimeoutMs = options.startTimeoutMs ?? 30_000;
  const stopTimeoutMs = options.stopTimeoutMs ?? 10_000;
  const firstDelay = options.restartDelayMs ?? 500;
  const maxDelay = options.maxRestartDelayMs ?? 30_000;
  const log = options.log ?? ((m: string) => process.stderr.write(`${m}\n`));
  const { signal } = options;
  const layout = etcdLayout(options.dataDir);
  const clientUrl = `http://127.0.0.1:${clientPort}`;

  const etcdPath = findExecutable(options.binary ?? 'etcd');
  if (!etcdPath) {
    const what = options.binary && options.binary.includes('/') ? `etcd not found at ${options.binary}` : 'etcd not found on PATH';
    throw new StartupError(`${what}: install it with "apt-get install -y etcd-server"`);
  }
  const setpriv = findExecutable('setpriv');
  if (!setpriv) log('etcd: setpriv not found; etcd may outlive a master that is killed');

  const portError = (port: number): StartupError => new StartupError(portInUseMessage({
    port, what: port === peerPort ? 'etcd peer port' : 'etcd client port', flag: '--etcd-port',
  }));
  const checkPorts = async () => {
    for (const port of [clientPort, peerPort]) {
      const code = await probePort(port);
      if (code === 'EADDRINUSE') throw portError(port);
      if (code) throw new StartupError(`cannot listen on 127.0.0.1:${port} for etcd (${code}); pass another --etcd-port`);
    }
  };
  /** Turns etcd's own complaint into our error: a port clash, or the tail of its log. */
  const startFailure = (tail: string[], why: string): StartupError => {
    const inUse = tail.map((l) => /127\.0\.0\.1:(\d+).*address already in use/.exec(l)).find(Boolean);
    if (inUse) return portError(Number(inUse[1]));
    const lines = summarizeLog(tail);
    const said = lines.length ? `; its last log lines (full log in ${layout.logFile}):\n  ${lines.join('\n  ')}` : ` (see ${layout.logFile})`;
    return new StartupError(`etcd ${why}${said}`);
  };

  const spawnEtcd = (): RunningChild => {
    mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
    const fd = openSync(layout.logFile, 'a', 0o600);
    const logOffset = fstatSync(fd).size;
    const args = etcdArgs({ dataDir: options.dataDir, clientPort, peerPort });
    const [command, argv] = setpriv
      ? [setpriv, ['--pdeathsig', 'SIGTERM', '--', etcdPath, ...args]]
      : [etcdPath, args];
    let child: ChildProcess;
    try {
      // Own session: a Ctrl-C meant for the master must not reach etcd before the master stops it.
      child = spawn(command, argv, { stdio: ['ignore', fd, fd], detached: true });
    } finally {
      closeSync(fd);
    }
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>((resolvePromise) => {
      child.once('exit', (code, sig) => resolvePromise({ code, signal: sig }));
      child.once('error', (error) => resolvePromise({ code: null, signal: null, error }));
    });
    if (child.pid !== undefined) writeFileSync(layout.pidFile, `${child.pid}\n`, { mode: 0o644 });
    return { child, logOffset, exited };
  };

  /** Waits for /health; rejects with etcd's own words if it exits first or never gets healthy. */
  const waitHealthy = async (run: RunningChild): Promise<void> => {
    let exit: Awaited<RunningChild['exited']> | undefined;
    void run.exited.then((e) => { exit = e; });
    const ok = await pollUntil(async () => exit !== undefined || (await isHealthy(clientUrl)), startTimeoutMs, signal);
    if (exit) {
      if (exit.error) throw new StartupError(`cannot run etcd (${etcdPath}): ${exit.error.message}`);
      const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
      throw startFailure(logTail(layout.logFile, run.logOffset), `${how} while starting`);
    }
    if (!ok && !signal.aborted) {
      run.child.kill('SIGKILL');
      await run.exited;
      throw startFailure(logTail(layout.logFile, run.logOffset), `did not become healthy at ${clientUrl} within ${startTimeoutMs} ms`);
    }
  };

  const stopChild = async (run: RunningChild): Promise<void> => {
    if (run.child.exitCode !== null || run.child.signalCode !== null) return;
    run.child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([
      run.exited.then(() => false),
      new Promise<boolean>((r) => { timer = setTimeout(() => r(true), stopTimeoutMs); }),
    ]);
    clearTimeout(timer);
    if (timedOut) {
      log(`etcd: did not exit within ${stopTimeoutMs} ms of SIGTERM; sending SIGKILL`);
      run.child.kill('SIGKILL');
      await run.exited;
    }
  };

  await endLeftoverEtcd(layout, stopTimeoutMs, log);
  await checkPorts();
  let current: RunningChild | undefined = spawnEtcd();
  try {
    await waitHealthy(current);
  } catch (err) {
    await stopChild(current);
    rmSync(layout.pidFile, { force: true });
    throw err;
  }

  let restarts = 0;
  const waitExitOrAbort = (run: RunningChild) => Promise.race([run.exited, new Promise<undefined>((r) => {
    if (signal.aborted) r(undefined);
    else signal.addEventListener('abort', () => r(undefined), { once: true });
  })]);
  const supervise = async (): Promise<void> => {
    let delay = firstDelay;
    let startedAt = Date.now();
    while (current && !signal.aborted) {
      const run: RunningChild = current;
      const exit = await waitExitOrAbort(run);
      if (!exit) break;
      current = undefined;
      // A run that stayed up a while resets the backoff.
      if (Date.now() - startedAt > 60_000) delay = firstDelay;
      const how = exit.error ? `could not run (${exit.error.message})` : exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
      // etcd's own last words say why only when it exited by itself.
      const tail = exit.code ? summarizeLog(logTail(layout.logFile, run.logOffset)) : [];
      log(`etcd: ${how} unexpectedly; restarting in ${delay} ms${tail.length ? `; last log lines:\n  ${tail.join('\n  ')}` : ''}`);
      while (!current && !signal.aborted) {
        await abortableDelay(delay, signal);
        if (signal.aborted) break;
        delay = Math.min(delay * 2, maxDelay);
        let attempt: RunningChild | undefined;
        try {
          await checkPorts();
          attempt = spawnEtcd();
          await waitHealthy(attempt);
          current = attempt;
          startedAt = Date.now();
          restarts++;
          log(`etcd: restarted (PID ${attempt.child.pid})`);
        } catch (err) {
          if (attempt) await stopChild(attempt);
          log(`etcd: restart failed, trying again in ${delay} ms: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
    }
    if (current) await stopChild(current);
    current = undefined;
    rmSync(layout.pidFile, { force: true });
  };

  return {
    endpoints: [clientUrl],
    pid: () => current?.child.pid,
    restarts: () => restarts,
    stopped: supervise(),
  };
}
