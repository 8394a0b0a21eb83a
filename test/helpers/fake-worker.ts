// Starts a `minik8s --role=worker` whose pods are fake (--fake-nodes N or --provider=fake) against a test master, waits for its nodes to be Ready, and ends it by PID.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Node } from '../../src/core/api/node.js';
import { waitFor } from '../../src/core/wait-for.js';
import { BINARY, freePort, httpsGet, type MasterProcess } from './master.js';

export interface FakeWorker {
  output(): string;
  /** SIGKILL (a fake worker has nothing to clean up) and removes its data dir. */
  stop(): Promise<void>;
}

export interface StartFakeWorkerOptions {
  master: MasterProcess;
  /** The worker's own flags: --name and --fake-nodes N or --provider=fake, and any others. */
  args: string[];
  /** How many nodes whose names start with `namePrefix` must be Ready. */
  readyNodes: number;
  namePrefix: string;
}

export async function startFakeWorker(options: StartFakeWorkerOptions): Promise<FakeWorker> {
  const { master } = options;
  const dataDir = mkdtempSync(join(tmpdir(), 'minik8s-test-fake-worker-'));
  const child = spawn(
    process.execPath,
    [
      BINARY,
      '--role=worker',
      '--server',
      master.url,
      '--token',
      master.joinToken,
      '--node-ip',
      '127.0.0.1',
      '--data-dir',
      dataDir,
      '--kubelet-port',
      String(await freePort()),
      ...options.args,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout!.on('data', (d) => {
    output += d;
  });
  child.stderr!.on('data', (d) => {
    output += d;
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`worker exited:\n${output}`);
        const headers = { authorization: `Bearer ${master.token}` };
        const text = master.ca
          ? (await httpsGet(`${master.url}/api/v1/nodes`, master.ca, headers)).body
          : await (await fetch(`${master.url}/api/v1/nodes`, { headers })).text();
        const nodes = (JSON.parse(text) as { items: Node[] }).items;
        return (
          nodes.filter((n) => n.metadata.name!.startsWith(options.namePrefix) && n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))
            .length === options.readyNodes
        );
      },
      { timeoutMs: 30_000, description: `${options.readyNodes} Ready fake node(s)` },
    );
  } catch (err) {
    await stop();
    throw err;
  }
  return { output: () => output, stop };
}
