// scripts/sim-cluster.sh's program: `up N` leaves a simulated multi-node cluster running (a master on the host, N workers in network namespaces with their own dockerd), `down` removes all it made, `status` and `env` tell about it.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Node } from '../src/core/api/node.js';
import { writeClientConfig } from '../src/core/client-config.js';
import { waitFor } from '../src/core/wait-for.js';
import { linkExists, netnsExists, netnsSkipReason } from './sim/host-commands.js';
import { relaunchMaster, startNetnsCluster, type NetnsCluster } from './sim/netns-cluster.js';
import { isRunning, procStat, stopPid } from './sim/processes.js';
import { parseSimArgs, simClusterNames, SimUsageError, USAGE, type SimCommand } from './sim/sim-cluster-args.js';
import { undo, undoAll } from './sim/undo-actions.js';
import { readUndoJournal, UndoJournal } from './sim/undo-journal.js';

/** Where clusters keep their state, logs and the machines' engines (images and containers: on disk, not in /run's memory). */
const BASE_DIR = process.env.MINIK8S_SIM_DIR || '/var/lib/minik8s-sim';
const SCRIPT = (() => {
  const path = fileURLToPath(new URL('../../scripts/sim-cluster.sh', import.meta.url));
  const rel = relative(process.cwd(), path);
  return rel.startsWith('..') ? path : rel;
})();

/** What `up` leaves for `status`, `env` and the user (the undo journal beside it is what `down` uses). */
interface ClusterState {
  name: string;
  createdAt: string;
  root: string;
  bridge: string;
  subnet: string;
  hostIP: string;
  forwardRule: string[];
  config: string;
  master: {
    url: string;
    /** The activator's URL (https with the API's CA, unless the master runs --insecure-http). */
    activator?: string;
    /** DATA_DIR/admin.kubeconfig (server, CA, admin credentials) when the master serves HTTPS. */
    kubeconfig?: string;
    registry: string;
    clusterCIDR: string;
    dataDir: string;
    pid: number;
    startTime: string;
    log: string;
    /** Its command line and HOME, for restart-master (absent in the state of an older up). */
    args?: string[];
    home?: string;
  };
  nodes: {
    name: string;
    ip: string;
    netns: string;
    veth: string;
    dir: string;
    dockerHost: string;
    dockerdPid: number;
    dockerdStartTime: string;
    workerPid: number;
    workerStartTime: string;
  }[];
}

class SimFailure extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

const say = (line: string) => process.stdout.write(`${line}\n`);

function paths(name: string) {
  const root = join(BASE_DIR, name);
  return {
    root,
    journal: join(root, 'undo.jsonl'),
    state: join(root, 'cluster.json'),
    config: join(root, 'config'),
    upPid: join(root, 'up.pid'),
  };
}

/** `--name X` for printed commands, when X is not the default. */
const nameFlag = (name: string) => (name === 'sim' ? '' : ` --name ${name}`);

function readState(name: string): ClusterState | undefined {
  try {
    return JSON.parse(readFileSync(paths(name).state, 'utf8')) as ClusterState;
  } catch {
    return undefined;
  }
}

