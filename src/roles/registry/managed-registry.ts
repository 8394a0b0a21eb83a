// Runs the image registry (distribution's docker-registry) as the master's supervised child: checks, spawn, /v2/ wait, restart with backoff, clean stop.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, fstatSync, mkdirSync, openSync, readFileSync, readSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { basename, join, resolve } from 'node:path';
import { findExecutable } from '../etcd/managed-etcd.js';
import { portInUseMessage, StartupError } from '../startup-error.js';

export interface ManagedRegistryOptions {
  /** The master's data directory: blobs go to DATA_DIR/registry, config to registry.yml, log to registry.log, PID to registry.pid. */
  dataDir: string;
  /** The port to listen on (default 5000). */
  port?: number;
  /** The address to listen on (default 0.0.0.0: workers on other machines pull from it). */
  address?: string;
  /** The host workers should use in image names (default: `address`, or 127.0.0.1 when it is a wildcard). */
  advertiseHost?: string;
  /** The registry executable: a name looked up on PATH, or a path (default `docker-registry`). */
  binary?: string;
  /** Where supervision messages go (default: stderr). */
  log?: (message: string) => void;
  /** Aborting stops the registry (SIGTERM, then SIGKILL after stopTimeoutMs). */
  signal: AbortSignal;
  /** How long the registry may take to answer /v2/ at start and after a restart (default 20 s). */
  startTimeoutMs?: number;
  /** How long a SIGTERMed registry may take to exit before SIGKILL (default 10 s). */
  stopTimeoutMs?: number;
  /** First delay before restarting a registry that died (default 500 ms); doubles per failure up to maxRestartDelayMs. */
  restartDelayMs?: number;
  maxRestartDelayMs?: number;
}

export interface ManagedRegistry {
  /** `HOST:PORT` to put in image names (e.g. `127.0.0.1:5000/busybox:1.35`). */
  address: string;
  /** Where this machine reaches the registry's HTTP API. */
  endpoint: string;
  /** The running registry's PID (undefined between a crash and its restart). */
  pid(): number | undefined;
  /** How many times the registry has been restarted after dying. */
  restarts(): number;
  /** Resolves once the signal has aborted and the registry has exited. */
  stopped: Promise<void>;
}

export interface RegistryLayout {
  storeDir: string;
  configFile: string;
  pidFile: string;
  logFile: string;
}

const TAIL_LINES = 8;

export function registryLayout(dataDir: string): RegistryLayout {
  const dir = resolve(dataDir);
  return {
    storeDir: join(dir, 'registry'),
    configFile: join(dir, 'registry.yml'),
    pidFile: join(dir, 'registry.pid'),
    logFile: join(dir, 'registry.log'),
  };
}

function isWildcard(address: string): boolean {
  return address === '' || address === '0.0.0.0' || address === '::' || address === '[::]';
}

/** `HOST:PORT`, with brackets around an IPv6 host. */
export function hostPort(host: string, port: number): string {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  return bare.includes(':') ? `[${bare}]:${port}` : `${bare}:${port}`;
}

/** Where to listen, where this machine calls it, and what to advertise, from the options. */
export function registryAddresses(options: { address: string; port: number; advertiseHost?: string }): { listen: string; endpoint: string; advertise: string } {
  const local = isWildcard(options.address) ? '127.0.0.1' : options.address;
  return {
    listen: hostPort(options.address || '0.0.0.0', options.port),
    endpoint: `http://${hostPort(local, options.port)}`,
    advertise: hostPort(options.advertiseHost ?? local, options.port),
  };
}

/** The registry's config: filesystem storage in the data dir, deletes allowed, no auth, no access log. */
export function registryConfig(options: { storeDir: string; listen: string }): string {
  // JSON strings are valid YAML scalars: safe for any path.
  return [
    '# Written by the minik8s master at every start; edits are overwritten.',
    'version: 0.1',
    'log:',
    '  level: info',
    '  formatter: text',
    '  accesslog:',
    '    disabled: true',
    'storage:',
    '  filesystem:',
    `    rootdirectory: ${JSON.stringify(options.storeDir)}`,
    '  delete:',
    '    enabled: true',
    '  cache:',
    '    blobdescriptor: inmemory',
    'http:',
    `  addr: ${JSON.stringify(options.listen)}`,
    '  headers:',
    '    X-Content-Type-Options: [nosniff]',
    '',
  ].join('\n');
}

/** True when `args` is a registry serving `configFile`. */
export function isOurRegistry(args: string[], configFile: string): boolean {
  if (args.length < 3) return false;
  const exe = basename(args[0]!);
  return (exe === 'docker-registry' || exe === 'registry') && args[1] === 'serve' && args[2] === configFile;
}

