// `minik8s describe hpa`: kubectl's layout for a HorizontalPodAutoscaler: reference, each metric's current / target, min/max, behavior, pods, conditions.
import type { HorizontalPodAutoscaler, MetricSpec, MetricStatus } from '../core/api/horizontalpodautoscaler.js';
import { scalingRules, type ScalingRules } from '../core/api/hpa-behavior.js';
import { describeTime, type DescribeWriter } from './describe-writer.js';
import { alignColumns } from './printers.js';

type Current = NonNullable<MetricStatus['resource']>['current'];

function nameOf(m: MetricSpec | MetricStatus): string | undefined {
  return m.resource?.name ?? m.containerResource?.name ?? m.pods?.metric.name ?? m.object?.metric.name ?? m.external?.metric.name;
}

/** The status entry for a metric: same type and name, else the one at the same place. */
function currentOf(spec: MetricSpec, index: number, statuses: readonly MetricStatus[]): Current | undefined {
  const found = statuses.find((s) => s.type === spec.type && nameOf(s) === nameOf(spec)) ?? statuses[index];
  if (!found || found.type !== spec.type) return undefined;
  return (found.resource ?? found.containerResource ?? found.pods ?? found.object ?? found.external)?.current;
}

/** One metric line as kubectl describes it: its label and `current / target`. */
export function describeMetric(spec: MetricSpec, current: Current | undefined): [string, string] {
  const source = spec.resource ?? spec.containerResource ?? spec.pods ?? spec.object ?? spec.external;
  const target = source?.target;
  let label: string;
  if (spec.resource) label = `resource ${spec.resource.name} on pods`;
  else if (spec.containerResource) label = `resource ${spec.containerResource.name} of container "${spec.containerResource.container}" on pods`;
  else if (spec.pods) label = `"${spec.pods.metric.name}" on pods`;
  else if (spec.object) label = `"${spec.object.metric.name}" on ${spec.object.describedObject.kind}/${spec.object.describedObject.name}`;
  else label = `"${spec.external?.metric.name ?? ''}" (external metric)`;
  if (!target) return [label, '<unknown>'];
  if (target.type === 'Utilization') {
    const now =
      current?.averageUtilization !== undefined
        ? `${current.averageUtilization}%${current.averageValue !== undefined ? ` (${current.averageValue})` : ''}`
        : '<unknown>';
    return [`${label}  (as a percentage of request)`, `${now} / ${target.averageUtilization}%`];
  }
  if (target.type === 'AverageValue') return [label, `${current?.averageValue ?? '<unknown>'} / ${target.averageValue}`];
  return [label, `${current?.value ?? '<unknown>'} / ${target.value}`];
}

function describeRules(w: DescribeWriter, title: string, rules: ScalingRules): void {
  w.section(1, title);
  w.field(2, 'Stabilization Window', `${rules.stabilizationWindowSeconds} seconds`);
  w.field(2, 'Select Policy', rules.selectPolicy);
  w.section(2, 'Policies');
  w.raw(3, alignColumns(rules.policies.map((p) => [`- Type: ${p.type}`, `Value: ${p.value}`, `Period: ${p.periodSeconds} seconds`])));
}

export function describeHpa(w: DescribeWriter, hpa: HorizontalPodAutoscaler): void {
  const { spec } = hpa;
  const status = hpa.status ?? {};
  w.field(0, 'CreationTimestamp', describeTime(hpa.metadata.creationTimestamp));
  w.field(0, 'Reference', `${spec.scaleTargetRef.kind}/${spec.scaleTargetRef.name}`);
  w.field(0, 'Metrics', '( current / target )');
  spec.metrics.forEach((m, i) => {
    const [label, value] = describeMetric(m, currentOf(m, i, status.currentMetrics ?? []));
    w.field(1, label, value);
  });
  w.field(0, 'Min replicas', String(spec.minReplicas ?? 1));
  w.field(0, 'Max replicas', String(spec.maxReplicas));
  // As kubectl, only a behavior the HPA sets; shown with the defaults it leaves to the controller.
  if (spec.behavior) {
    const rules = scalingRules(spec.behavior);
    w.section(0, 'Behavior');
    describeRules(w, 'Scale Up', rules.up);
    describeRules(w, 'Scale Down', rules.down);
  }
  w.field(0, `${spec.scaleTargetRef.kind} pods`, `${status.currentReplicas ?? 0} current / ${status.desiredReplicas ?? 0} desired`);
  const conditions = status.conditions ?? [];
  if (conditions.length) {
    w.section(0, 'Conditions');
    w.raw(
      1,
      alignColumns([
        ['Type', 'Status', 'Reason', 'Message'],
        ['----', '------', '------', '-------'],
        ...conditions.map((c) => [c.type, c.status, c.reason ?? '', c.message ?? '']),
      ]),
    );
  }
}
