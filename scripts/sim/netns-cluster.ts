// Several machines on one: a host bridge, a network namespace per simulated machine with its own dockerd and `minik8s --role=worker`, and a master on the host listening on the bridge; each thing made is told to an undo log.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Docker from 'dockerode';
import { ensureBaseImages, seedRegistryStore } from './base-images.js';
import { etcdPorts, freeClusterCIDR, freePort, freeSubnets } from './free-resources.js';
import { sh, tool } from './host-commands.js';
import { startProcess, untilReady, type Started } from './processes.js';
import { mountsUnder, type UndoLog } from './undo-actions.js';
import { waitFor } from '../../src/core/wait-for.js';
import { registryCertsDir } from '../../src/runtime/docker-registry-trust.js';

/** The compiled CLI: dist/scripts/sim/netns-cluster.js -> dist/bin/minik8s.js. */
export const MINIK8S_BINARY = fileURLToPath(new URL('../../bin/minik8s.js', import.meta.url));

export interface NetnsMaster {
  /** https://BRIDGE_ADDRESS:PORT with `tls`, else http://. */
  url: string;
  /** The cluster CA (PEM) with `tls`: the only authority to trust for `url`. */
  ca?: string;
  /** The admin token. */
  token: string;
  joinToken: string;
  registryPort: number;
  /** The activator (function and workflow URLs): http(s)://BRIDGE_ADDRESS:PORT as the API's, on a free port like the API's. */
  activatorUrl: string;
  clusterCIDR: string;
  dataDir: string;
  /** Its HOME: the master writes its CLI config there, not into the invoking user's. */
  home: string;
  logFile: string;
  /** Environment for running the CLI against this master. */
  env: NodeJS.ProcessEnv;
  pid: number;
  startTime: string;
  /** Its command line (kept to start it again). */
  args: string[];
  output(): string;
}

export interface NetnsMachine {
  /** Short name, also its directory's name under the cluster's root. */
  name: string;
  /** The network namespace, under /var/run/netns. */
  netns: string;
  /** The host's end of its veth pair, a port of the bridge (the other end is eth0 inside). */
  veth: string;
  /** The machine's address on the bridge. */
  ip: string;
  /** Its own Docker engine: unix:///.../docker.sock. */
  dockerHost: string;
  docker: Docker;
  dockerdPid: number;
  dockerdStartTime: string;
  dir: string;
  dockerdOutput(): string;
  /** The docker0 range its engine was given, and the master's registry it may use over plain HTTP (--insecure-http masters only; kept to start it again). */
  bip: string;
  insecureRegistry?: string;
}

export interface NetnsWorker {
  nodeName: string;
  machine: NetnsMachine;
  dataDir: string;
  kubeletPort: number;
  pid: number;
  startTime: string;
  logFile: string;
  output(): string;
  /** The node credential the worker got when it joined (DATA_DIR/kubelet/node-credential.json). */
  credential(): { token: string; nodeName: string; podCIDR: string };
}

/** One simulated machine: its names are the caller's choice (tests add a random tag, `sim-cluster` the cluster's name). */
export interface MachineSpec {
  /** Its directory under the root (and how progress lines name it). */
  name: string;
  nodeName: string;
  netns: string;
  /** At most 15 characters (a Linux interface name). */
  veth: string;
}

export interface NetnsClusterSpec {
  /** A directory that exists and that this cluster owns: the master's and every machine's state and logs go under it. */
  root: string;
  /** The bridge's name (at most 15 characters). */
  bridge: string;
  machines: MachineSpec[];
  /** Told every thing made, as it is made; run on any failure. */
  undo: UndoLog;
  /** Give the master's registry the base images (builds them first if missing). Default true. */
  seedImages?: boolean;
  /** The kubelet port on every machine (each has its own network namespace). Default 10250. */
  kubeletPort?: number;
  /** Start every process in a session of its own, so that the cluster outlives this process (`sim-cluster up`). */
  detached?: boolean;
  /**
   * Serve the API over HTTPS with the cluster CA (the daemon's default). Default false: the
   * master runs with --insecure-http, since most tests fetch it with plain fetch().
   */
  tls?: boolean;
  /** More flags for the master. */
  masterArgs?: string[];
  /** More flags for every worker; a function gets the host's address on the bridge (for flags naming something the test runs there). */
  workerArgs?: string[] | ((cluster: { hostIP: string }) => string[]);
  /** Aborting it stops the build, which then undoes what it made and rejects. */
  signal?: AbortSignal;
  /** Called with progress lines (with timings). */
  log?: (line: string) => void;
}

