// Starts a throwaway real etcd on free loopback ports for a test file, and stops it by PID.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '../../src/core/wait-for.js';

const ETCD_BINARY = '/usr/bin/etcd';

export interface TestEtcd {
  /** Client URL, e.g. `http://127.0.0.1:40123`. */
  endpoint: string;
  pid: number;
  dataDir: string;
  /** SIGTERM (SIGKILL after 5 s), wait for exit, remove the data dir. */
  stop(): Promise<void>;
}

/** A port that was free a moment ago: bind port 0, read what the kernel chose, release it. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export async function startEtcd(): Promise<TestEtcd> {
  if (!existsSync(ETCD_BINARY)) {
    throw new Error(`etcd is not installed at ${ETCD_BINARY}: apt-get install -y etcd-server`);
  }
  const dataDir = mkdtempSync(join(tmpdir(), 'minik8s-etcd-'));
  const clientPort = await freePort();
  let peerPort = await freePort();
  while (peerPort === clientPort) peerPort = await freePort();
  const endpoint = `http://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  const child = spawn(
    ETCD_BINARY,
    [
      '--data-dir',
      dataDir,
      '--name',
      'test',
      '--listen-client-urls',
      endpoint,
      '--advertise-client-urls',
      endpoint,
      '--listen-peer-urls',
      peer,
      '--initial-advertise-peer-urls',
      peer,
      '--initial-cluster',
      `test=${peer}`,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr!.on('data', (d) => {
    stderr = (stderr + d).slice(-4000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const cleanup = async () => {
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const spawnError = new Promise<never>((_, reject) => {
      child.once('error', (err) => reject(new Error(`cannot start etcd: ${err.message}`)));
    });
    await Promise.race([
      spawnError,
      waitFor(
        async () => {
          if (child.exitCode !== null) throw new Error(`etcd exited with code ${child.exitCode}: ${stderr}`);
          const res = await fetch(`${endpoint}/health`);
          return res.ok && ((await res.json()) as { health?: string }).health === 'true';
        },
        { timeoutMs: 20_000, description: `etcd on ${endpoint} to be healthy` },
      ),
    ]);
  } catch (err) {
    await cleanup();
    throw err;
  }
  return { endpoint, pid: child.pid!, dataDir, stop: cleanup };
}