/** The `up` that is making this cluster now, if one is. */
function upInProgress(name: string): number | undefined {
  try {
    const { pid, startTime } = JSON.parse(readFileSync(paths(name).upPid, 'utf8')) as { pid: number; startTime: string };
    return pid !== process.pid && isRunning(pid, { startTime }) ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** A GET with the admin token, over https trusting only the cluster CA (Node 20's fetch takes none) or plain http; the status and JSON. */
function getJson(url: string, token: string, ca: string | undefined): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const secure = url.startsWith('https:');
    const options: https.RequestOptions = { headers: { authorization: `Bearer ${token}` }, agent: false, timeout: 3000, ...(secure && ca ? { ca } : {}) };
    const req = (secure ? https : http).request(url, options, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        text += d;
      });
      res.on('error', reject);
      res.on('end', () => {
        try {
          resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) });
        } catch {
          resolve({ status: res.statusCode ?? 0, body: undefined });
        }
      });
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${url}: no answer in 3 s`)));
    req.on('error', reject);
    req.end();
  });
}

/** The cluster CA of a master that serves HTTPS (undefined for an --insecure-http one). */
function masterCa(dataDir: string, url: string): string | undefined {
  return url.startsWith('https:') ? readFileSync(join(dataDir, 'pki', 'ca.crt'), 'utf8') : undefined;
}

async function api<T>(state: ClusterState, path: string): Promise<T> {
  const token = readFileSync(join(state.master.dataDir, 'admin-token'), 'utf8').trim();
  const res = await getJson(`${state.master.url}${path}`, token, masterCa(state.master.dataDir, state.master.url));
  if (res.status !== 200) throw new Error(`GET ${path}: ${res.status}`);
  return res.body as T;
}

function readyOf(node: Node | undefined): string {
  const ready = node?.status?.conditions?.find((c) => c.type === 'Ready');
  if (ready?.status === 'True') return 'Ready';
  return ready ? `NotReady (${ready.reason ?? ready.status})` : 'NotReady';
}

function table(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) =>
    r
      .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]! + 2)))
      .join('')
      .trimEnd(),
  );
}

async function up(cmd: Extract<SimCommand, { command: 'up' }>): Promise<void> {
  const skip = netnsSkipReason();
  if (skip) throw new SimFailure(`sim-cluster ${skip}`);
  const p = paths(cmd.name);
  mkdirSync(BASE_DIR, { recursive: true, mode: 0o700 });
  try {
    // The cluster's directory is its lock: only one `up` makes it.
    mkdirSync(p.root, { mode: 0o700 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    const busy = upInProgress(cmd.name);
    if (busy !== undefined) throw new SimFailure(`cluster "${cmd.name}" is being made by another up (pid ${busy})`);
    const state = readState(cmd.name);
    const running = state && isRunning(state.master.pid, { startTime: state.master.startTime });
    throw new SimFailure(
      running
        ? `cluster "${cmd.name}" is already up (${state.nodes.length} nodes, master ${state.master.url}); take it down first: sudo ${SCRIPT} down${nameFlag(cmd.name)}`
        : `cluster "${cmd.name}" left state in ${p.root} (an earlier up that failed, or a reboot); remove it first: sudo ${SCRIPT} down${nameFlag(cmd.name)}`,
    );
  }
  writeFileSync(p.upPid, JSON.stringify({ pid: process.pid, startTime: procStat(process.pid)?.startTime }));

  const names = simClusterNames(cmd.name, cmd.count);
  // Names are ours to make: something of another's with the same name is never touched, let alone removed.
  const taken = [
    ...((await linkExists(names.bridge)) ? [`link ${names.bridge}`] : []),
    ...(
      await Promise.all(
        names.machines.map(async (m) => [
          ...((await netnsExists(m.netns)) ? [`netns ${m.netns}`] : []),
          ...((await linkExists(m.veth)) ? [`link ${m.veth}`] : []),
        ]),
      )
    ).flat(),
  ];
  if (taken.length > 0) {
    rmSync(p.root, { recursive: true, force: true });
    throw new SimFailure(`${taken.join(', ')} already exist${taken.length === 1 ? 's' : ''} but not as part of cluster "${cmd.name}"; pick another --name`);
  }

  const started = Date.now();
  const journal = new UndoJournal({ path: p.journal, log: (line) => say(`  ${line}`) });
  const interrupt = new AbortController();
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    signals += 1;
    if (signals === 1) {
      say(`sim-cluster: ${signal}: stopping, and undoing what was made (again to leave at once)`);
      interrupt.abort();
    } else {
      process.stderr.write(`sim-cluster: left at once; remove what was made with: sudo ${SCRIPT} down${nameFlag(cmd.name)}\n`);
      process.exit(130);
    }
  };
  for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(s, onSignal);

  say(`sim-cluster: making cluster "${cmd.name}": a master on this host and ${cmd.count} machine${cmd.count === 1 ? '' : 's'} (state and logs in ${p.root})`);
  if (cmd.seedImages) say('sim-cluster: base images: building any that are missing takes about 90 s the first time');
  let cluster: NetnsCluster;
  try {
    cluster = await startNetnsCluster({
      root: p.root,
      bridge: names.bridge,
      machines: names.machines,
      undo: journal,
      seedImages: cmd.seedImages,
      detached: true,
      // HTTPS with the cluster CA (API and activator), as the daemon's default; --master-arg=--insecure-http for plain HTTP.
      tls: !cmd.masterArgs.includes('--insecure-http'),
      masterArgs: cmd.masterArgs,
      workerArgs: cmd.workerArgs,
      signal: interrupt.signal,
      log: (line) => say(`sim-cluster: ${line}`),
    });
    const token = cluster.master.token;
    await Promise.all(
      cluster.workers.map(async (w) => {
        await waitFor(
          async () => {
            const res = await getJson(`${cluster.master.url}/api/v1/nodes/${w.nodeName}`, token, cluster.master.ca);
            return res.status === 200 && readyOf(res.body as Node) === 'Ready';
          },
          { timeoutMs: 60_000, intervalMs: 250, description: `node ${w.nodeName} to be Ready (see ${w.logFile})`, signal: interrupt.signal },
        );
        say(`sim-cluster: node ${w.nodeName} Ready (${((Date.now() - started) / 1000).toFixed(1)} s)`);
      }),
    );
  } catch (err) {
    say(`sim-cluster: failed: ${err instanceof Error ? err.message : String(err)}`);
    if (!journal.ran) say('sim-cluster: undoing what was made');
    // The engine has undone what it made if it failed; run() is once only, so this waits for that or does it now.
    const cleaned = await journal.run().then(
      () => true,
      (cleanupErr: Error) => {
        process.stderr.write(`sim-cluster: ${cleanupErr.message}\nsim-cluster: try again with: sudo ${SCRIPT} down${nameFlag(cmd.name)}\n`);
        return false;
      },
    );
    if (cleaned) removeStateDir(p.root);
    if (interrupt.signal.aborted) throw new SimFailure(`interrupted${cleaned ? '; everything made was removed' : ''}`, 130);
    throw new SimFailure(`cluster "${cmd.name}" was not made${cleaned ? '; everything made was removed' : ''}`);
  }

  const tls = cluster.master.url.startsWith('https:');
  const caPath = tls ? join(cluster.master.dataDir, 'pki', 'ca.crt') : undefined;
  const kubeconfig = tls ? join(cluster.master.dataDir, 'admin.kubeconfig') : undefined;
  writeClientConfig({ server: cluster.master.url, token: cluster.master.token, caPath }, p.config);
  const state: ClusterState = {
    name: cmd.name,
    createdAt: new Date().toISOString(),
    root: p.root,
    bridge: cluster.bridge,
    subnet: cluster.subnet,
    hostIP: cluster.hostIP,
    forwardRule: cluster.forwardRule,
    config: p.config,
    master: {
      url: cluster.master.url,
      activator: cluster.master.activatorUrl,
      ...(kubeconfig ? { kubeconfig } : {}),
      registry: `${cluster.hostIP}:${cluster.master.registryPort}`,
      clusterCIDR: cluster.master.clusterCIDR,
      dataDir: cluster.master.dataDir,
      pid: cluster.master.pid,
      startTime: cluster.master.startTime,
      log: cluster.master.logFile,
      args: cluster.master.args,
      home: cluster.master.home,
    },
    nodes: cluster.workers.map((w) => ({
      name: w.nodeName,
      ip: w.machine.ip,
      netns: w.machine.netns,
      veth: w.machine.veth,
      dir: w.machine.dir,
      dockerHost: w.machine.dockerHost,
      dockerdPid: w.machine.dockerdPid,
      dockerdStartTime: w.machine.dockerdStartTime,
      workerPid: w.pid,
      workerStartTime: w.startTime,
    })),
  };
  writeFileSync(p.state, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
  rmSync(p.upPid, { force: true });

  const n = nameFlag(cmd.name);
  const first = state.nodes[0]!;
  say('');
  say(`cluster "${cmd.name}" is up in ${((Date.now() - started) / 1000).toFixed(1)} s: ${state.nodes.length} node${state.nodes.length === 1 ? '' : 's'} Ready`);
  for (const line of table([['NODE', 'ADDRESS', 'NETNS', 'DOCKER ENGINE'], ...state.nodes.map((x) => [x.name, x.ip, x.netns, x.dockerHost])])) say(`  ${line}`);
  say(`  master ${state.master.url}, registry ${state.master.registry}, pods in ${state.master.clusterCIDR}, bridge ${state.bridge} ${state.subnet}`);
  say(`  functions and workflows at ${state.master.activator}/function/NAME and /workflow/NAME${tls ? ` (TLS: trust ${caPath})` : ''}`);
  say(`  logs: ${p.root}/master.log, ${p.root}/NODE/worker.log, ${p.root}/NODE/dockerd.log`);
  say('');
  say('Use it (as root, or from any user with the second line):');
  say(`  export MINIK8S_CONFIG=${p.config}`);
  if (kubeconfig) say(`  export KUBECONFIG=${kubeconfig}    # or this (the cluster CA and the admin's certificate; stock kubectl reads it too)`);
  say(`  eval "$(sudo ${SCRIPT} env${n})"`);
  say('  minik8s get nodes -o wide');
  say(`  docker -H ${first.dockerHost} ps    # machine ${first.name}'s engine`);
  say(`  nsenter --net=/run/netns/${first.netns} ip addr    # a command inside machine ${first.name}`);
  say('Tear it down:');
  say(`  sudo ${SCRIPT} down${n}`);
}

