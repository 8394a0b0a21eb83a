// Starts a real `minik8s --role=master` process (with its managed etcd and registry) on free loopback ports and a free pod range, for tests.
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Docker from 'dockerode';
import { parsePinnedJoinToken } from '../../src/core/pki/join-token-pin.js';
import { DOCKER_CERTS_DIR } from '../../src/runtime/docker-registry-trust.js';
import { waitFor } from '../../src/core/wait-for.js';
import { etcdPorts, freeClusterCIDR, freePort } from '../../scripts/sim/free-resources.js';
import { trustClusterCA } from './cluster-trust.js';
import { ensureBaseImages, seedRegistryStore } from './images.js';

/** The compiled CLI: dist/test/helpers/master.js -> dist/bin/minik8s.js. */
export const BINARY = fileURLToPath(new URL('../../bin/minik8s.js', import.meta.url));

export { freeClusterCIDR, freePort };

/**
 * Leader election that renews once in 20 minutes: for tests that check the store's revision
 * stands still (Lease renewals every 2 s would be writes no request made).
 */
export const QUIET_LEASES = ['--leader-elect-lease-duration=3600s', '--leader-elect-renew-deadline=2400s', '--leader-elect-retry-period=1200s'];

export interface StartMasterOptions {
  extraArgs?: string[];
  /** Run the managed registry on a free port (default true); false passes --no-registry. */
  registry?: boolean;
  /** Give the registry the base images before the master starts (builds them first if missing). */
  seedImages?: boolean;
  /** Default: a free 10.X.0.0/16 (see freeClusterCIDR). */
  clusterCIDR?: string;
  /**
   * Serve the API over HTTPS with the cluster CA, as the daemon does by default (default true).
   * This process's fetch() then trusts that CA (see cluster-trust.ts). false: --insecure-http.
   */
  tls?: boolean;
  /**
   * Another master of the same cluster: its DATA_DIR/pki (cluster CA, service account key,
   * encryption config) and admin token are copied in before the start, as a user copies them
   * to a new master. Pair with an `--etcd-endpoints` extra arg naming the etcd both use.
   */
  pkiFrom?: MasterProcess;
  /** More environment for the master process (e.g. pip's PIP_INDEX_URL). */
  env?: Record<string, string>;
}

export interface MasterProcess {
  url: string;
  token: string;
  /** The default join token (DATA_DIR/join-token), as of the latest start: K10<CA hash>::id.secret with `tls`. */
  readonly joinToken: string;
  /** Its `id.secret`: the bearer token the join endpoint authenticates (the whole token without `tls`). */
  readonly joinSecret: string;
  /** The registry's port; undefined with `registry: false`. */
  registryPort?: number;
  /** http(s)://127.0.0.1:PORT, https with `tls`; undefined with `registry: false`. */
  readonly registryUrl?: string;
  /** The activator's port (a free one) and URL, http(s)://127.0.0.1:PORT, https with `tls`. */
  activatorPort: number;
  readonly activatorUrl: string;
  clusterCIDR: string;
  dataDir: string;
  home: string;
  port: number;
  etcdPort: number;
  child: ChildProcess;
  output(): string;
  /** Environment for running the CLI against this master (with TLS: KUBECONFIG=DATA_DIR/admin.kubeconfig too). */
  env: NodeJS.ProcessEnv;
  /** The cluster CA (PEM) with `tls` (this process's fetch() trusts it); undefined otherwise. */
  readonly ca?: string;
  /** DATA_DIR/admin.kubeconfig with `tls`. */
  kubeconfig?: string;
  /** Starts the master again on the same ports and data dir (after kill or stop). */
  restart(): Promise<void>;
  /** SIGKILL, no cleanup: what a crash looks like. */
  kill(): Promise<void>;
  /** SIGTERM and wait; then removes the temp dirs. */
  stop(): Promise<void>;
}

