// `minik8s port-forward pod/NAME [LOCAL:]REMOTE...`: the command line; the work is in ../port-forward.ts.
import type { LeafCommand } from './command.js';
import { str, strings } from './flags.js';

export const portForwardCommand: LeafCommand = {
  command: 'port-forward [pod] [ports..]',
  describe: 'Forward local ports to a pod: minik8s port-forward pod/NAME [LOCAL:]REMOTE...',
  builder: (y) =>
    y
      .positional('pod', { type: 'string', describe: 'POD or pod/POD' })
      .positional('ports', { type: 'string', array: true, describe: 'LOCAL:REMOTE, or REMOTE for the same port locally' })
      .option('address', { type: 'string', requiresArg: true, default: '127.0.0.1', describe: 'the local address to listen on' }),
  run: async (ctx, a) => (await import('../port-forward.js')).runPortForward(ctx, { pod: str(a.pod), ports: strings(a.ports), address: str(a.address) }),
};
