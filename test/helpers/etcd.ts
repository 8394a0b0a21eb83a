// Starts a throwaway real etcd on free loopback ports for a test file, and stops it by PID.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '../../src/core/wait-for.js';
import { freePort } from './master.js';

export interface TestEtcd {
  endpoint: string;
  pid: number;
  stop(): Promise<void>;
}

export async function startEtcd(): Promise<TestEtcd> {
  const dataDir = mkdtempSync(join(tmpdir(), 'minik8s-etcd-'));
  const client = await freePort();
  const peer = await freePort();
  const endpoint = `http://127.0.0.1:${client}`;
  const child = spawn('etcd', [
    '--data-dir', dataDir, '--name', 'test',
    '--listen-client-urls', endpoint, '--advertise-client-urls', endpoint,
    '--listen-peer-urls', `http://127.0.0.1:${peer}`, '--initial-advertise-peer-urls', `http://127.0.0.1:${peer}`,
    '--initial-cluster', `test=http://127.0.0.1:${peer}`,
  ], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d) => { stderr = (stderr + d).slice(-4000); });
  const spawnError = new Promise<never>((_, reject) => child.once('error', (err) => reject(new Error(`cannot start etcd (apt-get install -y etcd-server): ${err.message}`))));
  await Promise.race([spawnError, waitFor(async () => {
    if (child.exitCode !== null) throw new Error(`etcd exited: ${stderr}`);
    return (await fetch(`${endpoint}/health`)).ok;
  }, { timeoutMs: 20_000, description: 'etcd to be healthy' })]);
  return {
    endpoint,
    pid: child.pid!,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
