// HPA defaults, metric rules and the TARGETS column.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { formatTargets, horizontalPodAutoscalerKind, type HorizontalPodAutoscaler } from './horizontalpodautoscaler.js';
import { validateObject } from './validate.js';

const ref = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' };
const make = (spec: Record<string, unknown>, status?: object) =>
  validateObject(horizontalPodAutoscalerKind, {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: { name: 'h' },
    spec: { scaleTargetRef: ref, maxReplicas: 5, ...spec },
    ...(status ? { status } : {}),
  }) as HorizontalPodAutoscaler;
const cpu = (n: number) => ({ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: n } } });
const fieldsOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return (err as { details: { causes: { field: string }[] } }).details.causes.map((c) => c.field);
  }
  return [];
};

describe('horizontalpodautoscaler', () => {
  it('defaults minReplicas and an 80% CPU metric', () => {
    const h = make({});
    assert.equal(h.spec.minReplicas, 1);
    assert.deepEqual(h.spec.metrics, [cpu(80)]);
  });
  const bad: [string, Record<string, unknown>, string][] = [
    ['max below min', { minReplicas: 6 }, 'spec.maxReplicas'],
    ['missing maxReplicas', { maxReplicas: undefined }, 'spec.maxReplicas'],
    ['Resource without resource', { metrics: [{ type: 'Resource' }] }, 'spec.metrics[0].resource'],
    [
      'Utilization without a number',
      { metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization' } } }] },
      'spec.metrics[0].resource.target.averageUtilization',
    ],
    [
      'Pods with Utilization',
      { metrics: [{ type: 'Pods', pods: { metric: { name: 'rps' }, target: { type: 'Utilization', averageUtilization: 5 } } }] },
      'spec.metrics[0].pods.target.type',
    ],
    [
      'bad policy period',
      { behavior: { scaleUp: { policies: [{ type: 'Pods', value: 1, periodSeconds: 0 }] } } },
      'spec.behavior.scaleUp.policies[0].periodSeconds',
    ],
    [
      'unknown resource',
      { metrics: [{ type: 'Resource', resource: { name: 'gpu', target: { type: 'Utilization', averageUtilization: 5 } } }] },
      'spec.metrics[0].resource.name',
    ],
  ];
  for (const [name, spec, field] of bad)
    it(`rejects ${name}`, () => assert.ok(fieldsOf(() => make(spec)).includes(field), JSON.stringify(fieldsOf(() => make(spec)))));

  const targets: [string, object[], object | undefined, string][] = [
    ['unknown current', [cpu(50)], undefined, 'cpu: <unknown>/50%'],
    ['known current', [cpu(50)], { currentMetrics: [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 30 } } }] }, 'cpu: 30%/50%'],
    [
      'average value',
      [{ type: 'Pods', pods: { metric: { name: 'rps' }, target: { type: 'AverageValue', averageValue: '10' } } }],
      { currentMetrics: [{ type: 'Pods', pods: { metric: { name: 'rps' }, current: { averageValue: '4' } } }] },
      '4/10',
    ],
    [
      'more than two',
      [cpu(50), { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '100Mi' } } }, cpu(70)],
      undefined,
      'cpu: <unknown>/50%, memory: <unknown>/100Mi + 1 more...',
    ],
  ];
  for (const [name, metrics, status, want] of targets) it(`TARGETS: ${name}`, () => assert.equal(formatTargets(make({ metrics }, status)), want));

  it('prints REFERENCE, MINPODS, MAXPODS and REPLICAS', () => {
    const h = make({ minReplicas: 2 }, { currentReplicas: 3 });
    const values = Object.fromEntries(horizontalPodAutoscalerKind.columns!.map((c) => [c.name, c.value(h)]));
    assert.deepEqual(values, { REFERENCE: 'Deployment/web', TARGETS: 'cpu: <unknown>/80%', MINPODS: '2', MAXPODS: '5', REPLICAS: '3' });
  });
});
