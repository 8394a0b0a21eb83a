// Several machines on one, for end-to-end tests: a host bridge, a network namespace per simulated machine with its own dockerd and worker, a master on the bridge; undoes all it made (processes by PID), even when the test process dies.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { accessSync, appendFileSync, closeSync, constants, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import Docker from 'dockerode';
import { waitFor } from '../../src/core/wait-for.js';
import { ensureBaseImages, seedRegistryStore } from './images.js';
import { BINARY, freeClusterCIDR, freePort } from './master.js';

const execFileAsync = promisify(execFile);

/** Where `ip`, `nsenter`, `dockerd`, `iptables` and `umount` may live; sbin is often missing from a test runner's PATH. */
const SEARCH_PATH = [...(process.env.PATH ?? '').split(':').filter(Boolean), '/usr/local/sbin', '/usr/sbin', '/sbin', '/usr/bin', '/bin'];

/** The absolute path of an executable, or undefined. */
export function findExecutable(name: string): string | undefined {
  for (const dir of SEARCH_PATH) {
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch { /* not there */ }
  }
  return undefined;
}

/** Why the simulated cluster cannot run here, or undefined when it can. */
export function netnsSkipReason(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root: network namespaces, a bridge, iptables and a dockerd per namespace';
  const missing = ['ip', 'nsenter', 'dockerd'].filter((c) => findExecutable(c) === undefined);
  if (missing.length > 0) return `needs ${missing.join(', ')} (apt-get install -y iproute2 util-linux docker.io)`;
  return undefined;
}

function tool(name: string): string {
  const path = findExecutable(name);
  if (!path) throw new Error(`${name} is not installed`);
  return path;
}

/** Runs a command; rejects with its stderr. */
async function sh(command: string, args: string[], timeoutMs = 30_000): Promise<string> {
  try {
    const { stdout } = await execFileAsync(tool(command), args, { timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 });
    return stdout;
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`${command} ${args.join(' ')}: ${(e.stderr || e.message).trim()}`);
  }
}

// ---------------------------------------------------------------------------------------------
// Addresses

function ipToNumber(ip: string): number {
  return ip.split('.').reduce((acc, o) => acc * 256 + Number(o), 0);
}

/** [first, end) of a.b.c.d/N (a bare address is a /32). */
function range(cidr: string): [number, number] {
  const [ip, bits = '32'] = cidr.split('/');
  const size = 2 ** (32 - Number(bits));
  const base = Math.floor(ipToNumber(ip!) / size) * size;
  return [base, base + size];
}

function overlaps(a: string, b: string): boolean {
  const [a0, a1] = range(a);
  const [b0, b1] = range(b);
  return a0 < b1 && b0 < a1;
}

/** Every IPv4 address and range this host's interfaces and routes (all tables) mention. */
async function hostRanges(): Promise<string[]> {
  const text = `${await sh('ip', ['-4', '-o', 'addr', 'show'])}\n${await sh('ip', ['-4', 'route', 'show', 'table', 'all'])}`;
  return [...text.matchAll(/\b(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})(\/\d{1,2})?\b/g)]
    .map((m) => `${m[1]}${m[2] ?? '/32'}`)
    // A default route written out (0.0.0.0/0) overlaps everything: it says nothing about which ranges are taken.
    .filter((c) => !c.endsWith('/0'));
}

/** `count` distinct 10.123.X.0/24 (as `10.123.X`) that no interface or route of this host uses, picked at random. */
export async function freeSubnets(count: number, prefix = '10.123'): Promise<string[]> {
  const used = await hostRanges();
  const free: string[] = [];
  for (let x = 1; x <= 254; x++) {
    const subnet = `${prefix}.${x}`;
    if (!used.some((u) => overlaps(u, `${subnet}.0/24`))) free.push(subnet);
  }
  if (free.length < count) throw new Error(`fewer than ${count} free ${prefix}.X.0/24 ranges on this host`);
  for (let i = free.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [free[i], free[j]] = [free[j]!, free[i]!];
  }
  return free.slice(0, count);
}

