// DaemonSet (apps/v1): one pod from a template on every node that the template's scheduling rules admit.
import * as v from 'valibot';
import { intOrPercentSchema } from './deployment.js';
import type { KindDefinition } from './kind.js';
import { conditionSchema, kindSchema } from './meta.js';
import { workloadPatchMeta } from './patch-meta.js';
import { intSchema, podTemplateSpecSchema, selectorMatchesTemplate } from './pod.js';
import { workloadWideColumns } from './replicaset.js';
import { labelSelectorSchema } from './selector.js';
import { withChecks, type FieldProblem } from './validate.js';

const count = intSchema({ min: 0 });

/** The label a DaemonSet puts on its pods: the hash of the template they were made from (old pods differ). */
export const CONTROLLER_REVISION_HASH_LABEL = 'controller-revision-hash';
/** The DaemonSet's metadata.generation when the pod was made, as Kubernetes labels daemon pods. */
export const POD_TEMPLATE_GENERATION_LABEL = 'pod-template-generation';

const isZero = (x: number | string) => x === 0 || x === '0%';

const updateStrategySchema = v.strictObject({
  type: v.optional(v.picklist(['RollingUpdate', 'OnDelete'], 'supported values: "OnDelete", "RollingUpdate"'), 'RollingUpdate'),
  rollingUpdate: v.optional(
    v.strictObject({
      maxUnavailable: v.optional(intOrPercentSchema, 1),
      maxSurge: v.optional(intOrPercentSchema, 0),
    }),
  ),
});

const daemonSetSpecBaseSchema = v.strictObject({
  selector: labelSelectorSchema,
  template: podTemplateSpecSchema,
  updateStrategy: v.optional(updateStrategySchema, {}),
  minReadySeconds: v.optional(count, 0),
  revisionHistoryLimit: v.optional(count, 10),
});
type DaemonSetSpecBase = v.InferOutput<typeof daemonSetSpecBaseSchema>;

function daemonSetProblems(spec: DaemonSetSpecBase): FieldProblem[] {
  const problems = selectorMatchesTemplate(spec);
  const restart = spec.template.spec.restartPolicy;
  if (restart !== undefined && restart !== 'Always') {
    problems.push({ path: ['template', 'spec', 'restartPolicy'], reason: 'FieldValueNotSupported', detail: 'supported values: "Always"', value: restart });
  }
  const { type, rollingUpdate: ru } = spec.updateStrategy;
  if (type === 'OnDelete' && ru) {
    problems.push({
      path: ['updateStrategy', 'rollingUpdate'],
      reason: 'FieldValueForbidden',
      detail: "may not be specified when strategy `type` is 'OnDelete'",
    });
  }
  if (ru) {
    for (const field of ['maxUnavailable', 'maxSurge'] as const) {
      const value = ru[field];
      if (typeof value === 'string' && Number(value.slice(0, -1)) > 100) {
        problems.push({ path: ['updateStrategy', 'rollingUpdate', field], reason: 'FieldValueInvalid', detail: 'must not be greater than 100%', value });
      }
    }
    // Both zero would let a rollout neither add nor remove a pod.
    if (isZero(ru.maxSurge) && isZero(ru.maxUnavailable)) {
      problems.push({ path: ['updateStrategy', 'rollingUpdate', 'maxUnavailable'], reason: 'FieldValueInvalid', detail: 'may not be 0 when `maxSurge` is 0' });
    }
  }
  return problems;
}

/** A RollingUpdate strategy gets its rollingUpdate block (maxUnavailable 1, maxSurge 0) as Kubernetes fills it in. */
export function defaultDaemonSetSpec(spec: DaemonSetSpecBase): DaemonSetSpecBase {
  if (spec.updateStrategy.type !== 'RollingUpdate' || spec.updateStrategy.rollingUpdate) return spec;
  return { ...spec, updateStrategy: { ...spec.updateStrategy, rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } } };
}

export const daemonSetSpecSchema = v.pipe(withChecks(daemonSetSpecBaseSchema, daemonSetProblems), v.transform(defaultDaemonSetSpec));
export type DaemonSetSpec = DaemonSetSpecBase;

export const daemonSetStatusSchema = v.strictObject({
  currentNumberScheduled: v.optional(count, 0),
  numberMisscheduled: v.optional(count, 0),
  desiredNumberScheduled: v.optional(count, 0),
  numberReady: v.optional(count, 0),
  observedGeneration: v.optional(v.pipe(v.number(), v.integer('must be an integer'))),
  updatedNumberScheduled: v.optional(count),
  numberAvailable: v.optional(count),
  numberUnavailable: v.optional(count),
  collisionCount: v.optional(count),
  conditions: v.optional(v.array(conditionSchema)),
});
export type DaemonSetStatus = v.InferOutput<typeof daemonSetStatusSchema>;

export const daemonSetSchema = kindSchema('apps/v1', 'DaemonSet', {
  spec: daemonSetSpecSchema,
  status: v.optional(daemonSetStatusSchema, {}),
});
export type DaemonSet = v.InferOutput<typeof daemonSetSchema>;

/** `key=value,...` of the template's nodeSelector, or `<none>`, as kubectl's NODE SELECTOR column. */
export function formatNodeSelector(ds: DaemonSet): string {
  const entries = Object.entries(ds.spec.template.spec.nodeSelector ?? {});
  return entries.length ? entries.map(([k, val]) => `${k}=${val}`).join(',') : '<none>';
}

export const daemonSetKind: KindDefinition = {
  patchMeta: workloadPatchMeta({ updateStrategy: { retainKeys: true } }),
  kind: 'DaemonSet',
  group: 'apps',
  version: 'v1',
  resource: 'daemonsets',
  singular: 'daemonset',
  shortNames: ['ds'],
  namespaced: true,
  schema: daemonSetSchema,
  statusSubresource: true,
  columns: [
    { name: 'DESIRED', value: (o) => String((o as DaemonSet).status?.desiredNumberScheduled ?? 0) },
    { name: 'CURRENT', value: (o) => String((o as DaemonSet).status?.currentNumberScheduled ?? 0) },
    { name: 'READY', value: (o) => String((o as DaemonSet).status?.numberReady ?? 0) },
    { name: 'UP-TO-DATE', value: (o) => String((o as DaemonSet).status?.updatedNumberScheduled ?? 0) },
    { name: 'AVAILABLE', value: (o) => String((o as DaemonSet).status?.numberAvailable ?? 0) },
    { name: 'NODE SELECTOR', value: (o) => formatNodeSelector(o as DaemonSet) },
    ...workloadWideColumns((o) => (o as DaemonSet).spec),
  ],
};
