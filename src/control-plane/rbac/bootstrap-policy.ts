// Reconciles the default RBAC policy at each master start, as kube-apiserver's bootstrap-roles step: creates what is missing and, for objects annotated autoupdate=true, adds back missing rules and subjects.
import type { KindDefinition } from '../../core/api/kind.js';
import type { KubeObject } from '../../core/api/meta.js';
import { type ClusterRole, type ClusterRoleBinding, clusterRoleBindingKind, clusterRoleKind, type PolicyRule, type Subject } from '../../core/api/rbac.js';
import { AlreadyExistsError, ConflictError, NotFoundError } from '../../core/errors.js';
import type { ObjectService } from '../api-server/object-service.js';
import { AUTOUPDATE_ANNOTATION, defaultClusterRoleBindings, defaultClusterRoles } from './default-roles.js';
import { uncoveredRules } from './policy-rule.js';

/**
 * What an existing role lacks of its default: the default's rules it does not cover (none for
 * an aggregated role, whose rules the aggregation controller owns). Undefined: leave it alone.
 */
export function reconcileClusterRole(existing: ClusterRole, wanted: ClusterRole): ClusterRole | undefined {
  if (existing.metadata.annotations?.[AUTOUPDATE_ANNOTATION] !== 'true') return undefined;
  const labels = { ...wanted.metadata.labels, ...existing.metadata.labels };
  const labelsMissing = Object.keys(labels).length !== Object.keys(existing.metadata.labels ?? {}).length;
  const missing: PolicyRule[] = wanted.aggregationRule ? [] : (wanted.rules ?? []).filter((r) => uncoveredRules(existing.rules ?? [], [r]).length > 0);
  const aggregationMissing = wanted.aggregationRule !== undefined && existing.aggregationRule === undefined;
  if (missing.length === 0 && !labelsMissing && !aggregationMissing) return undefined;
  return {
    ...existing,
    metadata: { ...existing.metadata, labels },
    rules: [...(existing.rules ?? []), ...missing],
    ...(aggregationMissing ? { aggregationRule: wanted.aggregationRule } : {}),
  };
}

/** What an existing binding lacks of its default: its subjects (the roleRef cannot change). */
export function reconcileBinding(existing: ClusterRoleBinding, wanted: ClusterRoleBinding): ClusterRoleBinding | undefined {
  if (existing.metadata.annotations?.[AUTOUPDATE_ANNOTATION] !== 'true') return undefined;
  const same = (a: Subject, b: Subject) => a.kind === b.kind && a.name === b.name && (a.namespace ?? '') === (b.namespace ?? '');
  const missing = (wanted.subjects ?? []).filter((w) => !(existing.subjects ?? []).some((e) => same(e, w)));
  if (missing.length === 0) return undefined;
  return { ...existing, subjects: [...(existing.subjects ?? []), ...missing] };
}

async function ensure<T extends KubeObject>(
  service: ObjectService,
  def: KindDefinition,
  wanted: T,
  reconcile: (existing: T, wanted: T) => T | undefined,
): Promise<'created' | 'updated' | undefined> {
  const name = wanted.metadata.name ?? '';
  // A few tries: another master (or an admin) may write the same object meanwhile.
  for (let attempt = 0; attempt < 5; attempt++) {
    let existing: T;
    try {
      existing = (await service.get(def, undefined, name)) as T;
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err;
      try {
        await service.create(def, undefined, wanted as unknown as Record<string, unknown>);
        return 'created';
      } catch (e) {
        if (e instanceof AlreadyExistsError) continue;
        throw e;
      }
    }
    const next = reconcile(existing, wanted);
    if (!next) return undefined;
    try {
      await service.replace(def, undefined, name, next as unknown as Record<string, unknown>);
      return 'updated';
    } catch (e) {
      if (e instanceof ConflictError) continue;
      throw e;
    }
  }
  throw new ConflictError(`could not reconcile ${def.resource} "${name}": it kept changing`);
}

/**
 * Idempotent: a second start with nothing changed writes nothing. Only repairs are logged (a
 * default role that had lost rules or subjects): creating them at a first start is expected, and
 * says nothing on the master's output, whose first lines are the operator's.
 */
export async function ensureBootstrapPolicy(options: { service: ObjectService; log?: (message: string) => void }): Promise<void> {
  const { service, log } = options;
  for (const role of defaultClusterRoles()) {
    const done = await ensure(service, clusterRoleKind, role, reconcileClusterRole);
    if (done === 'updated') log?.(`rbac: restored the default rules of clusterrole ${role.metadata.name}`);
  }
  for (const binding of defaultClusterRoleBindings()) {
    const done = await ensure(service, clusterRoleBindingKind, binding, reconcileBinding);
    if (done === 'updated') log?.(`rbac: restored the default subjects of clusterrolebinding ${binding.metadata.name}`);
  }
}
