// Runs etcd as the master's supervised child: its command line, files, health check and log reading; supervision is shared.
import { mkdirSync } from 'node:fs';
import { request } from 'node:https';
import { basename, join, resolve } from 'node:path';
import { portInUseMessage, StartupError } from '../../core/lifecycle/startup-error.js';
import { ensureEtcdPki, type EtcdClientTLS, type EtcdServerTLSFiles } from './etcd-pki.js';
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
  /** Client URLs to hand to the store (https). */
  endpoints: string[];
  /** The CA to check etcd by and the master's client certificate: etcd refuses clients without one. */
  tls: EtcdClientTLS;
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

/**
 * etcd's command line (without the executable): a one-member cluster listening on 127.0.0.1 only.
 * With `tls`, clients and peers speak TLS and must show a certificate of etcd's CA: loopback
 * alone would let any local user read every Secret and plant records (a join token, say).
 */
export function etcdArgs(options: { dataDir: string; clientPort: number; peerPort: number; tls?: EtcdServerTLSFiles }): string[] {
  const scheme = options.tls ? 'https' : 'http';
  const client = `${scheme}://127.0.0.1:${options.clientPort}`;
  const peer = `${scheme}://127.0.0.1:${options.peerPort}`;
  const tls = options.tls;
  const tlsArgs = tls
    ? [
        '--cert-file',
        tls.certFile,
        '--key-file',
        tls.keyFile,
        '--trusted-ca-file',
        tls.caFile,
        '--client-cert-auth',
        '--peer-cert-file',
        tls.peerCertFile,
        '--peer-key-file',
        tls.peerKeyFile,
        '--peer-trusted-ca-file',
        tls.caFile,
        '--peer-client-cert-auth',
      ]
    : [];
  return [
    ...tlsArgs,
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

/** GET /health with the client certificate (with --client-cert-auth etcd asks for one on every path). */
export function isEtcdHealthy(clientUrl: string, tls: EtcdClientTLS): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(`${clientUrl}/health`, { ca: tls.ca, cert: tls.cert, key: tls.key, servername: tls.serverName, timeout: 1_000 }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        text += d;
      });
      res.on('end', () => {
        try {
          const body = JSON.parse(text) as { health?: unknown };
          resolve(res.statusCode === 200 && (body.health === 'true' || body.health === true));
        } catch {
          resolve(false);
        }
      });
      res.on('error', () => resolve(false));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
    req.end();
  });
}

/** Starts etcd, waits until it is healthy, and keeps it running until `options.signal` aborts. */
export async function startManagedEtcd(options: ManagedEtcdOptions): Promise<ManagedEtcd> {
  const clientPort = options.clientPort ?? 2379;
  const peerPort = options.peerPort ?? clientPort + 1;
  const layout = etcdLayout(options.dataDir);
  const clientUrl = `https://127.0.0.1:${clientPort}`;

  const etcdPath = findExecutable(options.binary ?? 'etcd');
  if (!etcdPath) {
    const what = options.binary?.includes('/') ? `etcd not found at ${options.binary}` : 'etcd not found on PATH';
    throw new StartupError(`${what}: install it with "apt-get install -y etcd-server"`);
  }

  mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
  const pki = await ensureEtcdPki(options.dataDir);

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
      args: etcdArgs({ dataDir: options.dataDir, clientPort, peerPort, tls: pki.server }),
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
      isHealthy: () => isEtcdHealthy(clientUrl, pki.client),
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

  return { endpoints: [clientUrl], tls: pki.client, pid: supervised.pid, restarts: supervised.restarts, stopped: supervised.stopped };
}
