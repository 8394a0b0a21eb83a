// `minik8s api-resources`: the kinds this build knows, as kubectl lists them.
import { apiVersionOf, type KindDefinition } from '../core/api/kind.js';
import { kinds } from '../core/api/registry.js';
import type { CliContext } from './context.js';
import { alignColumns } from './printers.js';

export interface ApiResourcesArgs {
  /** true: only namespaced kinds; false: only cluster-scoped ones. */
  namespaced?: boolean;
  output?: string;
}

/** Core group first, then groups by name; resources by name within a group (kubectl's order). */
export function sortKinds(list: readonly KindDefinition[]): KindDefinition[] {
  return [...list].sort((a, b) => a.group.localeCompare(b.group) || a.resource.localeCompare(b.resource));
}

export function apiResourcesTable(list: readonly KindDefinition[]): string {
  const rows = sortKinds(list).map((k) => [k.resource, k.shortNames.join(','), apiVersionOf(k), String(k.namespaced), k.kind]);
  return alignColumns([['NAME', 'SHORTNAMES', 'APIVERSION', 'NAMESPACED', 'KIND'], ...rows]);
}

export async function runApiResources(ctx: CliContext, args: ApiResourcesArgs): Promise<number> {
  const list = kinds.filter((k) => args.namespaced === undefined || k.namespaced === args.namespaced);
  if (args.output === 'name') {
    ctx.out(
      sortKinds(list)
        .map((k) => `${k.resource}${k.group ? `.${k.group}` : ''}\n`)
        .join(''),
    );
  } else if (args.output !== undefined && args.output !== 'wide') {
    ctx.err(`error: --output ${args.output} is not available in api-resources\n`);
    return 1;
  } else {
    ctx.out(apiResourcesTable(list));
  }
  return 0;
}
