// The objects a mutating verb (label, annotate, patch, set) acts on: TYPE NAME..., TYPE/NAME..., or TYPE with -l / --all.
import type { KindDefinition } from '../core/api/kind.js';
import type { KubeObject } from '../core/api/meta.js';
import { CliError } from './cli-error.js';
import type { CliContext } from './context.js';
import { parseResourceArgs } from './resolve-kind.js';

export interface Target {
  def: KindDefinition;
  obj: KubeObject;
}

export interface TargetArgs {
  resources: readonly string[];
  selector?: string;
  all?: boolean;
}

/** Reads every object the arguments name, in the order named; a missing one is the server's NotFound. */
export async function fetchTargets(ctx: CliContext, args: TargetArgs): Promise<Target[]> {
  const { targets } = parseResourceArgs(args.resources);
  const out: Target[] = [];
  for (const { def, names } of targets) {
    const namespace = def.namespaced ? ctx.namespace : undefined;
    if (names.length > 0) {
      if (args.selector) throw new CliError('name cannot be provided when a selector is specified');
      for (const name of names) out.push({ def, obj: await ctx.client().get(def, { namespace, name }) });
    } else if (args.selector !== undefined || args.all) {
      const list = await ctx.client().list(def, { namespace, labelSelector: args.selector || undefined });
      for (const obj of list.items) out.push({ def, obj });
    } else {
      throw new CliError('resource(s) were provided, but no name was specified');
    }
  }
  return out;
}
