// Runs etcd as the master's supervised child: its command line, files, health check and log reading; supervision is shared.
import { mkdirSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { portInUseMessage, StartupError } from '../../core/lifecycle/startup-error.js';
import { findExecutable, probePort, startSupervisedProcess, summarizeLogLines, type SupervisionOptions } from '../supervisor/supervised-process.js';

/** Supervision knobs (SupervisionOptions): etcd gets 30 s to answer /health at start and after a restart unless startTimeoutMs says otherwise. */
export interface ManagedEtcdOptions extends SupervisionOptions {
  /** The master's data directory: etcd keeps its data in DATA_DIR/etcd, its log in etcd.log, its PID in etcd.pid. */
  dataDir: string;
  /** Client port on 127.0.0.1 (default 2379). */
  clientPort?: number;
  /** Peer port on 127.0.0.1 (default clientPort + 1). */
  peerPort?: number;
  /** The etcd executable: a name looked up on PATH, or a path (default `etcd`). */
  binary?: string;
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

export function etcdLayout(dataDir: string): EtcdLayout {
  const dir = resolve(dataDir);
  return { etcdDataDir: join(dir, 'etcd'), pidFile: join(dir, 'etcd.pid'), logFile: join(dir, 'etcd.log') };
}

/** etcd's command line (without the executable): a one-member cluster listening on 127.0.0.1 only. */
export function etcdArgs(options: { dataDir: string; clientPort: number; peerPort: number }): string[] {
  const client = `http://127.0.0.1:${options.clientPort}`;
  const peer = `http://127.0.0.1:${options.peerPort}`;
  return [
    '--name',
    MEMBER_NAME,
    '--data-dir',
    etcdLayout(options.dataDir).etcdDataDir,
    '--listen-client-urls',
    client,
    '--advertise-client-urls',
    client,
    '--listen-peer-urls',
    peer,
    '--initial-advertise-peer-urls',
    peer,
    '--initial-cluster',
    `${MEMBER_NAME}=${peer}`,
    '--initial-cluster-state',
    'new',
  ];
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

/** etcd's log lines worth showing a person: its errors when there are any, else the last lines, without timestamps. */
export function summarizeLog(lines: string[]): string[] {
  return summarizeLogLines(lines, {
    isError: (l) => / [CEF] \| /.test(l),
    strip: (l) => l.replace(/^\d{4}-\d\d-\d\d [\d:.]+ [A-Z] \| /, ''),
  });
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

/** Starts etcd, waits until it is healthy, and keeps it running until `options.signal` aborts. */
export async function startManagedEtcd(options: ManagedEtcdOptions): Promise<ManagedEtcd> {
  const clientPort = options.clientPort ?? 2379;
  const peerPort = options.peerPort ?? clientPort + 1;
  const layout = etcdLayout(options.dataDir);
  const clientUrl = `http://127.0.0.1:${clientPort}`;

  const etcdPath = findExecutable(options.binary ?? 'etcd');
  if (!etcdPath) {
    const what = options.binary?.includes('/') ? `etcd not found at ${options.binary}` : 'etcd not found on PATH';
    throw new StartupError(`${what}: install it with "apt-get install -y etcd-server"`);
  }

  const portError = (port: number): StartupError =>
    new StartupError(
      portInUseMessage({
        port,
        what: port === peerPort ? 'etcd peer port' : 'etcd client port',
        flag: '--etcd-port',
      }),
    );

  const supervised = await startSupervisedProcess(
    {
      name: 'etcd',
      title: 'etcd',
      executable: etcdPath,
      args: etcdArgs({ dataDir: options.dataDir, clientPort, peerPort }),
      pidFile: layout.pidFile,
      logFile: layout.logFile,
      leftoverFor: layout.etcdDataDir,
      isOurs: (argv) => isOurEtcd(argv, layout.etcdDataDir),
      prepare: () => mkdirSync(options.dataDir, { recursive: true, mode: 0o700 }),
      preflight: async () => {
        for (const port of [clientPort, peerPort]) {
          const code = await probePort(port);
          if (code === 'EADDRINUSE') throw portError(port);
          if (code) throw new StartupError(`cannot listen on 127.0.0.1:${port} for etcd (${code}); pass another --etcd-port`);
        }
      },
      defaultStartTimeoutMs: 30_000,
      isHealthy: () => isHealthy(clientUrl),
      healthGoal: `become healthy at ${clientUrl}`,
      // etcd warns about deprecated flags at every start: noise that would push out its real complaint.
      ignoreLogLine: (l) => l.startsWith('[WARNING] Deprecated'),
      summarizeLog,
      explainFailure: (tail) => {
        const inUse = tail.map((l) => /127\.0\.0\.1:(\d+).*address already in use/.exec(l)).find(Boolean);
        return inUse ? portError(Number(inUse[1])) : undefined;
      },
    },
    options,
  );

  return { endpoints: [clientUrl], pid: supervised.pid, restarts: supervised.restarts, stopped: supervised.stopped };
}