// ---------------------------------------------------------------------------------------------
// Processes, known by PID and start time (which a reused PID does not share)

/** State and start time (clock ticks since boot) from /proc/PID/stat; undefined when there is no such process. */
function procStat(pid: number): { state: string; startTime: string } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may hold spaces: the fields after the last ')' are fixed (state is field 3, starttime 22).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0]!, startTime: fields[19]! };
  } catch {
    return undefined;
  }
}

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
  } catch {
    return '';
  }
}

/** Is it still running, and still the process we mean? A zombie counts as gone. */
function isRunning(pid: number, identity: { startTime?: string; cmdlineIncludes?: string }): boolean {
  const stat = procStat(pid);
  if (!stat || stat.state === 'Z' || stat.state === 'X') return false;
  if (identity.startTime !== undefined && stat.startTime !== identity.startTime) return false;
  if (identity.cmdlineIncludes !== undefined && !commandLine(pid).includes(identity.cmdlineIncludes)) return false;
  return true;
}

/** SIGTERM, and SIGKILL if it is still running at the deadline; resolves once it has gone. */
async function stopPid(pid: number, identity: { startTime?: string; cmdlineIncludes?: string }, what: string, termMs: number): Promise<void> {
  if (!isRunning(pid, identity)) return;
  process.kill(pid, 'SIGTERM');
  try {
    await waitFor(() => !isRunning(pid, identity), { timeoutMs: termMs, intervalMs: 50, description: `${what} (pid ${pid}) to exit on SIGTERM` });
  } catch {
    if (isRunning(pid, identity)) process.kill(pid, 'SIGKILL');
    await waitFor(() => !isRunning(pid, identity), { timeoutMs: 10_000, intervalMs: 50, description: `${what} (pid ${pid}) to exit on SIGKILL` });
  }
}