/** Removes a cluster's directory (unmounting what is left under it), then the base directory if no other cluster is left. */
function removeStateDir(root: string): Promise<void> {
  return undo({ kind: 'remove-dir', path: root }).then(() => {
    try {
      if (readdirSync(BASE_DIR).length === 0) rmdirSync(BASE_DIR);
    } catch {
      /* another cluster's, or gone */
    }
  });
}

async function down(name: string): Promise<void> {
  const p = paths(name);
  if (!existsSync(p.root)) {
    say(`sim-cluster: no cluster "${name}" (nothing in ${p.root})`);
    return;
  }
  const busy = upInProgress(name);
  if (busy !== undefined)
    throw new SimFailure(`an up of cluster "${name}" is still running (pid ${busy}): Ctrl-C there (it undoes what it made), or wait for it to end`);
  const actions = readUndoJournal(p.journal);
  say(`sim-cluster: taking down cluster "${name}": ${actions.length} steps`);
  const failures = await undoAll(actions, (line) => say(`  ${line}`));
  if (failures.length > 0) {
    throw new SimFailure(`could not undo everything, state kept in ${p.root}:\n  ${failures.join('\n  ')}\nfix that and run down again`);
  }
  await removeStateDir(p.root);
  say(`sim-cluster: cluster "${name}" is gone`);
}

