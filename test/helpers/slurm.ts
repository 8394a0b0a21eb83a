// A real one-machine Slurm for tests: installs Debian's slurmctld, slurmd, slurm-client and munge if missing, and runs munged, slurmctld and slurmd by PID with their own state, ports, socket and a declared GPU, reachable from other network namespaces.
import { execFile, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import { waitFor } from '../../src/core/wait-for.js';
import { freePort } from '../../scripts/sim/free-resources.js';
import { startProcess, stopPid, untilReady, type Started } from '../../scripts/sim/processes.js';

const run = promisify(execFile);

const STAND_IN_DEVICES = ['/dev/null', '/dev/zero', '/dev/full', '/dev/urandom'];
const PACKAGES = ['slurmctld', 'slurmd', 'slurm-client', 'munge'] as const;
const BINARIES = ['/usr/sbin/slurmctld', '/usr/sbin/slurmd', '/usr/bin/sbatch', '/usr/sbin/munged'];

/** Why Slurm tests cannot run here (not root, or the packages cannot be installed), else undefined. */
export function slurmSkipReason(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root (runs slurmctld, slurmd and munged)';
  if (!existsSync('/usr/bin/apt-get') && BINARIES.some((b) => !existsSync(b))) return 'Slurm is not installed and there is no apt-get to install it';
  return undefined;
}

let installing: Promise<void> | undefined;

/** `apt-get install -y slurmctld slurmd slurm-client munge`, only when something is missing; once per process. */
export function ensureSlurmInstalled(): Promise<void> {
  installing ??= (async () => {
    if (BINARIES.every((b) => existsSync(b))) return;
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    const install = () => run('apt-get', ['install', '-y', '-q', ...PACKAGES], { env, timeout: 10 * 60_000, maxBuffer: 32 * 1024 * 1024 });
    try {
      await install();
    } catch {
      await run('apt-get', ['update', '-q'], { env, timeout: 5 * 60_000, maxBuffer: 32 * 1024 * 1024 });
      await install();
    }
    const missing = BINARIES.filter((b) => !existsSync(b));
    if (missing.length) throw new Error(`installed ${PACKAGES.join(' ')} but ${missing.join(', ')} are still missing`);
  })();
  installing.catch(() => {
    installing = undefined;
  });
  return installing;
}

export interface StartSlurmOptions {
  /** The address other machines (network namespaces) reach slurmctld at: slurm.conf names the controller by it. */
  controllerAddress: string;
  /** GPUs declared for scheduling (there is no real one: `--gres=gpu:N` is then accepted). Default 1, at most 4. */
  gpus?: number;
  /** CPUs of the one node. Default 2: two one-CPU jobs run at once. */
  cpus?: number;
}

export interface RunningSlurm {
  /** Everything lives under it: state, spool, logs, the munge socket, job directories. */
  root: string;
  /** slurm.conf (gres.conf beside it). */
  conf: string;
  mungeSocketDir: string;
  /** A directory for job directories, seen alike by the submitting side and slurmd (the same machine). */
  workDir: string;
  nodeName: string;
  controllerAddress: string;
  controllerPort: number;
  /** A Slurm client command on this machine against this cluster; throws with its output when it fails. */
  command(program: string, args: string[]): string;
  /** `scontrol show job -o ID` as fields; undefined when Slurm does not know the job. */
  job(id: string): Record<string, string> | undefined;
  /** Ids of the jobs Slurm knows by this name, in any state. */
  jobsNamed(name: string): string[];
  logs(): string;
  /** Cancels every job, stops slurmd, slurmctld and munged (by PID) and removes the directory. */
  stop(): Promise<void>;
}

function userIds(name: string): { uid: number; gid: number } {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${name}:`));
  if (!line) throw new Error(`no user ${name} (the munge package makes it)`);
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

/**
 * Starts munged (as the munge user, with a fresh key and its socket in our directory), slurmctld and
 * slurmd (as root, foreground, with `setpriv --pdeathsig` so they cannot outlive the test process),
 * on free ports, and waits until the node is idle. The configuration follows FIELD-NOTES: linuxproc
 * process tracking, no task plugin, cons_tres selection (cores only, so jobs run side by side),
 * `batch_sched_delay=0`, and a GPU declared through gres without a device.
 */
export async function startSlurm(options: StartSlurmOptions): Promise<RunningSlurm> {
  await ensureSlurmInstalled();
  const root = mkdtempSync(join(tmpdir(), 'minik8s-slurm-'));
  // munged runs as the munge user and must reach its directory through ours.
  chmodSync(root, 0o755);
  const started: { p: Started; what: string }[] = [];
  const munge = userIds('munge');
  const mungeDir = join(root, 'munge');
  const workDir = join(root, 'jobs');
  const nodeName = hostname().split('.')[0]!;
  const gpus = Math.min(Math.max(options.gpus ?? 1, 1), STAND_IN_DEVICES.length);
  const cpus = options.cpus ?? 2;
  const stop = async () => {
    for (const { p, what } of started.reverse()) await stopPid(p.pid, { startTime: p.startTime }, what, 10_000).catch(() => {});
    started.length = 0;
    rmSync(root, { recursive: true, force: true });
  };
  try {
    for (const d of ['state', 'spool', 'log', 'jobs']) mkdirSync(join(root, d), { mode: 0o755 });
    mkdirSync(mungeDir, { mode: 0o755 });
    chownSync(mungeDir, munge.uid, munge.gid);
    const key = join(mungeDir, 'munge.key');
    writeFileSync(key, randomBytes(128), { mode: 0o400 });
    chownSync(key, munge.uid, munge.gid);
    const socket = join(mungeDir, 'munge.socket.2');
    const mungeProcess = startProcess({
      command: 'setpriv',
      args: [
        '--pdeathsig',
        'TERM',
        '--reuid',
        String(munge.uid),
        '--regid',
        String(munge.gid),
        '--clear-groups',
        '--',
        '/usr/sbin/munged',
        '--foreground',
        `--socket=${socket}`,
        `--key-file=${key}`,
        `--pid-file=${join(mungeDir, 'munged.pid')}`,
        `--log-file=${join(mungeDir, 'munged.log')}`,
        `--seed-file=${join(mungeDir, 'munged.seed')}`,
      ],
      logFile: join(root, 'log', 'munged.out'),
    });
    started.push({ p: mungeProcess, what: 'munged' });
    await untilReady(mungeProcess, 'munged', () => existsSync(socket), 20_000);

    const [ctldPort, slurmdPort] = [await freePort(), await freePort()];
    const conf = join(root, 'slurm.conf');
    const memoryMb = Math.floor(totalmem() / 1024 / 1024 / 2);
    writeFileSync(
      conf,
      [
        `# A one-machine Slurm for minik8s tests, in ${root}.`,
        `ClusterName=mk8s${randomBytes(2).toString('hex')}`,
        `SlurmctldHost=${nodeName}(${options.controllerAddress})`,
        `SlurmctldPort=${ctldPort}`,
        `SlurmdPort=${slurmdPort}`,
        'AuthType=auth/munge',
        'CredType=cred/munge',
        `AuthInfo=socket=${socket}`,
        'SlurmUser=root',
        'SlurmdUser=root',
        `StateSaveLocation=${join(root, 'state')}`,
        `SlurmdSpoolDir=${join(root, 'spool')}`,
        `SlurmctldPidFile=${join(root, 'slurmctld.pid')}`,
        `SlurmdPidFile=${join(root, 'slurmd.pid')}`,
        `SlurmctldLogFile=${join(root, 'log', 'slurmctld.log')}`,
        `SlurmdLogFile=${join(root, 'log', 'slurmd.log')}`,
        'ProctrackType=proctrack/linuxproc',
        'TaskPlugin=task/none',
        'SelectType=select/cons_tres',
        'SelectTypeParameters=CR_Core',
        'SchedulerParameters=batch_sched_delay=0',
        'ReturnToService=2',
        'MpiDefault=none',
        'JobCompType=jobcomp/none',
        'AccountingStorageType=accounting_storage/none',
        'GresTypes=gpu',
        `NodeName=${nodeName} NodeAddr=127.0.0.1 CPUs=${cpus} RealMemory=${memoryMb} Gres=gpu:${gpus} State=UNKNOWN`,
        `PartitionName=debug Nodes=${nodeName} Default=YES MaxTime=INFINITE State=UP`,
        '',
      ].join('\n'),
    );
    // slurmd counts a GPU per device file; harmless character devices stand in (there is no real GPU).
    writeFileSync(join(root, 'gres.conf'), `NodeName=${nodeName} Name=gpu File=${STAND_IN_DEVICES.slice(0, gpus).join(',')}\n`);
    const env = { ...process.env, SLURM_CONF: conf };
    const ctld = startProcess({
      command: 'setpriv',
      args: ['--pdeathsig', 'TERM', '--', '/usr/sbin/slurmctld', '-D', '-f', conf],
      logFile: join(root, 'log', 'slurmctld.out'),
      env,
    });
    started.push({ p: ctld, what: 'slurmctld' });
    const slurmd = startProcess({
      command: 'setpriv',
      args: ['--pdeathsig', 'TERM', '--', '/usr/sbin/slurmd', '-D', '-f', conf, '-N', nodeName],
      logFile: join(root, 'log', 'slurmd.out'),
      env,
    });
    started.push({ p: slurmd, what: 'slurmd' });

    const command = (program: string, args: string[]): string => {
      const r = spawnSync(program, args, { env, encoding: 'utf8', timeout: 60_000 });
      if (r.status !== 0) throw new Error(`${program} ${args.join(' ')} exited ${r.status}: ${r.stderr}${r.stdout}`);
      return r.stdout;
    };
    await untilReady(
      ctld,
      'slurmctld and slurmd with the node idle',
      () => {
        const r = spawnSync('sinfo', ['-h', '-N', '-o', '%T'], { env, encoding: 'utf8', timeout: 10_000 });
        return r.status === 0 && r.stdout.trim() === 'idle' ? true : undefined;
      },
      60_000,
    );
    if (slurmd.exited()) throw new Error(`slurmd exited at start:\n${slurmd.output()}`);

    const slurm: RunningSlurm = {
      root,
      conf,
      mungeSocketDir: mungeDir,
      workDir,
      nodeName,
      controllerAddress: options.controllerAddress,
      controllerPort: ctldPort,
      command,
      job(id) {
        const r = spawnSync('scontrol', ['show', 'job', '-o', id], { env, encoding: 'utf8', timeout: 30_000 });
        if (r.status !== 0) {
          if (/Invalid job id/.test(r.stderr)) return undefined;
          throw new Error(`scontrol show job ${id}: ${r.stderr}`);
        }
        const fields: Record<string, string> = {};
        for (const m of r.stdout.matchAll(/(?:^|\s)([A-Za-z][A-Za-z0-9_/:]*)=(\S*)/g)) fields[m[1]!] ??= m[2]!;
        return fields;
      },
      jobsNamed(name) {
        return command('squeue', ['-h', '-t', 'all', `--name=${name}`, '-o', '%i'])
          .split('\n')
          .map((l) => l.trim())
          .filter(Boolean);
      },
      logs() {
        const read = (f: string) => {
          try {
            return readFileSync(join(root, 'log', f), 'utf8').slice(-4000);
          } catch {
            return '';
          }
        };
        return `slurmctld:\n${read('slurmctld.out')}\nslurmd:\n${read('slurmd.out')}`;
      },
      async stop() {
        // Jobs first: their slurmstepd processes are not slurmd's children and would outlive it.
        spawnSync('scancel', ['--full', '--user=root'], { env, timeout: 30_000 });
        await waitFor(
          () => {
            const r = spawnSync('squeue', ['-h', '-o', '%i'], { env, encoding: 'utf8', timeout: 10_000 });
            return r.status !== 0 || r.stdout.trim() === '';
          },
          { timeoutMs: 60_000, intervalMs: 250, description: 'every Slurm job to end' },
        ).catch(() => {});
        await stop();
      },
    };
    return slurm;
  } catch (err) {
    const logs = ['slurmctld.out', 'slurmd.out', 'munged.out']
      .map((f) => {
        try {
          return `${f}:\n${readFileSync(join(root, 'log', f), 'utf8').slice(-2000)}`;
        } catch {
          return '';
        }
      })
      .join('\n');
    await stop();
    throw new Error(`${err instanceof Error ? err.message : String(err)}\n${logs}`);
  }
}