/** The registry's log lines worth showing a person: its errors when there are any, else the last lines, without timestamps. */
export function summarizeRegistryLog(lines: string[]): string[] {
  const errors = lines.filter((l) => /level=(error|fatal|panic)/.test(l) || /^(panic|Error|configuration error)/i.test(l));
  return (errors.length ? errors.slice(-3) : lines.slice(-5)).map((l) => {
    const msg = /msg="((?:[^"\\]|\\.)*)"/.exec(l);
    return msg ? msg[1]!.replace(/\\"/g, '"') : l;
  });
}

/** The port a "bind: address already in use" line is about, if the lines hold one. */
export function portInUseFromLog(lines: string[]): number | undefined {
  for (const line of lines) {
    const m = /listen tcp [^ ]*:(\d+): bind: address already in use/.exec(line);
    if (m) return Number(m[1]);
  }
  return undefined;
}

/** Resolves to the error code when host:port cannot be bound (EADDRINUSE, EACCES, EADDRNOTAVAIL), undefined when it is free. */
function probeListen(host: string, port: number): Promise<string | undefined> {
  return new Promise((resolvePromise) => {
    const server = createServer();
    server.once('error', (err: NodeJS.ErrnoException) => resolvePromise(err.code ?? 'EUNKNOWN'));
    server.listen({ port, host: host.replace(/^\[(.*)\]$/, '$1') || '0.0.0.0', exclusive: true }, () => server.close(() => resolvePromise(undefined)));
  });
}

function processArgs(pid: number): string[] | undefined {
  try {
    const raw = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    if (!raw) return undefined;
    return raw.split('\0').filter((s, i, all) => s !== '' || i < all.length - 1);
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

async function pollUntil(check: () => boolean | Promise<boolean>, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() >= deadline || signal?.aborted) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Ends a registry left over by an earlier master (named by the pidfile), by its PID, and waits for it to go; true when there was one. */
async function endLeftoverRegistry(layout: RegistryLayout, stopTimeoutMs: number, log: (m: string) => void): Promise<boolean> {
  let pid: number;
  try {
    pid = Number.parseInt(readFileSync(layout.pidFile, 'utf8').trim(), 10);
  } catch {
    return false;
  }
  const ours = () => {
    const args = processArgs(pid);
    return args !== undefined && isOurRegistry(args, layout.configFile);
  };
  if (!Number.isInteger(pid) || pid <= 1 || !ours()) return false;
  log(`registry: stopping leftover registry (PID ${pid}) from an earlier run`);
  // Its command line vanishes before its sockets close, so wait for the exit itself, not for the name to go.
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return true;
  }
  if (await pollUntil(() => !stillRunning(pid), stopTimeoutMs)) return true;
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    return true;
  }
  if (!(await pollUntil(() => !stillRunning(pid), 5_000))) {
    throw new StartupError(`a leftover registry (PID ${pid}) for ${layout.storeDir} does not exit; stop it and start again`);
  }
  return true;
}

