// PodDisruptionBudget (policy/v1): how many of a set of pods voluntary disruptions (evictions, drains) must leave running.
import * as v from 'valibot';
import { intOrPercentSchema } from './deployment.js';
import type { KindDefinition } from './kind.js';
import { conditionSchema, kindSchema, timestampSchema } from './meta.js';
import { objectMetaPatchMeta, type PatchMeta } from './patch-meta.js';
import { intSchema } from './pod.js';
import { labelSelectorSchema } from './selector.js';
import { withChecks, type FieldProblem } from './validate.js';

const count = intSchema({ min: 0 });

/** The condition the disruption controller keeps, and its reasons, as Kubernetes names them. */
export const DISRUPTION_ALLOWED_CONDITION = 'DisruptionAllowed';
export const SUFFICIENT_PODS = 'SufficientPods';
export const INSUFFICIENT_PODS = 'InsufficientPods';
export const SYNC_FAILED = 'SyncFailed';

const pdbSpecBaseSchema = v.strictObject({
  minAvailable: v.optional(intOrPercentSchema),
  maxUnavailable: v.optional(intOrPercentSchema),
  selector: v.optional(labelSelectorSchema),
  unhealthyPodEvictionPolicy: v.optional(v.picklist(['IfHealthyBudget', 'AlwaysAllow'], 'supported values: "AlwaysAllow", "IfHealthyBudget"')),
});
type PdbSpec = v.InferOutput<typeof pdbSpecBaseSchema>;

function pdbProblems(spec: PdbSpec): FieldProblem[] {
  const problems: FieldProblem[] = [];
  if (spec.minAvailable !== undefined && spec.maxUnavailable !== undefined) {
    problems.push({ path: [], reason: 'FieldValueInvalid', detail: 'minAvailable and maxUnavailable cannot be both set', value: '' });
  }
  for (const field of ['minAvailable', 'maxUnavailable'] as const) {
    const value = spec[field];
    if (typeof value === 'string' && Number(value.slice(0, -1)) > 100) {
      problems.push({ path: [field], reason: 'FieldValueInvalid', detail: 'must not be greater than 100%', value });
    }
  }
  return problems;
}

export const podDisruptionBudgetStatusSchema = v.strictObject({
  observedGeneration: v.optional(v.pipe(v.number(), v.integer('must be an integer'))),
  /** Pods an eviction was granted for, by name, with when: counted as gone until the controller sees them go (or two minutes pass). */
  disruptedPods: v.optional(v.record(v.string(), timestampSchema)),
  disruptionsAllowed: v.optional(count, 0),
  currentHealthy: v.optional(count, 0),
  desiredHealthy: v.optional(count, 0),
  expectedPods: v.optional(count, 0),
  conditions: v.optional(v.array(conditionSchema)),
});
export type PodDisruptionBudgetStatus = v.InferOutput<typeof podDisruptionBudgetStatusSchema>;

export const podDisruptionBudgetSchema = kindSchema('policy/v1', 'PodDisruptionBudget', {
  spec: v.optional(withChecks(pdbSpecBaseSchema, pdbProblems), {}),
  status: v.optional(podDisruptionBudgetStatusSchema, {}),
});
export type PodDisruptionBudget = v.InferOutput<typeof podDisruptionBudgetSchema>;

const patchMeta: PatchMeta = { metadata: { fields: objectMetaPatchMeta }, status: { fields: { conditions: { merge: true, mergeKey: 'type' } } } };

const orNA = (value: number | string | undefined) => (value === undefined ? 'N/A' : String(value));

export const podDisruptionBudgetKind: KindDefinition = {
  patchMeta,
  kind: 'PodDisruptionBudget',
  group: 'policy',
  version: 'v1',
  resource: 'poddisruptionbudgets',
  singular: 'poddisruptionbudget',
  shortNames: ['pdb'],
  namespaced: true,
  schema: podDisruptionBudgetSchema,
  statusSubresource: true,
  columns: [
    { name: 'MIN AVAILABLE', value: (o) => orNA((o as PodDisruptionBudget).spec?.minAvailable) },
    { name: 'MAX UNAVAILABLE', value: (o) => orNA((o as PodDisruptionBudget).spec?.maxUnavailable) },
    { name: 'ALLOWED DISRUPTIONS', value: (o) => String((o as PodDisruptionBudget).status?.disruptionsAllowed ?? 0) },
  ],
};