async function status(name: string): Promise<boolean> {
  const p = paths(name);
  if (!existsSync(p.root)) {
    say(`sim-cluster: no cluster "${name}"`);
    return false;
  }
  const state = readState(name);
  if (!state) {
    const busy = upInProgress(name);
    say(
      busy !== undefined
        ? `sim-cluster: cluster "${name}" is being made (up, pid ${busy})`
        : `sim-cluster: cluster "${name}" is not up (an earlier up failed or was killed); remove what is left with: sudo ${SCRIPT} down${nameFlag(name)}`,
    );
    return false;
  }
  const alive = (pid: number, startTime: string) => (isRunning(pid, { startTime }) ? `running (pid ${pid})` : `gone (pid ${pid})`);
  const nodes = new Map<string, Node>();
  let apiError = '';
  try {
    for (const n of (await api<{ items?: Node[] }>(state, '/api/v1/nodes')).items ?? []) nodes.set(n.metadata.name!, n);
  } catch (err) {
    apiError = ` (API: ${err instanceof Error ? err.message : String(err)})`;
  }
  const masterUp = isRunning(state.master.pid, { startTime: state.master.startTime });
  say(`cluster "${name}", made ${state.createdAt}, state in ${state.root}`);
  say(`master ${state.master.url}: ${alive(state.master.pid, state.master.startTime)}${apiError}, registry ${state.master.registry}`);
  if (state.master.activator) say(`activator ${state.master.activator}`);
  const rows = await Promise.all(
    state.nodes.map(async (x) => [
      x.name,
      x.ip,
      (await netnsExists(x.netns)) ? x.netns : `${x.netns} (gone)`,
      alive(x.dockerdPid, x.dockerdStartTime),
      alive(x.workerPid, x.workerStartTime),
      apiError ? '?' : nodes.has(x.name) ? readyOf(nodes.get(x.name)) : 'not registered',
    ]),
  );
  for (const line of table([['NODE', 'ADDRESS', 'NETNS', 'DOCKERD', 'WORKER', 'STATUS'], ...rows])) say(line);
  const extra = [...nodes.keys()].filter((k) => !state.nodes.some((x) => x.name === k));
  if (extra.length > 0) say(`other nodes of this master: ${extra.join(', ')}`);
  return masterUp && !apiError && rows.every((r) => r[3]!.startsWith('running') && r[4]!.startsWith('running') && r[5] === 'Ready');
}

