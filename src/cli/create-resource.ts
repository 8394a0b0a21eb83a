// `minik8s create namespace|secret generic NAME`: builds one object from flags, as kubectl create's subcommands do.
import { namespaceKind } from '../core/api/namespace.js';
import { secretKind } from '../core/api/secret.js';
import { CliError } from './cli-error.js';
import { runCreateConfigMap } from './create-configmap.js';
import type { CliContext } from './context.js';
import { readKeySources } from './key-sources.js';
import { objectRef } from './printers.js';

export interface CreateResourceArgs {
  /** The words after `create`: `namespace NAME`, `secret generic NAME`. */
  words: string[];
  fromLiteral: string[];
  fromFile: string[];
  type?: string;
}

const KEY = /^[-._a-zA-Z0-9]+$/;

function checkKey(key: string): string {
  if (!KEY.test(key))
    throw new CliError(`"${key}" is not a valid key name for a Secret: a valid config key must consist of alphanumeric characters, '-', '_' or '.'`);
  return key;
}

/** --from-literal and --from-file into a Secret's data (base64), kubectl's errors for duplicates. */
export async function secretData(fromLiteral: readonly string[], fromFile: readonly string[]): Promise<Record<string, string>> {
  const data: Record<string, string> = {};
  const add = (key: string, value: Buffer) => {
    if (key in data) throw new CliError(`cannot add key ${key}, another key by that name already exists`);
    data[checkKey(key)] = value.toString('base64');
  };
  await readKeySources(fromLiteral, fromFile, add);
  return data;
}

export async function runCreateResource(ctx: CliContext, args: CreateResourceArgs): Promise<number> {
  const [what, ...rest] = args.words;
  const one = (words: string[], usage: string): string => {
    if (words.length !== 1) throw new CliError(`exactly one NAME is required, got ${words.length}\nSee 'minik8s create ${usage} -h' for help and examples`);
    return words[0]!;
  };
  switch (what) {
    case 'namespace':
    case 'ns': {
      const name = one(rest, 'namespace');
      const created = await ctx.client().create(namespaceKind, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
      ctx.out(`${objectRef(namespaceKind, created)} created\n`);
      return 0;
    }
    case 'secret': {
      const [sub, ...names] = rest;
      if (sub !== 'generic') throw new CliError(`minik8s create secret supports generic only${sub ? `, not "${sub}"` : ''}`);
      const name = one(names, 'secret generic');
      const data = await secretData(args.fromLiteral, args.fromFile);
      const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: ctx.namespace }, type: args.type ?? 'Opaque', data };
      const created = await ctx.client().create(secretKind, secret, { namespace: ctx.namespace });
      ctx.out(`${objectRef(secretKind, created)} created\n`);
      return 0;
    }
    case 'configmap':
    case 'cm':
      return runCreateConfigMap(ctx, one(rest, 'configmap'), args);
    default:
      throw new CliError(`unknown create subcommand "${what}": use -f FILE, or one of namespace, secret generic, configmap, job, cronjob, token`);
  }
}
