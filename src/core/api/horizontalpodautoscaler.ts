// HorizontalPodAutoscaler (autoscaling/v2): scales a workload between min and max replicas to hold metric targets.
import * as v from 'valibot';
import type { KindDefinition } from './kind.js';
import { conditionSchema, kindSchema, timestampSchema } from './meta.js';
import { intSchema } from './pod.js';
import { quantitySchema } from './quantity.js';
import { labelSelectorSchema } from './selector.js';
import { withChecks, type FieldProblem } from './validate.js';

const metricTargetSchema = withChecks(
  v.strictObject({
    type: v.picklist(['Utilization', 'AverageValue', 'Value']),
    averageUtilization: v.optional(intSchema({ min: 1 })),
    averageValue: v.optional(quantitySchema),
    value: v.optional(quantitySchema),
  }),
  (t): FieldProblem[] => {
    const field = t.type === 'Utilization' ? 'averageUtilization' : t.type === 'AverageValue' ? 'averageValue' : 'value';
    return t[field] === undefined ? [{ path: [field], reason: 'FieldValueRequired', detail: `must be set when target type is ${t.type}` }] : [];
  },
);
export type MetricTarget = v.InferOutput<typeof metricTargetSchema>;

const metricIdentifierSchema = v.strictObject({ name: v.pipe(v.string(), v.minLength(1, 'must not be empty')), selector: v.optional(labelSelectorSchema) });
const crossVersionRefSchema = v.strictObject({
  apiVersion: v.optional(v.string()),
  kind: v.pipe(v.string(), v.minLength(1, 'must not be empty')),
  name: v.pipe(v.string(), v.minLength(1, 'must not be empty')),
});

const METRIC_FIELDS = { Resource: 'resource', Pods: 'pods', Object: 'object', External: 'external', ContainerResource: 'containerResource' } as const;

const metricSpecSchema = withChecks(
  v.strictObject({
    type: v.picklist(['Resource', 'Pods', 'Object', 'External', 'ContainerResource']),
    resource: v.optional(v.strictObject({ name: v.picklist(['cpu', 'memory']), target: metricTargetSchema })),
    pods: v.optional(v.strictObject({ metric: metricIdentifierSchema, target: metricTargetSchema })),
    object: v.optional(v.strictObject({ describedObject: crossVersionRefSchema, metric: metricIdentifierSchema, target: metricTargetSchema })),
    external: v.optional(v.strictObject({ metric: metricIdentifierSchema, target: metricTargetSchema })),
    containerResource: v.optional(v.strictObject({ name: v.picklist(['cpu', 'memory']), container: v.string(), target: metricTargetSchema })),
  }),
  (m): FieldProblem[] => {
    const problems: FieldProblem[] = [];
    const wanted = METRIC_FIELDS[m.type];
    if (m[wanted] === undefined)
      problems.push({ path: [wanted], reason: 'FieldValueRequired', detail: `must populate information for the given metric source (type ${m.type})` });
    for (const field of Object.values(METRIC_FIELDS)) {
      if (field !== wanted && m[field] !== undefined)
        problems.push({ path: [field], reason: 'FieldValueForbidden', detail: `must populate the given metric source only (type ${m.type})` });
    }
    if (m.type === 'Pods' && m.pods && m.pods.target.type !== 'AverageValue') {
      problems.push({
        path: ['pods', 'target', 'type'],
        reason: 'FieldValueNotSupported',
        value: m.pods.target.type,
        detail: 'supported values: "AverageValue"',
      });
    }
    return problems;
  },
);
export type MetricSpec = v.InferOutput<typeof metricSpecSchema>;

const scalingRulesSchema = v.strictObject({
  stabilizationWindowSeconds: v.optional(intSchema({ min: 0, max: 3600 })),
  selectPolicy: v.optional(v.picklist(['Max', 'Min', 'Disabled'])),
  policies: v.optional(
    v.array(
      v.strictObject({
        type: v.picklist(['Pods', 'Percent']),
        value: intSchema({ min: 1 }),
        periodSeconds: intSchema({ min: 1, max: 1800 }),
      }),
    ),
  ),
  tolerance: v.optional(quantitySchema),
});
export type HPAScalingRules = v.InferOutput<typeof scalingRulesSchema>;

/** Kubernetes' default when no metric is given: 80% average CPU utilization. */
export const DEFAULT_METRICS: MetricSpec[] = [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }];

const hpaSpecSchema = withChecks(
  v.strictObject({
    scaleTargetRef: crossVersionRefSchema,
    minReplicas: v.optional(intSchema({ min: 1 }), 1),
    maxReplicas: intSchema({ min: 1 }),
    metrics: v.optional(v.array(metricSpecSchema), () => DEFAULT_METRICS.map((m) => structuredClone(m))),
    behavior: v.optional(v.strictObject({ scaleUp: v.optional(scalingRulesSchema), scaleDown: v.optional(scalingRulesSchema) })),
  }),
  (s): FieldProblem[] =>
    s.maxReplicas < s.minReplicas ? [{ path: ['maxReplicas'], reason: 'FieldValueInvalid', detail: 'must be greater than or equal to `minReplicas`' }] : [],
);
export type HorizontalPodAutoscalerSpec = v.InferOutput<typeof hpaSpecSchema>;

