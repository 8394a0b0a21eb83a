// Starts a real `minik8s --role=worker` process joined to a test master, and cleans up every container it made.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Docker from 'dockerode';
import { stringify } from 'yaml';
import { waitFor } from '../../src/core/wait-for.js';
import { BINARY, freePort } from './master.js';

export interface WorkerProcess {
  nodeName: string;
  /** The Docker network (and Linux bridge) of this worker's pods. */
  bridge: string;
  dataDir: string;
  kubeletPort: number;
  child: ChildProcess;
  output(): string;
  /** Starts the worker again with the same name and data dir (after kill or stop). */
  restart(): Promise<void>;
  /** SIGKILL, no cleanup: a crashed worker leaves its containers running. */
  kill(): Promise<void>;
  /** SIGTERM and wait (containers keep running, as with a real kubelet). */
  stop(): Promise<void>;
  /** Stops the process if it runs, force-removes every container it made, and removes its data dir. */
  destroy(): Promise<void>;
}

export interface StartWorkerOptions {
  server: string;
  joinToken: string;
  nodeName?: string;
  extraArgs?: string[];
  /** Start it as a user with a node configuration file would: `minik8s --config FILE` with every setting in the YAML (extraArgs still on the command line). */
  configFile?: boolean;
}

export const docker = new Docker();

/** Every container a node's kubelet made, found by the label the Docker provider sets. */
export async function nodeContainers(nodeName: string): Promise<Docker.ContainerInfo[]> {
  return docker.listContainers({ all: true, filters: { label: [`minik8s.io/node=${nodeName}`] } });
}

export async function removeNodeContainers(nodeName: string): Promise<void> {
  for (const c of await nodeContainers(nodeName)) {
    await docker
      .getContainer(c.Id)
      .remove({ force: true, v: true })
      .catch(() => {});
  }
}

export async function startWorker(options: StartWorkerOptions): Promise<WorkerProcess> {
  const nodeName = options.nodeName ?? `test-node-${process.pid}-${Math.random().toString(36).slice(2, 7)}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'minik8s-test-worker-'));
  // Several workers share this machine's engine: each needs its own bridge for its own pod /24.
  const bridge = `mk8t${randomBytes(4).toString('hex')}`;
  const kubeletPort = await freePort();
  let output = '';
  let child!: ChildProcess;
  const exited = () => child.exitCode !== null || child.signalCode !== null;

  const settings = {
    role: 'worker',
    server: options.server,
    name: nodeName,
    'node-ip': '127.0.0.1',
    'data-dir': dataDir,
    'kubelet-port': kubeletPort,
    bridge,
    // Test workers share the host's network namespace: one VXLAN device and one set of service chains there would be fought over.
    overlay: 'none',
    proxy: 'none',
  };
  let args: string[];
  if (options.configFile) {
    const tokenFile = join(dataDir, 'join-token');
    writeFileSync(tokenFile, `${options.joinToken}\n`, { mode: 0o600 });
    const configFile = join(dataDir, 'worker.yaml');
    writeFileSync(configFile, stringify({ ...settings, 'token-file': tokenFile }));
    args = ['--config', configFile];
  } else {
    args = [...Object.entries(settings).map(([k, v]) => `--${k}=${v}`), '--token', options.joinToken];
  }

  const launch = async () => {
    output = '';
    child = spawn(process.execPath, [BINARY, ...args, ...(options.extraArgs ?? [])], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.on('data', (d) => {
      output += d;
    });
    child.stderr!.on('data', (d) => {
      output += d;
    });
    await waitFor(
      () => {
        if (exited()) throw new Error(`worker exited early:\n${output}`);
        return output.includes('kubelet: node') && output.includes('syncing pods');
      },
      { timeoutMs: 30_000, description: `worker ${nodeName} to start its kubelet` },
    ).catch((err) => {
      if (!exited()) child.kill('SIGKILL');
      throw new Error(`${err instanceof Error ? err.message : err}\n${output}`);
    });
  };

  const waitExit = (signal: NodeJS.Signals) =>
    new Promise<void>((resolve) => {
      if (exited()) return resolve();
      child.once('exit', () => resolve());
      child.kill(signal);
    });

  await launch();
  const worker: WorkerProcess = {
    nodeName,
    bridge,
    dataDir,
    kubeletPort,
    get child() {
      return child;
    },
    output: () => output,
    restart: launch,
    kill: () => waitExit('SIGKILL'),
    async stop() {
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await waitExit('SIGTERM');
      clearTimeout(timer);
    },
    async destroy() {
      await worker.stop();
      await removeNodeContainers(nodeName);
      await docker
        .getNetwork(bridge)
        .remove()
        .catch(() => {});
      rmSync(dataDir, { recursive: true, force: true });
    },
  } as WorkerProcess;
  return worker;
}
