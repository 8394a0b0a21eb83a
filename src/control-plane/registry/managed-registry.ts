// Runs the image registry (distribution's docker-registry) as the master's supervised child: its config, files, /v2/ check and log reading; supervision is shared.
import { mkdirSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { basename, join, resolve } from 'node:path';
import { portInUseMessage, StartupError } from '../../core/lifecycle/startup-error.js';
import { findExecutable, probePort, startSupervisedProcess, summarizeLogLines, type SupervisionOptions } from '../supervisor/supervised-process.js';

/** Supervision knobs (SupervisionOptions): the registry gets 20 s to answer /v2/ at start and after a restart unless startTimeoutMs says otherwise. */
export interface ManagedRegistryOptions extends SupervisionOptions {
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
  /** Serve HTTPS with this certificate (signed by the cluster CA); absent: plain HTTP (--insecure-http). */
  tls?: RegistryTls;
}

export interface RegistryTls {
  /** PEM files the registry reads at start. */
  certFile: string;
  keyFile: string;
  /** The CA that signed the certificate: how the master checks /v2/. */
  caPem: string;
}

export interface ManagedRegistry {
  /** `HOST:PORT` to put in image names (e.g. `127.0.0.1:5000/busybox:1.35`). */
  address: string;
  /** Where this machine reaches the registry's API: https:// with TLS, else http://. */
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
export function registryAddresses(options: { address: string; port: number; advertiseHost?: string; tls?: boolean }): {
  listen: string;
  endpoint: string;
  advertise: string;
} {
  const local = isWildcard(options.address) ? '127.0.0.1' : options.address;
  return {
    listen: hostPort(options.address || '0.0.0.0', options.port),
    endpoint: `${options.tls ? 'https' : 'http'}://${hostPort(local, options.port)}`,
    advertise: hostPort(options.advertiseHost ?? local, options.port),
  };
}

/**
 * The registry's config: filesystem storage in the data dir, deletes allowed, no auth, no access log;
 * with `tls`, HTTPS with that certificate and key (distribution's http.tls), else plain HTTP.
 */
export function registryConfig(options: { storeDir: string; listen: string; tls?: Pick<RegistryTls, 'certFile' | 'keyFile'> }): string {
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
    ...(options.tls
      ? ['  tls:', `    certificate: ${JSON.stringify(options.tls.certFile)}`, `    key: ${JSON.stringify(options.tls.keyFile)}`, '    minimumtls: tls1.2']
      : []),
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
  return summarizeLogLines(lines, {
    isError: (l) => /level=(error|fatal|panic)/.test(l) || /^(panic|Error|configuration error)/i.test(l),
    // logrus text lines: keep the quoted message, drop time= and level=.
    strip: (l) => {
      const msg = /msg="((?:[^"\\]|\\.)*)"/.exec(l);
      return msg ? msg[1]!.replace(/\\"/g, '"') : l;
    },
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

/** True when GET /v2/ answers 200: over HTTPS, only from a server whose certificate `caPem` signed. */
export async function registryAnswers(endpoint: string, caPem?: string): Promise<boolean> {
  if (endpoint.startsWith('https:')) {
    return new Promise((resolveAnswer) => {
      const req = request(`${endpoint}/v2/`, { ca: caPem, timeout: 1_000 }, (res) => {
        res.resume();
        res.on('end', () => resolveAnswer(res.statusCode === 200));
        res.on('error', () => resolveAnswer(false));
      });
      req.on('timeout', () => req.destroy(new Error('timed out')));
      req.on('error', () => resolveAnswer(false));
      req.end();
    });
  }
  try {
    const res = await fetch(`${endpoint}/v2/`, { signal: AbortSignal.timeout(1_000) });
    await res.arrayBuffer();
    return res.status === 200;
  } catch {
    return false;
  }
}

/** Starts the registry, waits until /v2/ answers, and keeps it running until `options.signal` aborts. */
export async function startManagedRegistry(options: ManagedRegistryOptions): Promise<ManagedRegistry> {
  const port = options.port ?? 5000;
  const address = options.address ?? '0.0.0.0';
  const layout = registryLayout(options.dataDir);
  const addresses = registryAddresses({ address, port, advertiseHost: options.advertiseHost, tls: options.tls !== undefined });

  const registryPath = findExecutable(options.binary ?? 'docker-registry');
  if (!registryPath) {
    const what = options.binary?.includes('/') ? `the registry was not found at ${options.binary}` : 'docker-registry not found on PATH';
    throw new StartupError(`${what}: install it with "apt-get install -y docker-registry"`);
  }

  const portError = (): StartupError => new StartupError(portInUseMessage({ port, what: 'image registry', flag: '--registry-port' }));

  const supervised = await startSupervisedProcess(
    {
      name: 'registry',
      title: 'the image registry',
      shortTitle: 'the registry',
      executable: registryPath,
      args: ['serve', layout.configFile],
      pidFile: layout.pidFile,
      logFile: layout.logFile,
      leftoverFor: layout.storeDir,
      isOurs: (argv) => isOurRegistry(argv, layout.configFile),
      prepare: () => {
        mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
        mkdirSync(layout.storeDir, { recursive: true });
        // Rewritten at every start so the file always matches the flags this master runs with.
        writeFileSync(layout.configFile, registryConfig({ storeDir: layout.storeDir, listen: addresses.listen, tls: options.tls }), { mode: 0o644 });
      },
      preflight: async () => {
        const code = await probePort(port, address);
        if (code === 'EADDRINUSE') throw portError();
        if (code)
          throw new StartupError(`cannot listen on ${addresses.listen} for the image registry (${code}); pass another --registry-port or --registry-address`);
      },
      defaultStartTimeoutMs: 20_000,
      isHealthy: () => registryAnswers(addresses.endpoint, options.tls?.caPem),
      healthGoal: `answer at ${addresses.endpoint}/v2/`,
      summarizeLog: summarizeRegistryLog,
      explainFailure: (tail) => (portInUseFromLog(tail) !== undefined ? portError() : undefined),
    },
    options,
  );

  return {
    address: addresses.advertise,
    endpoint: addresses.endpoint,
    pid: supervised.pid,
    restarts: supervised.restarts,
    stopped: supervised.stopped,
  };
}