const metricValueStatusSchema = v.strictObject({
  averageUtilization: v.optional(v.pipe(v.number(), v.integer('must be an integer'))),
  averageValue: v.optional(quantitySchema),
  value: v.optional(quantitySchema),
});

const metricStatusSchema = v.strictObject({
  type: v.picklist(['Resource', 'Pods', 'Object', 'External', 'ContainerResource']),
  resource: v.optional(v.strictObject({ name: v.string(), current: metricValueStatusSchema })),
  pods: v.optional(v.strictObject({ metric: metricIdentifierSchema, current: metricValueStatusSchema })),
  object: v.optional(v.strictObject({ describedObject: crossVersionRefSchema, metric: metricIdentifierSchema, current: metricValueStatusSchema })),
  external: v.optional(v.strictObject({ metric: metricIdentifierSchema, current: metricValueStatusSchema })),
  containerResource: v.optional(v.strictObject({ name: v.string(), container: v.string(), current: metricValueStatusSchema })),
});
export type MetricStatus = v.InferOutput<typeof metricStatusSchema>;

export const horizontalPodAutoscalerSchema = kindSchema('autoscaling/v2', 'HorizontalPodAutoscaler', {
  spec: hpaSpecSchema,
  status: v.optional(
    v.strictObject({
      observedGeneration: v.optional(v.pipe(v.number(), v.integer('must be an integer'))),
      lastScaleTime: v.optional(v.nullable(timestampSchema)),
      currentReplicas: v.optional(intSchema({ min: 0 })),
      desiredReplicas: v.optional(intSchema({ min: 0 })),
      currentMetrics: v.optional(v.array(metricStatusSchema)),
      conditions: v.optional(v.array(conditionSchema)),
    }),
    {},
  ),
});
export type HorizontalPodAutoscaler = v.InferOutput<typeof horizontalPodAutoscalerSchema>;

type Current = v.InferOutput<typeof metricValueStatusSchema>;

/** One metric as kubectl prints it: `cpu: 30%/50%`, `cpu: <unknown>/50%`, `250m/500m` for pod metrics. */
function formatMetric(spec: MetricSpec, current: Current | undefined): string {
  const source = spec.resource ?? spec.containerResource ?? spec.pods ?? spec.object ?? spec.external;
  if (!source) return '<unknown>';
  const t = source.target;
  const [want, have] =
    t.type === 'Utilization'
      ? [`${t.averageUtilization}%`, current?.averageUtilization !== undefined ? `${current.averageUtilization}%` : undefined]
      : t.type === 'AverageValue'
        ? [String(t.averageValue), current?.averageValue !== undefined ? String(current.averageValue) : undefined]
        : [String(t.value), current?.value !== undefined ? String(current.value) : undefined];
  const prefix = spec.resource ? `${spec.resource.name}: ` : spec.containerResource ? `${spec.containerResource.name}: ` : '';
  return `${prefix}${have ?? '<unknown>'}/${want}`;
}

/** The status entry for a metric: same type and name if present, as the controller reports them in order. */
function currentFor(spec: MetricSpec, index: number, statuses: readonly MetricStatus[]): Current | undefined {
  const nameOf = (m: MetricSpec | MetricStatus) =>
    m.resource?.name ?? m.containerResource?.name ?? m.pods?.metric.name ?? m.object?.metric.name ?? m.external?.metric.name;
  const found = statuses.find((s) => s.type === spec.type && nameOf(s) === nameOf(spec)) ?? statuses[index];
  if (!found || found.type !== spec.type) return undefined;
  return (found.resource ?? found.containerResource ?? found.pods ?? found.object ?? found.external)?.current;
}

/** How many metrics the TARGETS column shows before `+ N more...`. */
const MAX_TARGETS = 2;

export function formatTargets(hpa: HorizontalPodAutoscaler): string {
  const metrics = hpa.spec.metrics;
  if (metrics.length === 0) return '<none>';
  const statuses = hpa.status?.currentMetrics ?? [];
  const shown = metrics.slice(0, MAX_TARGETS).map((m, i) => formatMetric(m, currentFor(m, i, statuses)));
  const more = metrics.length - MAX_TARGETS;
  return shown.join(', ') + (more > 0 ? ` + ${more} more...` : '');
}

export const horizontalPodAutoscalerKind: KindDefinition = {
  kind: 'HorizontalPodAutoscaler',
  group: 'autoscaling',
  version: 'v2',
  resource: 'horizontalpodautoscalers',
  singular: 'horizontalpodautoscaler',
  shortNames: ['hpa'],
  namespaced: true,
  schema: horizontalPodAutoscalerSchema,
  statusSubresource: true,
  columns: [
    {
      name: 'REFERENCE',
      value: (o) => {
        const r = (o as HorizontalPodAutoscaler).spec.scaleTargetRef;
        return `${r.kind}/${r.name}`;
      },
    },
    { name: 'TARGETS', value: (o) => formatTargets(o as HorizontalPodAutoscaler) },
    { name: 'MINPODS', value: (o) => String((o as HorizontalPodAutoscaler).spec.minReplicas) },
    { name: 'MAXPODS', value: (o) => String((o as HorizontalPodAutoscaler).spec.maxReplicas) },
    { name: 'REPLICAS', value: (o) => String((o as HorizontalPodAutoscaler).status?.currentReplicas ?? 0) },
  ],
};