function readPidFile(path: string): number | undefined {
  try {
    const pid = Number(readFileSync(path, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** A child process we started, its output going to a file (a pipe would break, and kill dockerd, should this process die first). */
interface Started {
  child: ChildProcess;
  pid: number;
  /** Its start time in /proc, which tells it from a later process given the same PID. */
  startTime: string;
  output(): string;
  exited(): boolean;
}

function startProcess(command: string, args: string[], logFile: string, env: NodeJS.ProcessEnv = process.env): Started {
  const fd = openSync(logFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn(command, args, { env, stdio: ['ignore', fd, fd] });
  } finally {
    closeSync(fd);
  }
  let spawnError = '';
  // A spawn failure (ENOENT) shows up as an exit, not as an unhandled error.
  child.on('error', (err) => { spawnError = `\nspawn failed: ${err.message}`; });
  if (child.pid === undefined) throw new Error(`could not start ${command}`);
  const pid = child.pid;
  // Until it is waited for, even a process that has already exited is in /proc (a zombie).
  const startTime = procStat(pid)?.startTime;
  if (startTime === undefined) throw new Error(`${command} (pid ${pid}) is not in /proc`);
  return {
    child, pid, startTime,
    output: () => {
      try {
        return readFileSync(logFile, 'utf8').slice(-65_536) + spawnError;
      } catch {
        return spawnError;
      }
    },
    exited: () => child.exitCode !== null || child.signalCode !== null,
  };
}

/**
 * Waits for `check` (see waitFor) while the process runs: fails at once, with its output, if it
 * exits first, and with its output on the deadline too.
 */
async function untilReady<T>(p: Started, what: string, check: () => T | Promise<T>, timeoutMs: number): Promise<NonNullable<T>> {
  const stop = new AbortController();
  let onExit = () => {};
  const exited = new Promise<never>((_, reject) => {
    onExit = () => {
      stop.abort();
      reject(new Error(`${what}: pid ${p.pid} exited early (code ${p.child.exitCode}, signal ${p.child.signalCode}):\n${p.output().slice(-4000)}`));
    };
    if (p.exited()) onExit();
    else p.child.once('exit', onExit);
  });
  try {
    return await Promise.race([
      waitFor(check, { timeoutMs, intervalMs: 50, description: what, signal: stop.signal }).catch((err: Error) => {
        if (stop.signal.aborted) return exited;
        throw new Error(`${err.message}\n${p.output().slice(-4000)}`, { cause: err });
      }),
      exited,
    ]);
  } finally {
    p.child.off('exit', onExit);
    stop.abort();
  }
}

// ---------------------------------------------------------------------------------------------
// Undoing: plain data, so that a reaper process can do it too

/** Mount points at or under `dir`, deepest first (from this process's mount table). */
export function mountsUnder(dir: string): string[] {
  const table = readFileSync('/proc/self/mountinfo', 'utf8');
  const points = table.split('\n').filter(Boolean)
    .map((line) => line.split(' ')[4]!.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8))))
    .filter((p) => p === dir || p.startsWith(`${dir}/`));
  return [...new Set(points)].sort((a, b) => b.length - a.length);
}

async function linkExists(name: string): Promise<boolean> {
  return sh('ip', ['link', 'show', name]).then(() => true, () => false);
}

async function netnsExists(name: string): Promise<boolean> {
  return (await sh('ip', ['netns', 'list'])).split('\n').some((line) => line.split(' ')[0] === name);
}

/** One thing to undo. Each is idempotent: undoing what is already gone does nothing. */
export type UndoAction =
  /** A process we started; then the processes in `pidFiles` (the master's etcd and registry end with it) if their command line names `guard`. */
  | { kind: 'stop-process'; what: string; pid: number; startTime: string; termMs: number; pidFiles?: string[]; guard?: string }
  /** Every container of a dockerd (through that engine), the dockerd, then its managed containerd. */
  | { kind: 'stop-dockerd'; what: string; pid: number; startTime: string; socket: string; containerdPidFile: string; guard: string }
  | { kind: 'delete-link'; name: string }
  | { kind: 'delete-netns'; name: string; veth: string }
  | { kind: 'delete-iptables-rule'; rule: string[] }
  /** Unmount everything under it (a dockerd bind-mounts its data root; a container killed with it leaves its layers mounted), then remove it. */
  | { kind: 'remove-dir'; path: string }
  /** The first `ip netns add` on a machine makes /run/netns a mount point: undone once no namespace is left in it. */
  | { kind: 'unmount-netns-dir'; path: string };

async function undo(action: UndoAction): Promise<void> {
  switch (action.kind) {
    case 'stop-process': {
      await stopPid(action.pid, { startTime: action.startTime }, action.what, action.termMs);
      for (const file of action.pidFiles ?? []) {
        const pid = readPidFile(file);
        if (pid !== undefined) await stopPid(pid, { cmdlineIncludes: action.guard ?? '\0' }, `${action.what}'s ${file}`, 15_000);
      }
      return;
    }
    case 'stop-dockerd': {
      // Containers first, through the engine: the kubelet leaves its pods running when it stops.
      let removal: Error | undefined;
      if (isRunning(action.pid, { startTime: action.startTime })) {
        const docker = new Docker({ socketPath: action.socket, timeout: 20_000 });
        const containers = await docker.listContainers({ all: true }).catch(() => []);
        const results = await Promise.allSettled(containers.map((c) => docker.getContainer(c.Id).remove({ force: true, v: true })));
        const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
        if (failed) removal = new Error(`removing its containers: ${failed.reason instanceof Error ? failed.reason.message : String(failed.reason)}`);
      }
      await stopPid(action.pid, { startTime: action.startTime }, action.what, 20_000);
      // Its managed containerd ends with it, unless dockerd had to be killed.
      const containerd = readPidFile(action.containerdPidFile);
      if (containerd !== undefined) await stopPid(containerd, { cmdlineIncludes: action.guard }, `containerd of ${action.what}`, 10_000);
      if (removal) throw removal;
      return;
    }
    case 'delete-link':
      if (await linkExists(action.name)) await sh('ip', ['link', 'del', action.name]);
      return;
    case 'delete-netns':
      if (await netnsExists(action.name)) await sh('ip', ['netns', 'del', action.name]);
      // The kernel dismantles a deleted namespace's devices (a veth end there takes ours with it) in the background.
      await waitFor(async () => !(await linkExists(action.veth)), { timeoutMs: 10_000, intervalMs: 50, description: `veth ${action.veth} to go with ${action.name}` });
      return;
    case 'delete-iptables-rule':
      // -C fails once the rule is gone: delete only while it is there.
      while (await sh('iptables', ['-C', ...action.rule]).then(() => true, () => false)) await sh('iptables', ['-D', ...action.rule]);
      return;
    case 'remove-dir': {
      for (const point of mountsUnder(action.path)) await sh('umount', [point]).catch(() => sh('umount', ['-l', point]));
      const left = mountsUnder(action.path);
      if (left.length > 0) throw new Error(`still mounted under ${action.path}: ${left.join(', ')}`);
      rmSync(action.path, { recursive: true, force: true });
      return;
    }
    case 'unmount-netns-dir': {
      const left = mountsUnder(action.path);
      // A plain umount fails while a namespace is mounted inside: someone else's, made meanwhile, stays safe.
      if (left.length === 1 && left[0] === action.path) await sh('umount', [action.path]).catch(() => {});
      return;
    }
  }
}

function describeAction(a: UndoAction): string {
  switch (a.kind) {
    case 'stop-process': case 'stop-dockerd': return `stop ${a.what} (pid ${a.pid})`;
    case 'delete-link': return `delete link ${a.name}`;
    case 'delete-netns': return `delete netns ${a.name}`;
    case 'delete-iptables-rule': return `delete iptables rule ${a.rule.join(' ')}`;
    case 'remove-dir': return `remove ${a.path}`;
    case 'unmount-netns-dir': return `unmount ${a.path}`;
  }
}

/** Undoes the actions last first; every one is tried. Resolves with the failures. */
export async function undoAll(actions: readonly UndoAction[], log: (line: string) => void = () => {}): Promise<string[]> {
  const failures: string[] = [];
  for (const action of [...actions].reverse()) {
    const started = Date.now();
    try {
      await undo(action);
      log(`${describeAction(action)}: done in ${Date.now() - started} ms`);
    } catch (err) {
      failures.push(`${describeAction(action)}: ${err instanceof Error ? err.message : String(err)}`);
      log(`${describeAction(action)}: FAILED ${failures.at(-1)}`);
    }
  }
  return failures;
}

const REAP = '--reap-netns-cluster';

/**
 * What the cluster made, in order, told as it happens to a reaper: a detached process (its own
 * session, so Ctrl-C does not reach it) that reads the actions on its stdin. When this process
 * ends without saying `done` (killed, Ctrl-C, a crash), the pipe's end reaches the reaper, which
 * undoes everything. MINIK8S_NETNS_REAPER_LOG=FILE makes it say what it did there.
 */
class Undo {
  readonly #actions: UndoAction[] = [];
  readonly #reaper: ChildProcess;
  #done?: Promise<void>;

  constructor() {
    this.#reaper = spawn(process.execPath, [fileURLToPath(import.meta.url), REAP], { detached: true, stdio: ['pipe', 'ignore', 'ignore'] });
    this.#reaper.on('error', () => {});
    this.#reaper.stdin!.on('error', () => {});
    this.#reaper.unref();
    (this.#reaper.stdin as Socket).unref();
  }

  push(action: UndoAction): void {
    this.#actions.push(action);
    this.#reaper.stdin!.write(`${JSON.stringify(action)}\n`);
  }

  run(): Promise<void> {
    this.#done ??= (async () => {
      const failures = await undoAll(this.#actions);
      this.#actions.length = 0;
      // Nothing left for the reaper: let it go, and wait for it, so that it is no leftover either.
      if (this.#reaper.exitCode === null && this.#reaper.signalCode === null) {
        const gone = new Promise<void>((resolve) => this.#reaper.once('exit', () => resolve()));
        this.#reaper.stdin!.end('done\n');
        await Promise.race([gone, waitFor(() => this.#reaper.exitCode !== null || this.#reaper.signalCode !== null, { timeoutMs: 10_000, description: 'the reaper to exit' })])
          .catch(() => this.#reaper.kill('SIGKILL'));
      }
      if (failures.length > 0) throw new Error(`cleanup of the netns cluster failed:\n${failures.join('\n')}`);
    })();
    return this.#done;
  }
}

/** The reaper's main: collect actions until stdin ends; undo them all unless told `done`. */
async function reap(): Promise<void> {
  const logFile = process.env.MINIK8S_NETNS_REAPER_LOG;
  const log = (line: string) => { if (logFile) appendFileSync(logFile, `${new Date().toISOString()} reaper ${process.pid}: ${line}\n`); };
  const actions: UndoAction[] = [];
  let done = false;
  let buffer = '';
  process.stdin.setEncoding('utf8');
  for await (const chunk of process.stdin) {
    buffer += chunk as string;
    const lines = buffer.split('\n');
    buffer = lines.pop()!;
    for (const line of lines) {
      if (line === 'done') done = true;
      else if (line.trim()) actions.push(JSON.parse(line) as UndoAction);
    }
  }
  if (done) return;
  log(`the test process ended without cleaning up: undoing ${actions.length} actions`);
  const failures = await undoAll(actions, log);
  log(failures.length === 0 ? 'all undone' : `${failures.length} failed`);
  process.exitCode = failures.length === 0 ? 0 : 1;
}

if (process.argv[2] === REAP && process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await reap();

// ---------------------------------------------------------------------------------------------
// The cluster

export interface NetnsMaster {
  url: string;
  /** The admin token. */
  token: string;
  joinToken: string;
  registryPort: number;
  clusterCIDR: string;
  dataDir: string;
  /** Environment for running the CLI against this master. */
  env: NodeJS.ProcessEnv;
  pid: number;
  output(): string;
}

export interface NetnsMachine {
  /** Short name, e.g. w1. */
  name: string;
  /** The network namespace, under /var/run/netns. */
  netns: string;
  /** The machine's address on the bridge. */
  ip: string;
  /** Its own Docker engine: unix:///.../docker.sock. */
  dockerHost: string;
  docker: Docker;
  dockerdPid: number;
  dir: string;
  dockerdOutput(): string;
}

export interface NetnsWorker {
  nodeName: string;
  machine: NetnsMachine;
  dataDir: string;
  kubeletPort: number;
  pid: number;
  output(): string;
  /** The node credential the worker got when it joined (DATA_DIR/kubelet/node-credential.json). */
  credential(): { token: string; nodeName: string; podCIDR: string };
}

export interface NetnsClusterOptions {
  /** The simulated machines' short names (at most 9, each at most 4 characters). */
  machines: string[];
  /** Give the master's registry the base images (builds them first if missing). Default true. */
  seedImages?: boolean;
  /** The kubelet port on every machine (each has its own network namespace). Default 10250. */
  kubeletPort?: number;
  /** Called with progress lines (timings). */
  log?: (line: string) => void;
}

export interface NetnsCluster {
  /** A short random tag in every name this cluster made. */
  tag: string;
  bridge: string;
  /** The bridge's /24, as a.b.c.0/24. */
  subnet: string;
  /** The host's address on the bridge: the master listens there. */
  hostIP: string;
  master: NetnsMaster;
  machines: NetnsMachine[];
  workers: NetnsWorker[];
  /** Stops and removes everything, last made first; safe to call twice. Rejects with every step that failed. */
  destroy(): Promise<void>;
}

/** Two free loopback ports, the second right after the first (etcd's peer port is client + 1). */
async function etcdPorts(): Promise<number> {
  for (;;) {
    const p = await freePort();
    const ok = await new Promise<boolean>((resolve) => {
      const s = createServer();
      s.once('error', () => resolve(false));
      s.listen(p + 1, '127.0.0.1', () => s.close(() => resolve(true)));
    });
    if (ok) return p;
  }
}

/** Like Promise.all, but waits for every promise to settle before rejecting: nothing may still be making things once cleanup runs. */
async function settled<T>(promises: Promise<T>[]): Promise<T[]> {
  const results = await Promise.allSettled(promises);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return results.map((r) => (r as PromiseFulfilledResult<T>).value);
}

/**
 * Builds the cluster: a bridge with a free 10.123.X.0/24 (the host at .1) and a FORWARD rule
 * for it, the master on the host listening at .1, and per machine a network namespace (at .11,
 * .12, ...) with a veth into the bridge, its own dockerd (started with nsenter --net, and
 * trusting the master's registry) and a worker joined through the bridge. On any failure
 * everything made so far is undone before the error is thrown.
 */
export async function createNetnsCluster(options: NetnsClusterOptions): Promise<NetnsCluster> {
  if (options.machines.length > 9 || options.machines.some((m) => !/^[a-z0-9]{1,4}$/.test(m))) {
    throw new Error('at most 9 machines, named with at most 4 lower-case letters or digits');
  }
  const log = options.log ?? (() => {});
  const started = Date.now();
  const lap = (what: string) => log(`${what} at ${((Date.now() - started) / 1000).toFixed(1)} s`);
  const tag = randomBytes(2).toString('hex');
  const [subnet, ...bips] = await freeSubnets(1 + options.machines.length);
  const hostIP = `${subnet}.1`;
  const bridge = `mk8s-e2e-${tag}`;
  const undoing = new Undo();
  const netnsDir = '/run/netns';
  if (!mountsUnder(netnsDir).includes(netnsDir)) undoing.push({ kind: 'unmount-netns-dir', path: netnsDir });
  const root = mkdtempSync(join(tmpdir(), `minik8s-netns-${tag}-`));
  undoing.push({ kind: 'remove-dir', path: root });
  const cluster = {
    tag, bridge, subnet: `${subnet}.0/24`, hostIP, machines: [] as NetnsMachine[], workers: [] as NetnsWorker[],
    destroy: () => undoing.run(),
  } as unknown as NetnsCluster;

  try {
    // The bridge, and the host's FORWARD rule for traffic between its ports (the host dockerd's policy is DROP).
    await sh('ip', ['link', 'add', bridge, 'type', 'bridge']);
    undoing.push({ kind: 'delete-link', name: bridge });
    await sh('ip', ['addr', 'add', `${hostIP}/24`, 'dev', bridge]);
    await sh('ip', ['link', 'set', bridge, 'up']);
    const rule = ['FORWARD', '-i', bridge, '-o', bridge, '-j', 'ACCEPT'];
    await sh('iptables', ['-I', ...rule]);
    undoing.push({ kind: 'delete-iptables-rule', rule });
    lap('bridge up');

    // The master and the machines start side by side: the dockerds only need the registry's port.
    const registryPort = await freePort();
    const [master, ...machines] = await settled<NetnsMaster | NetnsMachine>([
      startMaster({ root, address: hostIP, registryPort, seedImages: options.seedImages ?? true, undoing }).then((m) => { lap('master ready'); return m; }),
      ...options.machines.map((name, i) => startMachine({
        root, tag, name, bridge, ip: `${subnet}.${11 + i}`, gateway: hostIP, bip: `${bips[i]}.1/24`,
        insecureRegistry: `${hostIP}:${registryPort}`, undoing,
      }).then((m) => { lap(`machine ${name} up`); return m; })),
    ]);
    cluster.master = master as NetnsMaster;
    cluster.machines = machines as NetnsMachine[];

    cluster.workers = await settled(cluster.machines.map((machine) => startNetnsWorker({
      machine, nodeName: `${machine.name}-${tag}`, server: cluster.master.url, joinToken: cluster.master.joinToken,
      kubeletPort: options.kubeletPort ?? 10250, undoing,
    }).then((w) => { lap(`worker ${w.nodeName} up`); return w; })));
    return cluster;
  } catch (err) {
    await undoing.run().catch((cleanupErr: Error) => {
      throw new Error(`${err instanceof Error ? err.message : String(err)}\n(and then) ${cleanupErr.message}`, { cause: err });
    });
    throw err;
  }
}

/** The master on the host, listening on the bridge's address only, with its registry there too. */
async function startMaster(o: { root: string; address: string; registryPort: number; seedImages: boolean; undoing: Undo }): Promise<NetnsMaster> {
  const dataDir = join(o.root, 'master');
  const home = join(o.root, 'master-home');
  mkdirSync(dataDir);
  mkdirSync(home);
  const port = await freePort();
  const etcdPort = await etcdPorts();
  const clusterCIDR = await freeClusterCIDR();
  if (o.seedImages) {
    await ensureBaseImages();
    await seedRegistryStore(dataDir);
  }
  const url = `http://${o.address}:${port}`;
  const p = startProcess(process.execPath, [
    BINARY, '--role=master', '--data-dir', dataDir, '--address', o.address, '--port', String(port), '--etcd-port', String(etcdPort),
    '--registry-port', String(o.registryPort), '--cluster-cidr', clusterCIDR,
  ], join(o.root, 'master.log'), { ...process.env, HOME: home });
  // Should the master need SIGKILL, its etcd and registry end through their parent-death signal: wait for them by their pidfiles.
  o.undoing.push({
    kind: 'stop-process', what: 'the master', pid: p.pid, startTime: p.startTime, termMs: 15_000,
    pidFiles: [join(dataDir, 'etcd.pid'), join(dataDir, 'registry.pid')], guard: o.root,
  });
  // The banner comes after the admin token and the join token are written.
  await untilReady(p, `the master at ${url} to be ready`, async () => {
    if (!p.output().includes('master ready')) return false;
    return (await fetch(`${url}/readyz`)).status === 200;
  }, 30_000);
  const token = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
  return {
    url, token, joinToken: readFileSync(join(dataDir, 'join-token'), 'utf8').trim(), registryPort: o.registryPort, clusterCIDR, dataDir,
    env: { ...process.env, HOME: home, MINIK8S_SERVER: url, MINIK8S_TOKEN: token },
    pid: p.pid, output: p.output,
  };
}

/** A network namespace joined to the bridge, with its own dockerd. */
async function startMachine(o: {
  root: string; tag: string; name: string; bridge: string; ip: string; gateway: string; bip: string; insecureRegistry: string; undoing: Undo;
}): Promise<NetnsMachine> {
  const netns = `mk8s-e2e-${o.tag}-${o.name}`;
  const vethHost = `mk8e${o.tag}${o.name}`;
  const vethPeer = `mk8p${o.tag}${o.name}`;
  await sh('ip', ['netns', 'add', netns]);
  o.undoing.push({ kind: 'delete-netns', name: netns, veth: vethHost });
  await sh('ip', ['link', 'add', vethHost, 'type', 'veth', 'peer', 'name', vethPeer]);
  o.undoing.push({ kind: 'delete-link', name: vethHost });
  await sh('ip', ['link', 'set', vethPeer, 'netns', netns]);
  await sh('ip', ['link', 'set', vethHost, 'master', o.bridge, 'up']);
  await sh('ip', ['-n', netns, 'link', 'set', vethPeer, 'name', 'eth0']);
  await sh('ip', ['-n', netns, 'addr', 'add', `${o.ip}/24`, 'dev', 'eth0']);
  await sh('ip', ['-n', netns, 'link', 'set', 'eth0', 'up']);
  await sh('ip', ['-n', netns, 'link', 'set', 'lo', 'up']);
  await sh('ip', ['-n', netns, 'route', 'add', 'default', 'via', o.gateway]);

  const dir = join(o.root, o.name);
  const socket = join(dir, 'docker.sock');
  const execRoot = join(dir, 'exec');
  const configFile = join(dir, 'daemon.json');
  mkdirSync(dir);
  // Its own (empty) config, so that the host's /etc/docker/daemon.json cannot point it at the host's sockets or dirs.
  writeFileSync(configFile, '{}\n');
  // Not `ip netns exec`: it remounts /sys, and dockerd then fails ("Devices cgroup isn't mounted"). nsenter execs dockerd: same PID.
  const p = startProcess(tool('nsenter'), [
    `--net=/var/run/netns/${netns}`, '--', tool('dockerd'),
    '--config-file', configFile, '--data-root', join(dir, 'data'), '--exec-root', execRoot, '-H', `unix://${socket}`,
    '--pidfile', join(dir, 'docker.pid'), '--bip', o.bip, '--insecure-registry', o.insecureRegistry,
    // Should a system containerd be running, keep this engine's containers apart from the host engine's.
    '--containerd-namespace', netns, '--containerd-plugins-namespace', `${netns}-plugins`,
  ], join(dir, 'dockerd.log'));
  o.undoing.push({
    kind: 'stop-dockerd', what: `dockerd of ${o.name}`, pid: p.pid, startTime: p.startTime, socket,
    containerdPidFile: join(execRoot, 'containerd', 'containerd.pid'), guard: o.root,
  });
  const docker = new Docker({ socketPath: socket });
  await untilReady(p, `dockerd in ${netns} to answer`, async () => (await docker.ping()).toString() === 'OK', 60_000);
  return { name: o.name, netns, ip: o.ip, dockerHost: `unix://${socket}`, docker, dockerdPid: p.pid, dir, dockerdOutput: p.output };
}

/** `minik8s --role=worker` inside the machine's namespace, on the machine's engine, joined through the bridge. */
async function startNetnsWorker(o: {
  machine: NetnsMachine; nodeName: string; server: string; joinToken: string; kubeletPort: number; undoing: Undo;
}): Promise<NetnsWorker> {
  const dataDir = join(o.machine.dir, 'worker');
  mkdirSync(dataDir);
  const p = startProcess(tool('nsenter'), [
    `--net=/var/run/netns/${o.machine.netns}`, '--', process.execPath,
    BINARY, '--role=worker', '--server', o.server, '--token', o.joinToken, '--name', o.nodeName, '--node-ip', o.machine.ip,
    '--data-dir', dataDir, '--kubelet-port', String(o.kubeletPort), '--bridge', 'minik8s0', '--docker-host', o.machine.dockerHost,
  ], join(o.machine.dir, 'worker.log'));
  o.undoing.push({ kind: 'stop-process', what: `worker ${o.nodeName}`, pid: p.pid, startTime: p.startTime, termMs: 15_000 });
  await untilReady(p, `worker ${o.nodeName} to start its kubelet`,
    () => p.output().includes('kubelet: node') && p.output().includes('syncing pods'), 30_000);
  return {
    nodeName: o.nodeName, machine: o.machine, dataDir, kubeletPort: o.kubeletPort, pid: p.pid, output: p.output,
    credential: () => JSON.parse(readFileSync(join(dataDir, 'kubelet', 'node-credential.json'), 'utf8')),
  };
}