export async function startMaster(options: StartMasterOptions = {}): Promise<MasterProcess> {
  const dataDir = mkdtempSync(join(tmpdir(), 'minik8s-test-data-'));
  const home = mkdtempSync(join(tmpdir(), 'minik8s-test-home-'));
  const port = await freePort();
  const etcdPort = await etcdPorts();
  const registryPort = options.registry === false ? undefined : await freePort();
  const activatorPort = await freePort();
  const clusterCIDR = options.clusterCIDR ?? (await freeClusterCIDR());
  if (options.pkiFrom) {
    cpSync(join(options.pkiFrom.dataDir, 'pki'), join(dataDir, 'pki'), { recursive: true });
    cpSync(join(options.pkiFrom.dataDir, 'admin-token'), join(dataDir, 'admin-token'));
  }
  if (options.seedImages) {
    await ensureBaseImages();
    await seedRegistryStore(dataDir);
  }
  let output = '';
  let joinToken = '';
  let child!: ChildProcess;
  const tls = options.tls ?? true;
  const url = `${tls ? 'https' : 'http'}://127.0.0.1:${port}`;
  let ca: string | undefined;
  // The master's activator and registry serve HTTPS with the cluster CA whenever its API does.
  const activatorScheme = tls ? 'https' : 'http';
  const registryScheme = tls ? 'https' : 'http';

  const launch = async () => {
    output = '';
    child = spawn(
      process.execPath,
      [
        BINARY,
        '--role=master',
        '--data-dir',
        dataDir,
        '--address',
        '127.0.0.1',
        '--port',
        String(port),
        '--etcd-port',
        String(etcdPort),
        ...(registryPort === undefined ? ['--no-registry'] : ['--registry-port', String(registryPort)]),
        '--cluster-cidr',
        clusterCIDR,
        '--activator-port',
        String(activatorPort),
        ...(tls ? [] : ['--insecure-http']),
        ...(options.extraArgs ?? []),
      ],
      { env: { ...process.env, HOME: home, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child.stdout!.on('data', (d) => {
      output += d;
    });
    child.stderr!.on('data', (d) => {
      output += d;
    });
    const exited = () => child.exitCode !== null || child.signalCode !== null;
    await waitFor(
      async () => {
        if (exited()) throw new Error(`master exited early:\n${output}`);
        // The banner comes after the admin token and CLI config are written.
        if (!output.includes('master ready')) return false;
        if (tls) {
          ca = readFileSync(join(dataDir, 'pki', 'ca.crt'), 'utf8');
          trustClusterCA(ca);
        }
        const res = await fetch(`${url}/readyz`);
        return res.status === 200;
      },
      { timeoutMs: 30_000, description: `master at ${url} to be ready` },
    ).catch((err) => {
      if (!exited()) child.kill('SIGKILL');
      throw new Error(`${err instanceof Error ? err.message : err}\n${output}`);
    });
    joinToken = readFileSync(join(dataDir, 'join-token'), 'utf8').trim();
  };

  const waitExit = (signal: NodeJS.Signals) =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill(signal);
    });

  await launch();
  const token = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
  const master: MasterProcess = {
    url,
    token,
    dataDir,
    home,
    port,
    etcdPort,
    registryPort,
    clusterCIDR,
    activatorPort,
    get registryUrl() {
      return registryPort === undefined ? undefined : `${registryScheme}://127.0.0.1:${registryPort}`;
    },
    get activatorUrl() {
      return `${activatorScheme}://127.0.0.1:${activatorPort}`;
    },
    get child() {
      return child;
    },
    get joinToken() {
      return joinToken;
    },
    get joinSecret() {
      return parsePinnedJoinToken(joinToken).token;
    },
    get ca() {
      return ca;
    },
    kubeconfig: tls ? join(dataDir, 'admin.kubeconfig') : undefined,
    output: () => output,
    env: {
      ...process.env,
      HOME: home,
      MINIK8S_SERVER: url,
      MINIK8S_TOKEN: token,
      ...(tls ? { KUBECONFIG: join(dataDir, 'admin.kubeconfig') } : { KUBECONFIG: '' }),
    },
    restart: launch,
    kill: () => waitExit('SIGKILL'),
    async stop() {
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await waitExit('SIGTERM');
      clearTimeout(timer);
      // A SIGKILLed master's etcd and registry end through their parent-death signal; wait for them by their pidfiles.
      for (const name of ['etcd', 'registry']) {
        await waitFor(
          () => {
            try {
              const pid = Number(readFileSync(join(dataDir, `${name}.pid`), 'utf8'));
              process.kill(pid, 0);
              return false;
            } catch {
              return true;
            }
          },
          { timeoutMs: 15_000, description: `${name} to exit` },
        ).catch(() => {});
      }
      if (registryPort !== undefined) {
        await untagRegistryImages(registryPort);
        // The master removes the engine's trust entry for its registry when it stops; one killed on the way (a test's crash) cannot.
        if (tls) rmSync(join(DOCKER_CERTS_DIR, `127.0.0.1:${registryPort}`), { recursive: true, force: true });
      }
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(home, { recursive: true, force: true });
    },
  } as MasterProcess;
  return master;
}

/** A GET over https trusting only `ca` (Node 20's fetch() takes no CA without undici's own Agent). */
export function httpsGet(url: string, ca: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, { ca, headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        body += d;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * Removes the local engine's tags that name this test master's registry (what its workers pulled),
 * so runs do not pile up tags for registries long gone. Layers stay: other tags still hold them.
 */
async function untagRegistryImages(registryPort: number): Promise<void> {
  const prefix = `127.0.0.1:${registryPort}/`;
  const docker = new Docker();
  const images = await docker.listImages().catch(() => []);
  for (const tag of images.flatMap((i) => i.RepoTags ?? []).filter((t) => t.startsWith(prefix))) {
    await docker
      .getImage(tag)
      .remove({ noprune: true })
      .catch(() => {});
  }
}