export interface NetnsCluster {
  bridge: string;
  /** The bridge's /24, as a.b.c.0/24. */
  subnet: string;
  /** The host's address on the bridge: the master listens there. */
  hostIP: string;
  /** The host's FORWARD rule that lets traffic between the bridge's ports pass. */
  forwardRule: string[];
  master: NetnsMaster;
  machines: NetnsMachine[];
  workers: NetnsWorker[];
}

/** At most this many machines: their addresses are .11 to .30 of the bridge's /24. */
export const MAX_MACHINES = 20;

/** Like Promise.all, but waits for every promise to settle before rejecting: nothing may still be making things once cleanup runs. */
async function settled<T>(promises: Promise<T>[]): Promise<T[]> {
  const results = await Promise.allSettled(promises);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return results.map((r) => (r as PromiseFulfilledResult<T>).value);
}

/**
 * Builds the cluster: a bridge with a free 10.123.X.0/24 (the host at .1) and a FORWARD rule
 * for it, the master on the host listening at .1, and per machine a network namespace (at .11,
 * .12, ...) with a veth into the bridge, its own dockerd (started with nsenter --net, and
 * trusting the master's registry) and a worker joined through the bridge. On any failure
 * everything made so far is undone (through `spec.undo`) before the error is thrown.
 */
