// Starts a real `minik8s --role=master` process (with its managed etcd) on free loopback ports for tests.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitFor } from '../../src/core/wait-for.js';

/** The compiled CLI: dist/test/helpers/master.js -> dist/bin/minik8s.js. */
export const BINARY = fileURLToPath(new URL('../../bin/minik8s.js', import.meta.url));

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** Two free ports where the second is followed by a free one too (etcd's peer port is client + 1). */
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

export interface MasterProcess {
  url: string;
  token: string;
  dataDir: string;
  home: string;
  port: number;
  etcdPort: number;
  child: ChildProcess;
  output(): string;
  /** Environment for running the CLI against this master. */
  env: NodeJS.ProcessEnv;
  /** Starts the master again on the same ports and data dir (after kill or stop). */
  restart(): Promise<void>;
  /** SIGKILL, no cleanup: what a crash looks like. */
  kill(): Promise<void>;
  /** SIGTERM and wait; then removes the temp dirs. */
  stop(): Promise<void>;
}

export async function startMaster(options: { extraArgs?: string[] } = {}): Promise<MasterProcess> {
  const dataDir = mkdtempSync(join(tmpdir(), 'minik8s-test-data-'));
  const home = mkdtempSync(join(tmpdir(), 'minik8s-test-home-'));
  const port = await freePort();
  const etcdPort = await etcdPorts();
  let output = '';
  let child!: ChildProcess;
  const url = `http://127.0.0.1:${port}`;

  const launch = async () => {
    output = '';
    child = spawn(process.execPath, [
      BINARY, '--role=master', '--data-dir', dataDir, '--address', '127.0.0.1', '--port', String(port), '--etcd-port', String(etcdPort),
      ...(options.extraArgs ?? []),
    ], { env: { ...process.env, HOME: home }, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.on('data', (d) => { output += d; });
    child.stderr!.on('data', (d) => { output += d; });
    const exited = () => child.exitCode !== null || child.signalCode !== null;
    await waitFor(async () => {
      if (exited()) throw new Error(`master exited early:\n${output}`);
      // The banner comes after the admin token and CLI config are written.
      if (!output.includes('master ready')) return false;
      const res = await fetch(`${url}/readyz`);
      return res.status === 200;
    }, { timeoutMs: 30_000, description: `master at ${url} to be ready` }).catch((err) => {
      if (!exited()) child.kill('SIGKILL');
      throw new Error(`${err instanceof Error ? err.message : err}\n${output}`);
    });
  };

  const waitExit = (signal: NodeJS.Signals) => new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill(signal);
  });

  await launch();
  const token = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
  const master: MasterProcess = {
    url, token, dataDir, home, port, etcdPort,
    get child() { return child; },
    output: () => output,
    env: { ...process.env, HOME: home, MINIK8S_SERVER: url, MINIK8S_TOKEN: token },
    restart: launch,
    kill: () => waitExit('SIGKILL'),
    async stop() {
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await waitExit('SIGTERM');
      clearTimeout(timer);
      // A SIGKILLed master's etcd ends through its parent-death signal; wait for it by its pidfile.
      await waitFor(() => {
        try {
          const pid = Number(readFileSync(join(dataDir, 'etcd.pid'), 'utf8'));
          process.kill(pid, 0);
          return false;
        } catch {
          return true;
        }
      }, { timeoutMs: 15_000, description: 'etcd to exit' }).catch(() => {});
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(home, { recursive: true, force: true });
    },
  } as MasterProcess;
  return master;
}
