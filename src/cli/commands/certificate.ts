// `minik8s certificate issue`: the command line; the work is in ../certificate.ts.
import type { GroupCommand, LeafCommand } from './command.js';
import { str } from './flags.js';

const issueCommand: LeafCommand = {
  command: 'issue <name>',
  describe: 'Sign a client certificate for a user with the cluster CA and print a kubeconfig using it (run on the master; grant rights with a RoleBinding)',
  builder: (y) =>
    y
      .positional('name', { type: 'string', describe: 'the user name (the certificate CN)' })
      .option('group', { type: 'string', array: true, requiresArg: true, describe: 'a group the user belongs to (the certificate O; repeatable)' })
      .option('days', { type: 'number', requiresArg: true, describe: 'validity in days (default 365)' })
      .option('o', { alias: 'output', type: 'string', requiresArg: true, default: 'kubeconfig', describe: 'output format: kubeconfig' })
      .option('data-dir', { type: 'string', requiresArg: true, default: '/var/lib/minik8s', describe: "the master's state directory (its pki/ca.key signs)" })
      .option('server', { type: 'string', requiresArg: true, describe: "the API server URL to write (default: the admin kubeconfig's)" }),
  run: async (ctx, a) =>
    (await import('../certificate.js')).runCertificateIssue(ctx, {
      name: String(a.name),
      groups: ((a.group as unknown[] | undefined) ?? []).map(String),
      days: a.days === undefined ? undefined : Number(a.days),
      output: str(a.o),
      dataDir: str(a['data-dir']) ?? '/var/lib/minik8s',
      server: str(a.server),
    }),
};

export const certificateCommand: GroupCommand = {
  command: 'certificate',
  describe: 'Issue user client certificates: minik8s certificate issue NAME --group G -o kubeconfig',
  subcommands: [issueCommand],
  required: 'minik8s certificate needs a command: issue',
};