function logTail(logFile: string, offset: number): string[] {
  let fd: number | undefined;
  try {
    fd = openSync(logFile, 'r');
    const size = fstatSync(fd).size;
    const start = Math.max(offset, size - 64 * 1024);
    const buf = Buffer.alloc(Math.max(0, size - start));
    readSync(fd, buf, 0, buf.length, start);
    return buf.toString('utf8').split('\n').map((l) => l.trimEnd()).filter((l) => l !== '').slice(-TAIL_LINES);
  } catch {
    return [];
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

async function answers(endpoint: string): Promise<boolean> {
  try {
    const res = await fetch(`${endpoint}/v2/`, { signal: AbortSignal.timeout(1_000) });
    await res.arrayBuffer();
    return res.status === 200;
  } catch {
    return false;
  }
}

interface RunningChild {
  child: ChildProcess;
  logOffset: number;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>;
}

/** Starts the registry, waits until /v2/ answers, and keeps it running until `options.signal` aborts. */
export async function startManagedRegistry(options: ManagedRegistryOptions): Promise<ManagedRegistry> {
  const port = options.port ?? 5000;
  const address = options.address ?? '0.0.0.0';
  const startTimeoutMs = options.startTimeoutMs ?? 20_000;
  const stopTimeoutMs = options.stopTimeoutMs ?? 10_000;
  const firstDelay = options.restartDelayMs ?? 500;
  const maxDelay = options.maxRestartDelayMs ?? 30_000;
  const log = options.log ?? ((m: string) => process.stderr.write(`${m}\n`));
  const { signal } = options;
  const layout = registryLayout(options.dataDir);
  const addresses = registryAddresses({ address, port, advertiseHost: options.advertiseHost });

  const registryPath = findExecutable(options.binary ?? 'docker-registry');
  if (!registryPath) {
    const what = options.binary && options.binary.includes('/') ? `the registry was not found at ${options.binary}` : 'docker-registry not found on PATH';
    throw new StartupError(`${what}: install it with "apt-get install -y docker-registry"`);
  }
  const setpriv = findExecutable('setpriv');
  if (!setpriv) log('registry: setpriv not found; the registry may outlive a master that is killed');

  const portError = (): StartupError => new StartupError(portInUseMessage({ port, what: 'image registry', flag: '--registry-port' }));
  const checkPort = async () => {
    const code = await probeListen(address, port);
    if (code === 'EADDRINUSE') throw portError();
    if (code) throw new StartupError(`cannot listen on ${addresses.listen} for the image registry (${code}); pass another --registry-port or --registry-address`);
  };
  const startFailure = (tail: string[], why: string): StartupError => {
    if (portInUseFromLog(tail) !== undefined) return portError();
    const lines = summarizeRegistryLog(tail);
    const said = lines.length ? `; its last log lines (full log in ${layout.logFile}):\n  ${lines.join('\n  ')}` : ` (see ${layout.logFile})`;
    return new StartupError(`the image registry ${why}${said}`);
  };

  const spawnRegistry = (): RunningChild => {
    mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
    mkdirSync(layout.storeDir, { recursive: true });
    writeFileSync(layout.configFile, registryConfig({ storeDir: layout.storeDir, listen: addresses.listen }), { mode: 0o644 });
    const fd = openSync(layout.logFile, 'a', 0o600);
    const logOffset = fstatSync(fd).size;
    const args = ['serve', layout.configFile];
    const [command, argv] = setpriv
      ? [setpriv, ['--pdeathsig', 'SIGTERM', '--', registryPath, ...args]]
      : [registryPath, args];
    let child: ChildProcess;
    try {
      // Own session: a Ctrl-C meant for the master must not reach the registry before the master stops it.
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

  /** Waits for /v2/; rejects with the registry's own words if it exits first or never answers. */
  const waitReady = async (run: RunningChild): Promise<void> => {
    let exit: Awaited<RunningChild['exited']> | undefined;
    void run.exited.then((e) => { exit = e; });
    const ok = await pollUntil(async () => exit !== undefined || (await answers(addresses.endpoint)), startTimeoutMs, signal);
    if (exit) {
      if (exit.error) throw new StartupError(`cannot run the image registry (${registryPath}): ${exit.error.message}`);
      const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
      throw startFailure(logTail(layout.logFile, run.logOffset), `${how} while starting`);
    }
    if (!ok && !signal.aborted) {
      run.child.kill('SIGKILL');
      await run.exited;
      throw startFailure(logTail(layout.logFile, run.logOffset), `did not answer at ${addresses.endpoint}/v2/ within ${startTimeoutMs} ms`);
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
      log(`registry: did not exit within ${stopTimeoutMs} ms of SIGTERM; sending SIGKILL`);
      run.child.kill('SIGKILL');
      await run.exited;
    }
  };

  if (await endLeftoverRegistry(layout, stopTimeoutMs, log)) {
    // A multi-threaded process shows as exited while its last threads still hold the listening socket.
    await pollUntil(async () => (await probeListen(address, port)) !== 'EADDRINUSE', 5_000);
  }
  await checkPort();
  let current: RunningChild | undefined = spawnRegistry();
  try {
    await waitReady(current);
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
      const tail = exit.code ? summarizeRegistryLog(logTail(layout.logFile, run.logOffset)) : [];
      log(`registry: ${how} unexpectedly; restarting in ${delay} ms${tail.length ? `; last log lines:\n  ${tail.join('\n  ')}` : ''}`);
      while (!current && !signal.aborted) {
        await abortableDelay(delay, signal);
        if (signal.aborted) break;
        delay = Math.min(delay * 2, maxDelay);
        let attempt: RunningChild | undefined;
        try {
          await checkPort();
          attempt = spawnRegistry();
          await waitReady(attempt);
          current = attempt;
          startedAt = Date.now();
          restarts++;
          log(`registry: restarted (PID ${attempt.child.pid})`);
        } catch (err) {
          if (attempt) await stopChild(attempt);
          log(`registry: restart failed, trying again in ${delay} ms: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
    }
    if (current) await stopChild(current);
    current = undefined;
    rmSync(layout.pidFile, { force: true });
  };

  return {
    address: addresses.advertise,
    endpoint: addresses.endpoint,
    pid: () => current?.child.pid,
    restarts: () => restarts,
    stopped: supervise(),
  };
}