function env(name: string): void {
  const state = readState(name);
  if (!state) throw new SimFailure(`no cluster "${name}" is up`);
  const token = readFileSync(join(state.master.dataDir, 'admin-token'), 'utf8').trim();
  say(`export MINIK8S_SERVER=${state.master.url}`);
  say(`export MINIK8S_TOKEN=${token}`);
  // Over TLS the CLI takes the cluster CA from the kubeconfig (readable by root: the cluster's files are root's).
  say(state.master.kubeconfig ? `export KUBECONFIG=${state.master.kubeconfig}` : 'unset KUBECONFIG');
  // `minik8s image import` pushes here: the registry is not on the API server's host's port 5000.
  say(`export MINIK8S_REGISTRY=${state.master.registry}`);
}

/** Stops the master and starts it again as up started it: same flags, data directory, etcd data and ports. */
async function restartMaster(name: string): Promise<void> {
  const p = paths(name);
  const state = readState(name);
  if (!state) throw new SimFailure(`no cluster "${name}" is up (no state in ${p.root})`);
  const { master } = state;
  if (!master.args || !master.home) {
    throw new SimFailure(`cluster "${name}" was made by an older sim-cluster that did not record the master's flags; take it down and up again`);
  }
  const started = Date.now();
  const identity = { startTime: master.startTime };
  if (isRunning(master.pid, identity)) {
    say(`sim-cluster: stopping the master (pid ${master.pid})`);
    await stopPid(master.pid, identity, 'the master', 15_000);
  }
  // The new process goes into the journal too, so that down stops it.
  const journal = new UndoJournal({ path: p.journal, log: (line) => say(`  ${line}`) });
  const again = await relaunchMaster(
    { root: p.root, undo: journal, detached: true },
    { args: master.args, logFile: master.log, home: master.home, dataDir: master.dataDir, url: master.url },
  );
  const state2: ClusterState = { ...state, master: { ...master, pid: again.pid, startTime: again.startTime } };
  writeFileSync(p.state, `${JSON.stringify(state2, null, 2)}\n`, { mode: 0o600 });
  say(
    `sim-cluster: master serving again at ${master.url} (pid ${again.pid}) after ${((Date.now() - started) / 1000).toFixed(1)} s; the workers reconnect on their own`,
  );
}

async function main(argv: string[]): Promise<number> {
  let cmd: SimCommand;
  try {
    cmd = parseSimArgs(argv);
  } catch (err) {
    if (!(err instanceof SimUsageError)) throw err;
    process.stderr.write(`sim-cluster: ${err.message}\n\n${USAGE}`);
    return 2;
  }
  try {
    switch (cmd.command) {
      case 'help':
        process.stdout.write(USAGE);
        return 0;
      case 'up':
        await up(cmd);
        return 0;
      case 'down':
        await down(cmd.name);
        return 0;
      case 'status':
        return (await status(cmd.name)) ? 0 : 1;
      case 'env':
        env(cmd.name);
        return 0;
      case 'restart-master':
        await restartMaster(cmd.name);
        return 0;
    }
  } catch (err) {
    if (!(err instanceof SimFailure) && process.env.MINIK8S_DEBUG && err instanceof Error) process.stderr.write(`${err.stack}\n`);
    process.stderr.write(`sim-cluster: ${err instanceof Error ? err.message : String(err)}\n`);
    return err instanceof SimFailure ? err.exitCode : 1;
  }
}

// Exit at once: the detached processes are not ours to wait for, and idle keep-alive sockets would hold the event loop.
process.exit(await main(process.argv.slice(2)));
