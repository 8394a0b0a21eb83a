// Several machines on one, for end-to-end tests: the engine of scripts/sim (a bridge, a network namespace per machine with its own dockerd and worker, a master on the bridge) with random names, under a temp dir, undone by a reaper even when the test process dies.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, mkdtempSync } from 'node:fs';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { waitFor } from '../../src/core/wait-for.js';
import {
  relaunchDockerd,
  relaunchMaster,
  relaunchWorker,
  startNetnsCluster,
  type NetnsCluster as BuiltCluster,
  type NetnsClusterSpec,
  type NetnsMachine,
  type NetnsMaster,
  type NetnsWorker,
} from '../../scripts/sim/netns-cluster.js';
import { undoAll, type UndoAction, type UndoLog } from '../../scripts/sim/undo-actions.js';
import { trustClusterCA } from './cluster-trust.js';

export { findExecutable, netnsSkipReason } from '../../scripts/sim/host-commands.js';
export { freeSubnets } from '../../scripts/sim/free-resources.js';
export { mountsUnder, undoAll, type UndoAction } from '../../scripts/sim/undo-actions.js';
export type { NetnsMachine, NetnsMaster, NetnsWorker } from '../../scripts/sim/netns-cluster.js';

// ---------------------------------------------------------------------------------------------
// Undoing, even when the test process dies

const REAP = '--reap-netns-cluster';

/**
 * What the cluster made, in order, told as it happens to a reaper: a detached process (its own
 * session, so Ctrl-C does not reach it) that reads the actions on its stdin. When this process
 * ends without saying `done` (killed, Ctrl-C, a crash), the pipe's end reaches the reaper, which
 * undoes everything. MINIK8S_NETNS_REAPER_LOG=FILE makes it say what it did there.
 */
class Undo implements UndoLog {
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
        await Promise.race([
          gone,
          waitFor(() => this.#reaper.exitCode !== null || this.#reaper.signalCode !== null, { timeoutMs: 10_000, description: 'the reaper to exit' }),
        ]).catch(() => this.#reaper.kill('SIGKILL'));
      }
      if (failures.length > 0) throw new Error(`cleanup of the netns cluster failed:\n${failures.join('\n')}`);
    })();
    return this.#done;
  }
}

/** The reaper's main: collect actions until stdin ends; undo them all unless told `done`. */
async function reap(): Promise<void> {
  const logFile = process.env.MINIK8S_NETNS_REAPER_LOG;
  const log = (line: string) => {
    if (logFile) appendFileSync(logFile, `${new Date().toISOString()} reaper ${process.pid}: ${line}\n`);
  };
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

export interface NetnsClusterOptions {
  /** The simulated machines' short names (at most 9, each at most 4 characters). */
  machines: string[];
  /** Give the master's registry the base images (builds them first if missing). Default true. */
  seedImages?: boolean;
  /** The kubelet port on every machine (each has its own network namespace). Default 10250. */
  kubeletPort?: number;
  /** Serve the API over HTTPS with the cluster CA (`master.ca`, which this process's fetch() then trusts); default true, false: --insecure-http. */
  tls?: boolean;
  /** More flags for the master and for every worker. */
  masterArgs?: string[];
  workerArgs?: NetnsClusterSpec['workerArgs'];
  /** Called with progress lines (timings). */
  log?: (line: string) => void;
}

export interface NetnsCluster extends BuiltCluster {
  /** A short random tag in every name this cluster made. */
  tag: string;
  /** Starts machine i's worker again after the test killed it (same node, same credential); updates `workers[i]`. */
  restartWorker(i: number): Promise<NetnsWorker>;
  /** Starts the master again after the test killed it (same data, ports and etcd); updates `master`. */
  restartMaster(): Promise<NetnsMaster>;
  /** Starts machine i's dockerd again after the test killed it; updates `machines[i]` and `workers[i].machine`. */
  restartDockerd(i: number): Promise<NetnsMachine>;
  /** Stops and removes everything, last made first; safe to call twice. Rejects with every step that failed. */
  destroy(): Promise<void>;
}

/**
 * Builds the cluster (see startNetnsCluster) with names no other run shares: bridge
 * mk8s-e2e-TAG, namespaces mk8s-e2e-TAG-NAME, nodes NAME-TAG, everything else under a temp dir.
 * On any failure everything made so far is undone before the error is thrown.
 */
export async function createNetnsCluster(options: NetnsClusterOptions): Promise<NetnsCluster> {
  if (options.machines.length > 9 || options.machines.some((m) => !/^[a-z0-9]{1,4}$/.test(m))) {
    throw new Error('at most 9 machines, named with at most 4 lower-case letters or digits');
  }
  const tag = randomBytes(2).toString('hex');
  const undoing = new Undo();
  const root = mkdtempSync(join(tmpdir(), `minik8s-netns-${tag}-`));
  undoing.push({ kind: 'remove-dir', path: root });
  // The engine undoes what it made when it fails; run() is once only, so a failure before it started is undone here too.
  const spec: NetnsClusterSpec = {
    root,
    bridge: `mk8s-e2e-${tag}`,
    machines: options.machines.map((name) => ({ name, nodeName: `${name}-${tag}`, netns: `mk8s-e2e-${tag}-${name}`, veth: `mk8e${tag}${name}` })),
    undo: undoing,
    seedImages: options.seedImages,
    kubeletPort: options.kubeletPort,
    tls: options.tls ?? true,
    masterArgs: options.masterArgs,
    workerArgs: options.workerArgs,
    log: options.log,
  };
  const built = await startNetnsCluster(spec).catch(async (err) => {
    await undoing.run().catch(() => {});
    throw err;
  });
  if (built.master.ca) trustClusterCA(built.master.ca);
  const cluster: NetnsCluster = {
    ...built,
    tag,
    destroy: () => undoing.run(),
    async restartWorker(i) {
      cluster.workers[i] = await relaunchWorker(spec, cluster.workers[i]!, cluster.master.url, cluster.master.joinToken);
      return cluster.workers[i]!;
    },
    async restartMaster() {
      cluster.master = await relaunchMaster(spec, cluster.master);
      return cluster.master;
    },
    async restartDockerd(i) {
      cluster.machines[i] = await relaunchDockerd(spec, cluster.machines[i]!);
      cluster.workers[i] = { ...cluster.workers[i]!, machine: cluster.machines[i]! };
      return cluster.machines[i]!;
    },
  };
  return cluster;
}
