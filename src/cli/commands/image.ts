// `minik8s image import`: the command line; the work is in ../image.ts.
import type { GroupCommand, LeafCommand } from './command.js';
import { str } from './flags.js';

const importCommand: LeafCommand = {
  command: 'import [file] [name]',
  describe: "Load a docker save tarball or a root filesystem tar and push it to the cluster's registry",
  builder: (y) =>
    y
      .positional('file', { type: 'string', describe: 'FILE.tar (docker save output, or a tar of a root filesystem; .tar.gz too)' })
      .positional('name', { type: 'string', describe: 'NAME[:TAG] for the image (default tag latest)' })
      .option('registry', {
        type: 'string',
        requiresArg: true,
        describe: "the registry HOST:PORT (default: the API server's host, port 5000; or $MINIK8S_REGISTRY)",
      }),
  run: async (ctx, a) => (await import('../image.js')).runImageImport(ctx, { file: str(a.file), name: str(a.name), registry: str(a.registry) }),
};

export const imageCommand: GroupCommand = {
  command: 'image',
  describe: "Manage images in the cluster's registry: minik8s image import FILE.tar NAME[:TAG]",
  subcommands: [importCommand],
  required: 'minik8s image needs a command: import',
};
