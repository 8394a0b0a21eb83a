// What the simulated cluster made, as plain data (typed undo actions), and how each is undone: by this process, a test's reaper, or a later `sim-cluster down`.
import { readFileSync, rmSync } from 'node:fs';
import Docker from 'dockerode';
import { waitFor } from '../../src/core/wait-for.js';
import { iptablesRuleExists, linkExists, netnsExists, sh } from './host-commands.js';
import { isRunning, procStat, readPidFile, stopPid, withDescendants } from './processes.js';

/** One thing to undo. Each is idempotent: undoing what is already gone does nothing. */
export type UndoAction =
  /** A process we started; then the processes in `pidFiles` (the master's etcd and registry end with it) if their command line names `guard`. */
  | { kind: 'stop-process'; what: string; pid: number; startTime: string; termMs: number; pidFiles?: string[]; guard?: string }
  /** Every container of a dockerd (through that engine), the dockerd, then its managed containerd. */
  | { kind: 'stop-dockerd'; what: string; pid: number; startTime: string; socket: string; containerdPidFile: string; guard: string }
  | { kind: 'delete-link'; name: string }
  | { kind: 'delete-netns'; name: string; veth: string }
  | { kind: 'delete-iptables-rule'; rule: string[] }
  /** Unmount everything under it (a dockerd bind-mounts its data root; a container killed with it leaves its layers mounted), then remove it. */
  | { kind: 'remove-dir'; path: string }
  /** The first `ip netns add` on a machine makes /run/netns a mount point: undone once no namespace is left in it. */
  | { kind: 'unmount-netns-dir'; path: string };

/** Where the cluster tells what it made, as it makes it; `run` undoes it all, last made first. */
export interface UndoLog {
  push(action: UndoAction): void;
  /** Undoes everything pushed; safe to call twice; rejects with every step that failed. */
  run(): Promise<void>;
}

/** Mount points at or under `dir`, deepest first (from this process's mount table). */
export function mountsUnder(dir: string): string[] {
  const table = readFileSync('/proc/self/mountinfo', 'utf8');
  const points = table
    .split('\n')
    .filter(Boolean)
    .map((line) => line.split(' ')[4]!.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8))))
    .filter((p) => p === dir || p.startsWith(`${dir}/`));
  return [...new Set(points)].sort((a, b) => b.length - a.length);
}

export async function undo(action: UndoAction): Promise<void> {
  switch (action.kind) {
    case 'stop-process': {
      await stopPid(action.pid, { startTime: action.startTime }, action.what, action.termMs);
      for (const file of action.pidFiles ?? []) {
        const pid = readPidFile(file);
        if (pid !== undefined) await stopPid(pid, { cmdlineIncludes: action.guard ?? '\0' }, `${action.what}'s ${file}`, 15_000);
      }
      return;
    }
    case 'stop-dockerd': {
      // Containers first, through the engine: the kubelet leaves its pods running when it stops.
      let removal: Error | undefined;
      if (isRunning(action.pid, { startTime: action.startTime })) {
        const docker = new Docker({ socketPath: action.socket, timeout: 20_000 });
        const containers = await docker.listContainers({ all: true }).catch(() => []);
        const results = await Promise.allSettled(containers.map((c) => docker.getContainer(c.Id).remove({ force: true, v: true })));
        const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
        if (failed) removal = new Error(`removing its containers: ${failed.reason instanceof Error ? failed.reason.message : String(failed.reason)}`);
      }
      await stopPid(action.pid, { startTime: action.startTime }, action.what, 20_000);
      // Its managed containerd ends with it, unless dockerd had to be killed.
      const containerd = readPidFile(action.containerdPidFile);
      if (containerd !== undefined) await stopPid(containerd, { cmdlineIncludes: action.guard }, `containerd of ${action.what}`, 10_000);
      if (removal) throw removal;
      return;
    }
    case 'delete-link':
      if (await linkExists(action.name)) await sh('ip', ['link', 'del', action.name]);
      return;
    case 'delete-netns':
      if (await netnsExists(action.name)) {
        // What is left running in the machine: a dockerd killed by a test leaves its containers' shims
        // (and under them the containers) behind. All of it was started inside this namespace we made.
        const pids = withDescendants((await sh('ip', ['netns', 'pids', action.name])).split('\n').filter(Boolean).map(Number));
        for (const pid of pids) {
          try {
            process.kill(pid, 'SIGKILL');
          } catch {
            /* gone already */
          }
        }
        await waitFor(() => pids.every((pid) => procStat(pid) === undefined || procStat(pid)!.state === 'Z'), {
          timeoutMs: 10_000,
          intervalMs: 50,
          description: `the processes left in ${action.name} to end`,
        });
        await sh('ip', ['netns', 'del', action.name]);
      }
      // The kernel dismantles a deleted namespace's devices (a veth end there takes ours with it) in the background.
      await waitFor(async () => !(await linkExists(action.veth)), {
        timeoutMs: 10_000,
        intervalMs: 50,
        description: `veth ${action.veth} to go with ${action.name}`,
      });
      return;
    case 'delete-iptables-rule':
      // -C fails once the rule is gone: delete only while it is there.
      while (await iptablesRuleExists(action.rule)) await sh('iptables', ['-D', ...action.rule]);
      return;
    case 'remove-dir': {
      for (const point of mountsUnder(action.path)) await sh('umount', [point]).catch(() => sh('umount', ['-l', point]));
      const left = mountsUnder(action.path);
      if (left.length > 0) throw new Error(`still mounted under ${action.path}: ${left.join(', ')}`);
      rmSync(action.path, { recursive: true, force: true });
      return;
    }
    case 'unmount-netns-dir': {
      const left = mountsUnder(action.path);
      // A plain umount fails while a namespace is mounted inside: someone else's, made meanwhile, stays safe.
      if (left.length === 1 && left[0] === action.path) await sh('umount', [action.path]).catch(() => {});
      return;
    }
  }
}

export function describeAction(a: UndoAction): string {
  switch (a.kind) {
    case 'stop-process':
    case 'stop-dockerd':
      return `stop ${a.what} (pid ${a.pid})`;
    case 'delete-link':
      return `delete link ${a.name}`;
    case 'delete-netns':
      return `delete netns ${a.name}`;
    case 'delete-iptables-rule':
      return `delete iptables rule ${a.rule.join(' ')}`;
    case 'remove-dir':
      return `remove ${a.path}`;
    case 'unmount-netns-dir':
      return `unmount ${a.path}`;
  }
}

/** Undoes the actions last first; every one is tried. Resolves with the failures. */
export async function undoAll(actions: readonly UndoAction[], log: (line: string) => void = () => {}): Promise<string[]> {
  const failures: string[] = [];
  for (const action of [...actions].reverse()) {
    const started = Date.now();
    try {
      await undo(action);
      log(`${describeAction(action)}: done in ${Date.now() - started} ms`);
    } catch (err) {
      failures.push(`${describeAction(action)}: ${err instanceof Error ? err.message : String(err)}`);
      log(`${describeAction(action)}: FAILED ${failures.at(-1)}`);
    }
  }
  return failures;
}
