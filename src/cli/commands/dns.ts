// `minik8s dns host enable|disable`: the command lines; the work is in ../dns-host.ts.
import type { GroupCommand, LeafCommand } from './command.js';
import { str } from './flags.js';

const DEFAULT_DATA_DIR = '/var/lib/minik8s';

const hostFlags: LeafCommand['builder'] = (y) =>
  y
    .option('data-dir', {
      type: 'string',
      requiresArg: true,
      default: DEFAULT_DATA_DIR,
      describe: "the worker's state directory (it records its cluster DNS there; the original resolver configuration is kept there)",
    })
    .option('resolv-conf', { type: 'string', requiresArg: true, default: '/etc/resolv.conf', describe: 'the resolver configuration to change' })
    .option('nameserver', { type: 'string', requiresArg: true, describe: "the cluster DNS address (default: the worker's)" });

const hostArgs = (a: Record<string, unknown>) => ({
  dataDir: str(a['data-dir']) ?? DEFAULT_DATA_DIR,
  resolvConf: str(a['resolv-conf']),
  nameserver: str(a.nameserver),
});

const enableCommand: LeafCommand = {
  command: 'enable',
  describe: "Resolve cluster names and DNS hosts on this machine too: its resolver asks the node's cluster DNS first (run as root on a worker)",
  builder: hostFlags,
  run: async (ctx, a) => (await import('../dns-host.js')).runDnsHost(ctx, { action: 'enable', ...hostArgs(a) }),
};

const disableCommand: LeafCommand = {
  command: 'disable',
  describe: "Give this machine's resolver back its original configuration",
  builder: hostFlags,
  run: async (ctx, a) => (await import('../dns-host.js')).runDnsHost(ctx, { action: 'disable', ...hostArgs(a) }),
};

const hostCommand: GroupCommand = {
  command: 'host',
  describe: "The machine's own resolver: minik8s dns host enable|disable",
  subcommands: [enableCommand, disableCommand],
  required: 'minik8s dns host needs a command: enable or disable',
};

export const dnsCommand: GroupCommand = {
  command: 'dns',
  describe: 'Cluster DNS on the nodes: minik8s dns host enable|disable',
  subcommands: [hostCommand],
  required: 'minik8s dns needs a command: host',
};
