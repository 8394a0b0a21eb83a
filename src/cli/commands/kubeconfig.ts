// `minik8s kubeconfig`: prints the master's DATA_DIR/admin.kubeconfig (for kubectl or KUBECONFIG), as `k3s kubectl config view --raw` gives it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LeafCommand } from './command.js';
import { str } from './flags.js';

export const kubeconfigCommand: LeafCommand = {
  command: 'kubeconfig',
  describe: "Print the admin kubeconfig the master wrote (DATA_DIR/admin.kubeconfig; holds the admin's key: keep it private)",
  builder: (y) => y.option('data-dir', { type: 'string', requiresArg: true, default: '/var/lib/minik8s', describe: "the master's state directory" }),
  run: async (ctx, a) => {
    const path = join(str(a['data-dir']) ?? '/var/lib/minik8s', 'admin.kubeconfig');
    try {
      ctx.out(readFileSync(path, 'utf8'));
      return 0;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      const why =
        code === 'ENOENT'
          ? 'no such file (is the master started, without --insecure-http?)'
          : code === 'EACCES'
            ? 'permission denied (try sudo)'
            : (err as Error).message;
      ctx.err(`error: cannot read ${path}: ${why}\n`);
      return 1;
    }
  },
};
