// ReplicaSet (apps/v1): keeps a number of pods made from one template running.
import * as v from 'valibot';
import type { KindDefinition, PrintColumn } from './kind.js';
import { workloadPatchMeta } from './patch-meta.js';
import { conditionSchema, kindSchema } from './meta.js';
import { intSchema, podTemplateSpecSchema, selectorMatchesTemplate, type PodTemplateSpec } from './pod.js';
import { SCALE_SUBRESOURCE } from './scale.js';
import { formatSelector, labelSelectorSchema, selectorFromLabelSelector, type LabelSelector } from './selector.js';
import { withChecks } from './validate.js';

const count = intSchema({ min: 0 });

export const replicaSetSpecSchema = withChecks(
  v.strictObject({
    replicas: v.optional(count, 1),
    minReadySeconds: v.optional(count, 0),
    selector: labelSelectorSchema,
    template: podTemplateSpecSchema,
  }),
  selectorMatchesTemplate,
);
export type ReplicaSetSpec = v.InferOutput<typeof replicaSetSpecSchema>;

export const replicaSetStatusSchema = v.strictObject({
  replicas: v.optional(count, 0),
  fullyLabeledReplicas: v.optional(count),
  readyReplicas: v.optional(count),
  availableReplicas: v.optional(count),
  observedGeneration: v.optional(v.pipe(v.number(), v.integer('must be an integer'))),
  conditions: v.optional(v.array(conditionSchema)),
});
export type ReplicaSetStatus = v.InferOutput<typeof replicaSetStatusSchema>;

export const replicaSetSchema = kindSchema('apps/v1', 'ReplicaSet', {
  spec: replicaSetSpecSchema,
  status: v.optional(replicaSetStatusSchema, {}),
});
export type ReplicaSet = v.InferOutput<typeof replicaSetSchema>;

/** The wide columns ReplicaSets and Deployments share: container names, images, selector. */
export function workloadWideColumns(get: (o: unknown) => { selector: LabelSelector; template: PodTemplateSpec }): PrintColumn[] {
  const selector = (s: LabelSelector) => {
    try {
      return formatSelector(selectorFromLabelSelector(s)) || '<none>';
    } catch {
      return '<invalid>';
    }
  };
  return [
    {
      name: 'CONTAINERS',
      wide: true,
      value: (o) =>
        get(o)
          .template.spec.containers.map((c) => c.name)
          .join(','),
    },
    {
      name: 'IMAGES',
      wide: true,
      value: (o) =>
        get(o)
          .template.spec.containers.map((c) => c.image)
          .join(','),
    },
    { name: 'SELECTOR', wide: true, value: (o) => selector(get(o).selector) },
  ];
}

export const replicaSetKind: KindDefinition = {
  patchMeta: workloadPatchMeta(),
  kind: 'ReplicaSet',
  group: 'apps',
  version: 'v1',
  resource: 'replicasets',
  singular: 'replicaset',
  shortNames: ['rs'],
  namespaced: true,
  schema: replicaSetSchema,
  statusSubresource: true,
  subresources: [SCALE_SUBRESOURCE],
  columns: [
    { name: 'DESIRED', value: (o) => String((o as ReplicaSet).spec.replicas) },
    { name: 'CURRENT', value: (o) => String((o as ReplicaSet).status?.replicas ?? 0) },
    { name: 'READY', value: (o) => String((o as ReplicaSet).status?.readyReplicas ?? 0) },
    ...workloadWideColumns((o) => (o as ReplicaSet).spec),
  ],
};
