// `describe hpa` in kubectl's layout, and `autoscale`'s HPA and flag checks.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { horizontalPodAutoscalerKind } from '../core/api/horizontalpodautoscaler.js';
import { validateObject } from '../core/api/validate.js';
import { autoscalerFor } from './autoscale.js';
import { CliError } from './cli-error.js';
import { renderObject } from './describe.js';

const hpa = validateObject(horizontalPodAutoscalerKind, {
  apiVersion: 'autoscaling/v2',
  kind: 'HorizontalPodAutoscaler',
  metadata: { name: 'web', namespace: 'default', creationTimestamp: '2026-01-01T00:00:00Z' },
  spec: {
    scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
    minReplicas: 2,
    maxReplicas: 8,
    metrics: [
      { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } },
      { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '100Mi' } } },
    ],
    behavior: { scaleDown: { stabilizationWindowSeconds: 10, policies: [{ type: 'Pods', value: 1, periodSeconds: 15 }] } },
  },
  status: {
    currentReplicas: 3,
    desiredReplicas: 4,
    currentMetrics: [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 75, averageValue: '750m' } } }],
    conditions: [
      { type: 'AbleToScale', status: 'True', reason: 'SucceededRescale', message: 'the HPA controller was able to update the target scale to 4' },
      {
        type: 'ScalingActive',
        status: 'True',
        reason: 'ValidMetricFound',
        message: 'the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)',
      },
    ],
  },
});

describe('describe hpa', () => {
  it('prints metrics current / target, limits, behavior, pods and conditions', () => {
    assert.equal(
      renderObject(horizontalPodAutoscalerKind, hpa),
      [
        'Name:               web',
        'Namespace:          default',
        'Labels:             <none>',
        'Annotations:        <none>',
        'CreationTimestamp:  Thu, 01 Jan 2026 00:00:00 +0000',
        'Reference:          Deployment/web',
        'Metrics:            ( current / target )',
        '  resource cpu on pods  (as a percentage of request):  75% (750m) / 50%',
        '  resource memory on pods:                             <unknown> / 100Mi',
        'Min replicas:  2',
        'Max replicas:  8',
        'Behavior:',
        '  Scale Up:',
        '    Stabilization Window:  0 seconds',
        '    Select Policy:         Max',
        '    Policies:',
        '      - Type: Pods      Value: 4     Period: 15 seconds',
        '      - Type: Percent   Value: 100   Period: 15 seconds',
        '  Scale Down:',
        '    Stabilization Window:  10 seconds',
        '    Select Policy:         Max',
        '    Policies:',
        '      - Type: Pods   Value: 1   Period: 15 seconds',
        'Deployment pods:  3 current / 4 desired',
        'Conditions:',
        '  Type            Status   Reason             Message',
        '  ----            ------   ------             -------',
        '  AbleToScale     True     SucceededRescale   the HPA controller was able to update the target scale to 4',
        '  ScalingActive   True     ValidMetricFound   the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)',
        '',
      ].join('\n'),
    );
  });
});

describe('autoscale', () => {
  const target = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' };
  it("makes kubectl's HPA: min, max and a cpu target", () => {
    assert.deepEqual(autoscalerFor(target, { min: '2', max: '10', cpuPercent: '80' }, 'ns'), {
      apiVersion: 'autoscaling/v2',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: 'web', namespace: 'ns' },
      spec: {
        scaleTargetRef: target,
        minReplicas: 2,
        maxReplicas: 10,
        metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }],
      },
    });
    const bare = autoscalerFor(target, { max: '3', name: 'other' }, 'ns') as { metadata: { name: string }; spec: Record<string, unknown> };
    assert.equal(bare.metadata.name, 'other');
    assert.deepEqual(Object.keys(bare.spec), ['scaleTargetRef', 'maxReplicas'], 'min and metrics left to the server defaults');
  });

  const bad: [Record<string, string>, RegExp][] = [
    [{}, /--max=MAXPODS is required and must be at least 1, max: -1/],
    [{ max: '0' }, /--max=MAXPODS is required/],
    [{ max: '2', min: '3' }, /--max=MAXPODS must be larger or equal to --min=MINPODS, max: 2, min: 3/],
    [{ max: '2', min: '0' }, /--min=MINPODS must be at least 1/],
    [{ max: '2', cpuPercent: '0' }, /--cpu-percent must be at least 1/],
    [{ max: 'x' }, /invalid argument "x" for "--max" flag/],
  ];
  for (const [flags, message] of bad) {
    it(`refuses ${JSON.stringify(flags)}`, () =>
      assert.throws(
        () => autoscalerFor(target, flags, 'ns'),
        (e: unknown) => e instanceof CliError && message.test(e.message),
      ));
  }
});
