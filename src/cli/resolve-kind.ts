// Turns what users type for a resource (`po`, `pods,svc`, `pod/web`, `deployments.apps`) into kinds and names.
import type { KindDefinition } from '../core/api/kind.js';
import { kindByName } from '../core/api/registry.js';
import { CliError } from './cli-error.js';

/** A kind by any of its names, or kubectl's error for an unknown type. */
export function resolveKind(name: string): KindDefinition {
  const def = kindByName(name);
  if (!def) throw new CliError(`the server doesn't have a resource type "${name}"`);
  return def;
}

export interface ResourceTarget {
  def: KindDefinition;
  /** Empty: every object of the kind. */
  names: string[];
}

export interface ResourceArgs {
  targets: ResourceTarget[];
  /** The TYPE/NAME form was used: kubectl then prints names as `pod/web`. */
  typeNameForm: boolean;
}

/**
 * Parses `TYPE[,TYPE...] [NAME...]` or `TYPE/NAME [TYPE/NAME...]`, kubectl's two forms.
 * With several types and names, each name is looked up in each type.
 */
export function parseResourceArgs(args: readonly string[]): ResourceArgs {
  if (args.length === 0)
    throw new CliError('You must specify the type of resource to get. Use "minik8s api-resources" for a complete list of supported resources.');
  if (args[0]!.includes('/')) {
    const byKind = new Map<KindDefinition, string[]>();
    for (const arg of args) {
      const slash = arg.indexOf('/');
      if (slash <= 0 || slash === arg.length - 1) {
        throw new CliError(`arguments in resource/name form must have a single resource and name`);
      }
      const def = resolveKind(arg.slice(0, slash));
      byKind.set(def, [...(byKind.get(def) ?? []), arg.slice(slash + 1)]);
    }
    return { targets: [...byKind].map(([def, names]) => ({ def, names })), typeNameForm: true };
  }
  const [types, ...names] = args;
  if (names.some((n) => n.includes('/'))) {
    throw new CliError(
      `there is no need to specify a resource type as a separate argument when passing arguments in resource/name form (e.g. 'minik8s get resource/<resource_name>' instead of 'minik8s get resource resource/<resource_name>')`,
    );
  }
  const defs: KindDefinition[] = [];
  for (const t of types!.split(',').filter(Boolean)) {
    const def = resolveKind(t);
    if (!defs.includes(def)) defs.push(def);
  }
  if (defs.length === 0) throw new CliError(`the server doesn't have a resource type "${types}"`);
  return { targets: defs.map((def) => ({ def, names })), typeNameForm: false };
}