export async function startNetnsCluster(spec: NetnsClusterSpec): Promise<NetnsCluster> {
  if (spec.machines.length < 1 || spec.machines.length > MAX_MACHINES) throw new Error(`between 1 and ${MAX_MACHINES} machines`);
  for (const name of [spec.bridge, ...spec.machines.map((m) => m.veth)]) {
    if (!/^[A-Za-z0-9][-A-Za-z0-9_.]{0,14}$/.test(name)) throw new Error(`"${name}" is not an interface name of at most 15 characters`);
  }
  const log = spec.log ?? (() => {});
  const started = Date.now();
  const lap = (what: string) => log(`${what} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  const checkpoint = () => {
    if (spec.signal?.aborted) throw new Error('interrupted');
  };
  const { undo, bridge } = spec;
  try {
    const [subnet, ...bips] = await freeSubnets(1 + spec.machines.length);
    const hostIP = `${subnet}.1`;
    const netnsDir = '/run/netns';
    if (!mountsUnder(netnsDir).includes(netnsDir)) undo.push({ kind: 'unmount-netns-dir', path: netnsDir });
    checkpoint();

    // The bridge, and the host's FORWARD rule for traffic between its ports (the host dockerd's policy is DROP).
    await sh('ip', ['link', 'add', bridge, 'type', 'bridge']);
    undo.push({ kind: 'delete-link', name: bridge });
    await sh('ip', ['addr', 'add', `${hostIP}/24`, 'dev', bridge]);
    await sh('ip', ['link', 'set', bridge, 'up']);
    const forwardRule = ['FORWARD', '-i', bridge, '-o', bridge, '-j', 'ACCEPT'];
    await sh('iptables', ['-I', ...forwardRule]);
    undo.push({ kind: 'delete-iptables-rule', rule: forwardRule });
    lap(`bridge ${bridge} up, ${subnet}.0/24, the host at ${hostIP}`);
    checkpoint();

    // The master and the machines start side by side: the dockerds only need the registry's port.
    const registryPort = await freePort();
    // Over TLS the engines trust the registry through the host's certs.d (a namespace's dockerd reads the host's files):
    // the master and the workers write the cluster CA there and take it away as they stop; whatever a killed one left goes here.
    if (spec.tls) undo.push({ kind: 'remove-dir', path: registryCertsDir(`${hostIP}:${registryPort}`) });
    const [master, ...machines] = await settled<NetnsMaster | NetnsMachine>([
      startMaster({ spec, address: hostIP, registryPort, lap }).then((m) => {
        lap(`master ready at ${m.url}, registry ${hostIP}:${registryPort}`);
        return m;
      }),
      ...spec.machines.map((m, i) =>
        startMachine({
          spec,
          machine: m,
          ip: `${subnet}.${11 + i}`,
          gateway: hostIP,
          bip: `${bips[i]}.1/24`,
          ...(spec.tls ? {} : { insecureRegistry: `${hostIP}:${registryPort}` }),
        }).then((machine) => {
          lap(`machine ${m.name} up at ${machine.ip}, netns ${m.netns}, its dockerd at ${machine.dockerHost}`);
          return machine;
        }),
      ),
    ]);
    checkpoint();

    const workers = await settled(
      (machines as NetnsMachine[]).map((machine, i) =>
        startNetnsWorker({
          spec,
          machine,
          nodeName: spec.machines[i]!.nodeName,
          server: (master as NetnsMaster).url,
          joinToken: (master as NetnsMaster).joinToken,
        }).then((w) => {
          lap(`worker ${w.nodeName} started`);
          return w;
        }),
      ),
    );
    return {
      bridge,
      subnet: `${subnet}.0/24`,
      hostIP,
      forwardRule,
      master: master as NetnsMaster,
      machines: machines as NetnsMachine[],
      workers,
    };
  } catch (err) {
    log(`failed (${(err instanceof Error ? err.message : String(err)).split('\n')[0]}): undoing what was made`);
    await undo.run().catch((cleanupErr: Error) => {
      throw new Error(`${err instanceof Error ? err.message : String(err)}\n(and then) ${cleanupErr.message}`, { cause: err });
    });
    throw err;
  }
}

/** The master on the host, listening on the bridge's address only, with its registry there too. */
async function startMaster(o: { spec: NetnsClusterSpec; address: string; registryPort: number; lap: (what: string) => void }): Promise<NetnsMaster> {
  const { root } = o.spec;
  const dataDir = join(root, 'master');
  const home = join(root, 'master-home');
  mkdirSync(dataDir, { recursive: true });
  mkdirSync(home, { recursive: true });
  const port = await freePort();
  const etcdPort = await etcdPorts();
  const activatorPort = await freePort();
  const clusterCIDR = await freeClusterCIDR();
  if (o.spec.seedImages ?? true) {
    await ensureBaseImages();
    await seedRegistryStore(dataDir);
    o.lap("base images in the master's registry");
  }
  if (o.spec.signal?.aborted) throw new Error('interrupted');
  const url = `${o.spec.tls ? 'https' : 'http'}://${o.address}:${port}`;
  const logFile = join(root, 'master.log');
  const args = [
    MINIK8S_BINARY,
    '--role=master',
    '--data-dir',
    dataDir,
    '--address',
    o.address,
    '--port',
    String(port),
    '--etcd-port',
    String(etcdPort),
    '--registry-port',
    String(o.registryPort),
    '--cluster-cidr',
    clusterCIDR,
    '--activator-port',
    String(activatorPort),
    // Plain HTTP unless asked (as test/helpers/master.ts): most tests and the sim cluster's users call
    // the API with plain fetch and MINIK8S_SERVER; test/tls.test.ts and the GpuJob e2e run HTTPS.
    ...(o.spec.tls ? [] : ['--insecure-http']),
    ...(o.spec.masterArgs ?? []),
  ];
  const p = await launchMaster(o.spec, { args, logFile, home, dataDir, url });
  const token = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
  const ca = o.spec.tls ? readFileSync(join(dataDir, 'pki', 'ca.crt'), 'utf8') : undefined;
  return {
    url,
    ca,
    token,
    joinToken: readFileSync(join(dataDir, 'join-token'), 'utf8').trim(),
    registryPort: o.registryPort,
    // The activator serves HTTPS with the cluster CA whenever the API does.
    activatorUrl: `${o.spec.tls ? 'https' : 'http'}://${o.address}:${activatorPort}`,
    clusterCIDR,
    dataDir,
    home,
    logFile,
    // With TLS the CLI takes the CA from admin.kubeconfig (the server and token from the environment).
    env: { ...process.env, HOME: home, MINIK8S_SERVER: url, MINIK8S_TOKEN: token, KUBECONFIG: o.spec.tls ? join(dataDir, 'admin.kubeconfig') : '' },
    pid: p.pid,
    startTime: p.startTime,
    output: p.output,
    args,
  };
}

/** Starts the master process, tells the undo log, and resolves once it serves. */
/** What starting the master takes from the cluster's spec. */
type LaunchSpec = Pick<NetnsClusterSpec, 'root' | 'undo' | 'detached' | 'signal'>;
/** What starting the master again takes from the master (`sim-cluster restart-master` has it from the cluster's state). */
export type MasterLaunch = Pick<NetnsMaster, 'args' | 'logFile' | 'home' | 'dataDir' | 'url'>;

async function launchMaster(spec: LaunchSpec, m: MasterLaunch): Promise<Started> {
  const p = startProcess({ command: process.execPath, args: m.args, logFile: m.logFile, env: { ...process.env, HOME: m.home }, detached: spec.detached });
  // Should the master need SIGKILL, its etcd and registry end through their parent-death signal: wait for them by their pidfiles.
  spec.undo.push({
    kind: 'stop-process',
    what: 'the master',
    pid: p.pid,
    startTime: p.startTime,
    termMs: 15_000,
    pidFiles: [join(m.dataDir, 'etcd.pid'), join(m.dataDir, 'registry.pid')],
    guard: spec.root,
  });
  // The banner comes after the admin token and the join token are written.
  await untilReady(
    p,
    `the master at ${m.url} to be ready`,
    async () => {
      if (!p.output().includes('master ready')) return false;
      if (m.url.startsWith('https:')) return (await httpsStatus(`${m.url}/readyz`, readFileSync(join(m.dataDir, 'pki', 'ca.crt'), 'utf8'))) === 200;
      return (await fetch(`${m.url}/readyz`)).status === 200;
    },
    30_000,
    spec.signal,
  );
  return p;
}

/** A GET's status over https, trusting only `ca` (Node 20's fetch() takes no CA of its own). */
function httpsStatus(url: string, ca: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, { ca, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** Starts the master again (after a test killed it): same data dir, ports and etcd data, so the cluster carries on. */
export async function relaunchMaster<M extends MasterLaunch>(spec: LaunchSpec, master: M): Promise<M & Pick<Started, 'pid' | 'startTime' | 'output'>> {
  // etcd and the registry end with their parent (parent-death signal); the new master must find their ports free.
  for (const name of ['etcd', 'registry']) {
    await waitFor(
      () => {
        try {
          process.kill(Number(readFileSync(join(master.dataDir, `${name}.pid`), 'utf8')), 0);
          return false;
        } catch {
          return true;
        }
      },
      { timeoutMs: 15_000, description: `the old master's ${name} to exit` },
    );
  }
  const p = await launchMaster(spec, master);
  return { ...master, pid: p.pid, startTime: p.startTime, output: p.output };
}

/** A network namespace joined to the bridge, with its own dockerd. */
async function startMachine(o: {
  spec: NetnsClusterSpec;
  machine: MachineSpec;
  ip: string;
  gateway: string;
  bip: string;
  insecureRegistry?: string;
}): Promise<NetnsMachine> {
  const { undo } = o.spec;
  const { netns, veth } = o.machine;
  await sh('ip', ['netns', 'add', netns]);
  undo.push({ kind: 'delete-netns', name: netns, veth });
  // The peer is made inside the namespace, as eth0: no second name on the host to pick or clash.
  await sh('ip', ['link', 'add', veth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', netns]);
  undo.push({ kind: 'delete-link', name: veth });
  await sh('ip', ['link', 'set', veth, 'master', o.spec.bridge, 'up']);
  await sh('ip', ['-n', netns, 'addr', 'add', `${o.ip}/24`, 'dev', 'eth0']);
  await sh('ip', ['-n', netns, 'link', 'set', 'eth0', 'up']);
  await sh('ip', ['-n', netns, 'link', 'set', 'lo', 'up']);
  await sh('ip', ['-n', netns, 'route', 'add', 'default', 'via', o.gateway]);
  if (o.spec.signal?.aborted) throw new Error('interrupted');

  const dir = join(o.spec.root, o.machine.name);
  mkdirSync(dir);
  // Removed after its dockerd stops: the data root holds the engine's mounts until then.
  undo.push({ kind: 'remove-dir', path: dir });
  const machine = { name: o.machine.name, netns, veth, ip: o.ip, dir, bip: o.bip, insecureRegistry: o.insecureRegistry };
  return { ...machine, ...(await launchDockerd(o.spec, machine)) };
}

type DockerdParts = Pick<NetnsMachine, 'dockerHost' | 'docker' | 'dockerdPid' | 'dockerdStartTime' | 'dockerdOutput'>;

/** The machine's own dockerd, in its namespace, told to the undo log; resolves once it answers. */
async function launchDockerd(spec: NetnsClusterSpec, m: Pick<NetnsMachine, 'name' | 'netns' | 'dir' | 'bip' | 'insecureRegistry'>): Promise<DockerdParts> {
  const { undo } = spec;
  const { netns, dir } = m;
  const socket = join(dir, 'docker.sock');
  const execRoot = join(dir, 'exec');
  const configFile = join(dir, 'daemon.json');
  // Its own (empty) config, so that the host's /etc/docker/daemon.json cannot point it at the host's sockets or dirs.
  writeFileSync(configFile, '{}\n');
  // Not `ip netns exec`: it remounts /sys, and dockerd then fails ("Devices cgroup isn't mounted"). nsenter execs dockerd: same PID.
  const p = startProcess({
    command: tool('nsenter'),
    args: [
      `--net=/var/run/netns/${netns}`,
      '--',
      tool('dockerd'),
      '--config-file',
      configFile,
      '--data-root',
      join(dir, 'data'),
      '--exec-root',
      execRoot,
      '-H',
      `unix://${socket}`,
      '--pidfile',
      join(dir, 'docker.pid'),
      '--bip',
      m.bip,
      ...(m.insecureRegistry ? ['--insecure-registry', m.insecureRegistry] : []),
      // Should a system containerd be running, keep this engine's containers apart from the host engine's.
      '--containerd-namespace',
      netns,
      '--containerd-plugins-namespace',
      `${netns}-plugins`,
    ],
    logFile: join(dir, 'dockerd.log'),
    detached: spec.detached,
  });
  undo.push({
    kind: 'stop-dockerd',
    what: `dockerd of ${m.name}`,
    pid: p.pid,
    startTime: p.startTime,
    socket,
    containerdPidFile: join(execRoot, 'containerd', 'containerd.pid'),
    guard: spec.root,
  });
  const docker = new Docker({ socketPath: socket });
  await untilReady(p, `dockerd in ${netns} to answer`, async () => (await docker.ping()).toString() === 'OK', 60_000, spec.signal);
  return { dockerHost: `unix://${socket}`, docker, dockerdPid: p.pid, dockerdStartTime: p.startTime, dockerdOutput: p.output };
}

/** Starts a machine's dockerd again (after a test killed it): same data root and socket; returns the machine with the new process. */
export async function relaunchDockerd(spec: NetnsClusterSpec, machine: NetnsMachine): Promise<NetnsMachine> {
  return { ...machine, ...(await launchDockerd(spec, machine)) };
}

/** Starts a machine's worker again (after a test killed it): same node name and data dir, so it keeps its credential. */
export async function relaunchWorker(spec: NetnsClusterSpec, worker: NetnsWorker, server: string, joinToken: string): Promise<NetnsWorker> {
  return startNetnsWorker({ spec, machine: worker.machine, nodeName: worker.nodeName, server, joinToken });
}

/** `minik8s --role=worker` inside the machine's namespace, on the machine's engine, joined through the bridge. */
async function startNetnsWorker(o: {
  spec: NetnsClusterSpec;
  machine: NetnsMachine;
  nodeName: string;
  server: string;
  joinToken: string;
}): Promise<NetnsWorker> {
  const kubeletPort = o.spec.kubeletPort ?? 10250;
  const dataDir = join(o.machine.dir, 'worker');
  mkdirSync(dataDir, { recursive: true });
  const logFile = join(o.machine.dir, 'worker.log');
  const p: Started = startProcess({
    command: tool('nsenter'),
    args: [
      `--net=/var/run/netns/${o.machine.netns}`,
      '--',
      process.execPath,
      MINIK8S_BINARY,
      '--role=worker',
      '--server',
      o.server,
      '--token',
      o.joinToken,
      '--name',
      o.nodeName,
      '--node-ip',
      o.machine.ip,
      '--data-dir',
      dataDir,
      '--kubelet-port',
      String(kubeletPort),
      '--bridge',
      'minik8s0',
      '--docker-host',
      o.machine.dockerHost,
      ...(typeof o.spec.workerArgs === 'function' ? o.spec.workerArgs({ hostIP: new URL(o.server).hostname }) : (o.spec.workerArgs ?? [])),
    ],
    logFile,
    detached: o.spec.detached,
  });
  o.spec.undo.push({ kind: 'stop-process', what: `worker ${o.nodeName}`, pid: p.pid, startTime: p.startTime, termMs: 15_000 });
  await untilReady(
    p,
    `worker ${o.nodeName} to start its kubelet`,
    () => p.output().includes('kubelet: node') && p.output().includes('syncing pods'),
    30_000,
    o.spec.signal,
  );
  return {
    nodeName: o.nodeName,
    machine: o.machine,
    dataDir,
    kubeletPort,
    pid: p.pid,
    startTime: p.startTime,
    logFile,
    output: p.output,
    credential: () => JSON.parse(readFileSync(join(dataDir, 'kubelet', 'node-credential.json'), 'utf8')),
  };
}