export interface LoginNode {
  address: string;
  port: number;
  user: string;
  /** The private key users log in with (OpenSSH format) and a known_hosts line for the node's host key. */
  privateKey: string;
  knownHosts: string;
  stop(): Promise<void>;
}

/** `apt-get install -y openssh-server`, only when sshd is missing. */
export async function ensureSshdInstalled(): Promise<void> {
  if (existsSync('/usr/sbin/sshd')) return;
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  try {
    await run('apt-get', ['install', '-y', '-q', 'openssh-server'], { env, timeout: 10 * 60_000, maxBuffer: 32 * 1024 * 1024 });
  } catch {
    await run('apt-get', ['update', '-q'], { env, timeout: 5 * 60_000, maxBuffer: 32 * 1024 * 1024 });
    await run('apt-get', ['install', '-y', '-q', 'openssh-server'], { env, timeout: 10 * 60_000, maxBuffer: 32 * 1024 * 1024 });
  }
}

/**
 * A login node for `ssh` mode: an sshd of our own (by PID, its own host key, config and port) on
 * `address`, letting root in with a fresh key only, and giving sessions this Slurm's SLURM_CONF, as
 * a real login node's environment names its cluster.
 */
export async function startLoginNode(slurm: RunningSlurm, address: string): Promise<LoginNode> {
  await ensureSshdInstalled();
  const dir = join(slurm.root, 'login');
  mkdirSync(dir, { mode: 0o700 });
  // sshd's privilege separation needs this directory (the package's service would make it).
  mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'minik8s test host', '-f', join(dir, 'host_key')]);
  await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'minik8s test user', '-f', join(dir, 'user_key')]);
  writeFileSync(join(dir, 'authorized_keys'), readFileSync(join(dir, 'user_key.pub')), { mode: 0o600 });
  const port = await freePort();
  const config = join(dir, 'sshd_config');
  writeFileSync(
    config,
    [
      `Port ${port}`,
      `ListenAddress ${address}`,
      `HostKey ${join(dir, 'host_key')}`,
      `PidFile ${join(dir, 'sshd.pid')}`,
      `AuthorizedKeysFile ${join(dir, 'authorized_keys')}`,
      'PermitRootLogin prohibit-password',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'UsePAM no',
      // Our files live under /tmp, which is writable by all: sshd's ownership checks would refuse the key.
      'StrictModes no',
      `SetEnv SLURM_CONF=${slurm.conf}`,
      '',
    ].join('\n'),
  );
  const sshd = startProcess({
    command: 'setpriv',
    args: ['--pdeathsig', 'TERM', '--', '/usr/sbin/sshd', '-D', '-e', '-f', config],
    logFile: join(dir, 'sshd.log'),
  });
  await untilReady(
    sshd,
    'sshd',
    async () => {
      try {
        await run('ssh-keyscan', ['-p', String(port), '-T', '2', address], { timeout: 10_000 });
        return true;
      } catch {
        return undefined;
      }
    },
    30_000,
  );
  const hostKey = readFileSync(join(dir, 'host_key.pub'), 'utf8').trim().split(' ').slice(0, 2).join(' ');
  return {
    address,
    port,
    user: 'root',
    privateKey: readFileSync(join(dir, 'user_key'), 'utf8'),
    knownHosts: `[${address}]:${port} ${hostKey}\n`,
    stop: () => stopPid(sshd.pid, { startTime: sshd.startTime }, 'sshd', 10_000),
  };
}
