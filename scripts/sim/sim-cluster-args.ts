// The command line of scripts/sim-cluster.sh (up N, down, status, env) and the names a cluster's parts get: pure, so both are table-tested.
import { parseArgs } from 'node:util';
import type { MachineSpec } from './netns-cluster.js';

export const USAGE = `Usage: sudo scripts/sim-cluster.sh COMMAND [--name NAME]

  up N       make N worker machines (network namespaces on a bridge, each with its own dockerd and
             minik8s worker) and a master on the host, and leave them running
  down       stop and remove everything up made
  status     what runs
  restart-master
             stop the master (SIGTERM) and start it again with the same flags, data and ports;
             the workers keep their pods and reconnect on their own
  env        print export lines for the CLI: eval "$(sudo scripts/sim-cluster.sh env)"

Flags:
  --name NAME          the cluster's name (default sim; at most 7 lower-case letters or digits)
  --no-images          (up) do not seed the master's registry with the base images
  --master-arg=FLAG    (up) one more flag for the master (repeatable)
  --worker-arg=FLAG    (up) one more flag for every worker, e.g. --worker-arg=--labels=zone=a
`;

/** At most this many machines in one simulated cluster. */
export const MAX_SIM_MACHINES = 20;

export class SimUsageError extends Error {}

export type SimCommand =
  | { command: 'up'; name: string; count: number; seedImages: boolean; masterArgs: string[]; workerArgs: string[] }
  | { command: 'down' | 'status' | 'env' | 'restart-master'; name: string }
  | { command: 'help' };

/** The flags and positionals of the arguments; parseArgs's complaints become SimUsageError. */
function parseFlags(argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        name: { type: 'string' },
        'no-images': { type: 'boolean' },
        'master-arg': { type: 'string', multiple: true },
        'worker-arg': { type: 'string', multiple: true },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    throw new SimUsageError((err as Error).message);
  }
}

/** Parses the arguments after the script's name; throws SimUsageError for anything it does not understand. */
export function parseSimArgs(argv: string[]): SimCommand {
  const { values, positionals } = parseFlags(argv);
  const [command, ...rest] = positionals;
  if (values.help || command === undefined || command === 'help') return { command: 'help' };
  const name = values.name ?? 'sim';
  if (!/^[a-z][a-z0-9]{0,6}$/.test(name)) {
    throw new SimUsageError(`--name "${name}" must be 1 to 7 lower-case letters or digits, starting with a letter (it is part of interface names)`);
  }
  const upOnly = (['no-images', 'master-arg', 'worker-arg'] as const).filter((k) => values[k] !== undefined);
  if (command !== 'up' && upOnly.length > 0) throw new SimUsageError(`--${upOnly[0]} goes with up only`);
  switch (command) {
    case 'up': {
      if (rest.length !== 1) throw new SimUsageError('up needs the number of machines: up N');
      const count = Number(rest[0]);
      if (!/^\d+$/.test(rest[0]!) || count < 1 || count > MAX_SIM_MACHINES) {
        throw new SimUsageError(`the number of machines must be 1 to ${MAX_SIM_MACHINES}, not "${rest[0]}"`);
      }
      return {
        command,
        name,
        count,
        seedImages: !values['no-images'],
        masterArgs: values['master-arg'] ?? [],
        workerArgs: values['worker-arg'] ?? [],
      };
    }
    case 'down':
    case 'status':
    case 'env':
    case 'restart-master':
      if (rest.length > 0) throw new SimUsageError(`${command} takes no arguments but flags (got "${rest.join(' ')}")`);
      return { command, name };
    default:
      throw new SimUsageError(`unknown command "${command}": up N, down, status, env or restart-master`);
  }
}

/** The names of a cluster's parts: the bridge mk8s-NAME; machine i is node NAME-i, netns mk8s-NAME-i, host veth mk8s-NAME-i. */
export function simClusterNames(name: string, count: number): { bridge: string; machines: MachineSpec[] } {
  return {
    bridge: `mk8s-${name}`,
    machines: Array.from({ length: count }, (_, i) => {
      const nodeName = `${name}-${i + 1}`;
      return { name: nodeName, nodeName, netns: `mk8s-${nodeName}`, veth: `mk8s-${nodeName}` };
    }),
  };
}
