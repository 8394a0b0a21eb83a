// The CLI's view of custom kinds: when a type or manifest names a kind it does not know, it reads the server's CRDs once and adds their kinds.
import { crdEstablished, crdKind, type CustomResourceDefinition } from '../core/api/crd.js';
import { customKinds } from '../core/api/crd-kinds.js';
import { kindByName, setAddedKinds } from '../core/api/registry.js';
import type { CliContext } from './context.js';

let loaded: Promise<void> | undefined;

/**
 * Adds the kinds of the server's Established CRDs to this process's registry (once per run).
 * A user who may not list CRDs keeps the built-in kinds: the unknown type is then reported as before.
 */
export function loadCustomKinds(ctx: Pick<CliContext, 'client'>): Promise<void> {
  loaded ??= (async () => {
    try {
      const { items } = await ctx.client().list(crdKind);
      for (const crd of items as CustomResourceDefinition[]) if (crdEstablished(crd)) setAddedKinds(crd.metadata.name!, customKinds(crd));
    } catch {
      // No access to CRDs (or none served): only built-in kinds.
    }
  })();
  return loaded;
}

/** Loads custom kinds when one of `resources` (`TYPE[,TYPE] NAME` or `TYPE/NAME` arguments) names an unknown type. */
export async function customKindsFor(ctx: Pick<CliContext, 'client'>, resources: readonly string[]): Promise<void> {
  const types = resources[0]?.includes('/') ? resources.map((r) => r.slice(0, r.indexOf('/'))) : (resources[0] ?? '').split(',').filter(Boolean);
  if (types.some((t) => !kindByName(t))) await loadCustomKinds(ctx);
}
