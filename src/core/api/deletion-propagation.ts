// Deletion propagation: which garbage-collector finalizers a DELETE puts on an owner (foreground, orphan) and which kinds take part.
import type { KindDefinition } from './kind.js';
import { deploymentKind } from './deployment.js';
import { functionKind } from './function.js';
import { functionVersionKind } from './function-version.js';
import { gpuJobKind } from './gpujob.js';
import { podKind } from './pod.js';
import { replicaSetKind } from './replicaset.js';

export type PropagationPolicy = 'Background' | 'Foreground' | 'Orphan';

/** Held by an owner deleted in the foreground until its blocking dependents are gone. */
export const FOREGROUND_FINALIZER = 'foregroundDeletion';
/** Held by an owner deleted with Orphan until its dependents no longer point at it. */
export const ORPHAN_FINALIZER = 'orphan';

/**
 * The kinds the garbage collector watches. `owner`: objects of the kind may own others, so a
 * DELETE's propagation policy means something for them; kinds that own nothing are removed at
 * once whatever the policy (a finalizer on them would only wait for a collector round trip).
 * Adding a kind: one line here.
 */
export const GARBAGE_COLLECTED_KINDS: readonly { def: KindDefinition; owner: boolean }[] = [
  { def: deploymentKind, owner: true },
  { def: replicaSetKind, owner: true },
  { def: podKind, owner: false },
  { def: functionKind, owner: true },
  { def: functionVersionKind, owner: false },
  { def: gpuJobKind, owner: true },
];

export function ownsDependents(def: KindDefinition): boolean {
  return GARBAGE_COLLECTED_KINDS.some((k) => k.def === def && k.owner);
}

/** The policy a DELETE asks for: propagationPolicy, else the deprecated orphanDependents, else the default (Background, as for apps/v1). */
export function effectivePolicy(options: { propagationPolicy?: PropagationPolicy; orphanDependents?: boolean }): PropagationPolicy | undefined {
  if (options.propagationPolicy) return options.propagationPolicy;
  if (options.orphanDependents === true) return 'Orphan';
  if (options.orphanDependents === false) return 'Background';
  return undefined;
}

/**
 * The finalizers an owner has after a DELETE with `policy`: Foreground adds foregroundDeletion,
 * Orphan adds orphan (each dropping the other); Background drops both. No policy keeps what the
 * object already asks for (an earlier DELETE's choice, or an `orphan` finalizer set by hand), as
 * Kubernetes does; with neither, that is Background.
 */
export function finalizersForDeletion(current: readonly string[] | undefined, policy: PropagationPolicy | undefined): string[] {
  const finalizers = [...(current ?? [])];
  if (policy === undefined) return finalizers;
  const others = finalizers.filter((f) => f !== FOREGROUND_FINALIZER && f !== ORPHAN_FINALIZER);
  if (policy === 'Foreground') return [...others, FOREGROUND_FINALIZER];
  if (policy === 'Orphan') return [...others, ORPHAN_FINALIZER];
  return others;
}
