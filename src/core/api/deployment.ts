// Deployment (apps/v1): declarative rollouts of a pod template through ReplicaSets.
import * as v from 'valibot';
import type { KindDefinition } from './kind.js';
import { workloadPatchMeta } from './patch-meta.js';
import { conditionSchema, kindSchema } from './meta.js';
import { intSchema, podTemplateSpecSchema, selectorMatchesTemplate } from './pod.js';
import { workloadWideColumns, type ReplicaSet } from './replicaset.js';
import { SCALE_SUBRESOURCE } from './scale.js';
import { labelSelectorSchema } from './selector.js';
import { withChecks, type FieldProblem } from './validate.js';

const count = intSchema({ min: 0 });

/** An absolute number of pods or a percentage of the desired replicas, e.g. 1 or "25%". */
export const intOrPercentSchema = v.union(
  [count, v.pipe(v.string(), v.regex(/^\d+%$/, 'must be an integer or a percentage such as "25%"'))],
  'must be an integer or a percentage such as "25%"',
);

/** The number of pods an int-or-percent stands for, out of `total` (percentages of pods round as `roundUp` says). */
export function resolveIntOrPercent(value: number | string, options: { total: number; roundUp: boolean }): number {
  if (typeof value === 'number') return value;
  const scaled = (Number(value.slice(0, -1)) * options.total) / 100;
  return options.roundUp ? Math.ceil(scaled) : Math.floor(scaled);
}

const isZero = (x: number | string) => x === 0 || x === '0%';

const strategySchema = v.strictObject({
  type: v.optional(v.picklist(['RollingUpdate', 'Recreate']), 'RollingUpdate'),
  rollingUpdate: v.optional(
    v.strictObject({
      maxSurge: v.optional(intOrPercentSchema, '25%'),
      maxUnavailable: v.optional(intOrPercentSchema, '25%'),
    }),
  ),
});

const deploymentSpecBaseSchema = v.strictObject({
  replicas: v.optional(count, 1),
  selector: labelSelectorSchema,
  template: podTemplateSpecSchema,
  strategy: v.optional(strategySchema, {}),
  minReadySeconds: v.optional(count, 0),
  revisionHistoryLimit: v.optional(count, 10),
  progressDeadlineSeconds: v.optional(intSchema({ min: 1 }), 600),
  paused: v.optional(v.boolean()),
});
type DeploymentSpecBase = v.InferOutput<typeof deploymentSpecBaseSchema>;

function deploymentProblems(spec: DeploymentSpecBase): FieldProblem[] {
  const problems = selectorMatchesTemplate(spec);
  const { type, rollingUpdate: ru } = spec.strategy;
  if (type === 'Recreate' && ru) {
    problems.push({ path: ['strategy', 'rollingUpdate'], reason: 'FieldValueForbidden', detail: "may not be specified when strategy `type` is 'Recreate'" });
  }
  if (ru) {
    if (typeof ru.maxUnavailable === 'string' && Number(ru.maxUnavailable.slice(0, -1)) > 100) {
      problems.push({ path: ['strategy', 'rollingUpdate', 'maxUnavailable'], reason: 'FieldValueInvalid', detail: 'must not be greater than 100%' });
    }
    // Both zero would let the rollout neither add nor remove a pod.
    if (isZero(ru.maxSurge) && isZero(ru.maxUnavailable)) {
      problems.push({ path: ['strategy', 'rollingUpdate', 'maxUnavailable'], reason: 'FieldValueInvalid', detail: 'may not be 0 when `maxSurge` is 0' });
    }
  }
  if (spec.progressDeadlineSeconds <= spec.minReadySeconds) {
    problems.push({ path: ['progressDeadlineSeconds'], reason: 'FieldValueInvalid', detail: 'must be greater than minReadySeconds' });
  }
  return problems;
}

/** A RollingUpdate strategy gets its rollingUpdate block (25% / 25%) as Kubernetes fills it in. */
export function defaultDeploymentSpec(spec: DeploymentSpecBase): DeploymentSpecBase {
  if (spec.strategy.type !== 'RollingUpdate' || spec.strategy.rollingUpdate) return spec;
  return { ...spec, strategy: { ...spec.strategy, rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } } };
}

export const deploymentSpecSchema = v.pipe(withChecks(deploymentSpecBaseSchema, deploymentProblems), v.transform(defaultDeploymentSpec));
export type DeploymentSpec = DeploymentSpecBase;

export const deploymentStatusSchema = v.strictObject({
  observedGeneration: v.optional(v.pipe(v.number(), v.integer('must be an integer'))),
  replicas: v.optional(count),
  updatedReplicas: v.optional(count),
  readyReplicas: v.optional(count),
  availableReplicas: v.optional(count),
  unavailableReplicas: v.optional(count),
  terminatingReplicas: v.optional(count),
  conditions: v.optional(v.array(conditionSchema)),
  collisionCount: v.optional(count),
});
export type DeploymentStatus = v.InferOutput<typeof deploymentStatusSchema>;

export const deploymentSchema = kindSchema('apps/v1', 'Deployment', {
  spec: deploymentSpecSchema,
  status: v.optional(deploymentStatusSchema, {}),
});
export type Deployment = v.InferOutput<typeof deploymentSchema>;

export const deploymentKind: KindDefinition = {
  patchMeta: workloadPatchMeta({ strategy: { retainKeys: true } }),
  kind: 'Deployment',
  group: 'apps',
  version: 'v1',
  resource: 'deployments',
  singular: 'deployment',
  shortNames: ['deploy'],
  namespaced: true,
  schema: deploymentSchema,
  statusSubresource: true,
  subresources: [SCALE_SUBRESOURCE],
  columns: [
    {
      name: 'READY',
      value: (o) => {
        const d = o as Deployment;
        return `${d.status?.readyReplicas ?? 0}/${d.spec.replicas}`;
      },
    },
    { name: 'UP-TO-DATE', value: (o) => String((o as Deployment).status?.updatedReplicas ?? 0) },
    { name: 'AVAILABLE', value: (o) => String((o as Deployment).status?.availableReplicas ?? 0) },
    ...workloadWideColumns((o) => (o as Deployment).spec),
  ],
};

/** The label a Deployment puts on its ReplicaSets and their pods: the hash of the pod template. */
export const POD_TEMPLATE_HASH_LABEL = 'pod-template-hash';
/** A ReplicaSet's rollout revision, as Kubernetes records it. */
export const REVISION_ANNOTATION = 'deployment.kubernetes.io/revision';
/** Why a revision was made (`rollout history` shows it). */
export const CHANGE_CAUSE_ANNOTATION = 'kubernetes.io/change-cause';

/** A ReplicaSet's revision number; 0 when it has none. */
export function revisionOf(rs: ReplicaSet): number {
  const n = Number(rs.metadata.annotations?.[REVISION_ANNOTATION]);
  return Number.isSafeInteger(n) && n > 0 ? n : 0;
}
