// `minik8s get`: the command line; the work is in ../get.ts.
import type { LeafCommand } from './command.js';
import { headersFlag, str, strings } from './flags.js';

export const getCommand: LeafCommand = {
  command: 'get [resources..]',
  describe: 'Display one or many objects',
  builder: (y) =>
    y
      .positional('resources', { type: 'string', array: true, describe: 'TYPE[,TYPE...] [NAME...] or TYPE/NAME...' })
      .option('o', {
        alias: 'output',
        type: 'string',
        requiresArg: true,
        describe: 'wide, yaml, json, name, jsonpath=TEMPLATE or custom-columns=HEADER:PATH,...',
      })
      .option('l', { alias: 'selector', type: 'string', requiresArg: true, describe: 'label selector, e.g. app=web,tier!=db' })
      .option('field-selector', { type: 'string', requiresArg: true, describe: 'field selector, e.g. spec.nodeName=node1' })
      .option('A', { alias: 'all-namespaces', type: 'boolean', describe: 'list across all namespaces' })
      .option('w', { alias: 'watch', type: 'boolean', describe: 'after listing, watch for changes' })
      .option('show-labels', { type: 'boolean', describe: 'add a LABELS column' })
      .option('headers', headersFlag),
  run: async (ctx, a) =>
    (await import('../get.js')).runGet(ctx, {
      resources: strings(a.resources),
      output: str(a.o),
      selector: str(a.l),
      fieldSelector: str(a['field-selector']),
      allNamespaces: Boolean(a.A),
      watch: Boolean(a.w),
      showLabels: Boolean(a['show-labels']),
      noHeaders: a.headers === false,
    }),
};
