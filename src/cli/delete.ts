// `minik8s delete KIND NAME... | -f FILE`: deletes objects, with kubectl's --cascade policies.
import type { KindDefinition } from '../core/api/kind.js';
import { NotFoundError } from '../core/errors.js';
import type { PropagationPolicy } from '../core/client/api-client.js';
import { CliError, ConnectionError, formatError } from './cli-error.js';
import type { CliContext } from './context.js';
import { manifestNamespace, readManifests } from './manifests.js';
import { kindRef } from './printers.js';
import { parseResourceArgs } from './resolve-kind.js';

export interface DeleteArgs {
  resources: string[];
  filename?: string[];
  recursive?: boolean;
  cascade?: string;
  selector?: string;
  all?: boolean;
  ignoreNotFound?: boolean;
}

/** `--cascade`: kubectl's words, plus its older true/false. */
export function propagationPolicyOf(cascade: string | undefined): PropagationPolicy | undefined {
  switch ((cascade ?? '').toLowerCase()) {
    case '': return undefined;
    case 'background': case 'true': return 'Background';
    case 'foreground': return 'Foreground';
    case 'orphan': case 'false': return 'Orphan';
    default: throw new CliError(`invalid cascade value (${cascade}). Must be "background", "foreground", or "orphan"`);
  }
}

interface Victim {
  def: KindDefinition;
  name: string;
  namespace?: string;
}

async function victimsFromArgs(ctx: CliContext, args: DeleteArgs): Promise<Victim[]> {
  if (args.filename?.length) {
    if (args.resources.length) throw new CliError('resource(s) were provided, but no name was specified; use either -f or resource arguments, not both');
    const manifests = await readManifests(args.filename, { stdin: ctx.stdin, recursive: args.recursive, verb: 'delete' });
    return manifests.map((m) => {
      if (!m.object.metadata.name) throw new CliError(`resource name may not be empty (from "${m.source}")`);
      return { def: m.def, name: m.object.metadata.name, namespace: manifestNamespace(m, ctx) };
    });
  }
  if (args.resources.length === 0) throw new CliError('You must provide one or more resources by argument or filename.');
  const { targets } = parseResourceArgs(args.resources);
  const victims: Victim[] = [];
  for (const { def, names } of targets) {
    const namespace = def.namespaced ? ctx.namespace : undefined;
    if (names.length > 0) {
      if (args.selector || args.all) throw new CliError('name cannot be provided when a selector or --all is specified');
      victims.push(...names.map((name) => ({ def, name, namespace })));
    } else if (args.selector || args.all) {
      const list = await ctx.client().list(def, { namespace, labelSelector: args.selector });
      victims.push(...list.items.map((o) => ({ def, name: o.metadata.name ?? '', namespace })));
    } else {
      throw new CliError('resource(s) were provided, but no name was specified');
    }
  }
  return victims;
}

export async function runDelete(ctx: CliContext, args: DeleteArgs): Promise<number> {
  const propagationPolicy = propagationPolicyOf(args.cascade);
  const victims = await victimsFromArgs(ctx, args);
  if (victims.length === 0) {
    // Only a selector or --all can match nothing; kubectl says so on stderr and succeeds.
    ctx.err('No resources found\n');
    return 0;
  }
  let failed = false;
  for (const { def, name, namespace } of victims) {
    try {
      await ctx.client().delete(def, { name, namespace }, { propagationPolicy });
      ctx.out(`${kindRef(def)} "${name}" deleted\n`);
    } catch (err) {
      if (err instanceof ConnectionError) throw err;
      if (err instanceof NotFoundError && args.ignoreNotFound) continue;
      failed = true;
      ctx.err(formatError(err));
    }
  }
  return failed ? 1 : 0;
}
