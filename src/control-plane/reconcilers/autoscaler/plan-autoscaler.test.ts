// One HPA sync decided without I/O: rescale or not, conditions and their reasons, Events, status, and the history across syncs on a manual clock.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { horizontalPodAutoscalerKind, type HorizontalPodAutoscaler } from '../../../core/api/horizontalpodautoscaler.js';
import type { Pod } from '../../../core/api/pod.js';
import type { Scale } from '../../../core/api/scale.js';
import { validateObject } from '../../../core/api/validate.js';
import { metricsNeeded, planAutoscaler, rescaleFailed, sameStatus, type AutoscalerInput, type AutoscalerPlan } from './plan-autoscaler.js';
import type { PodResourceSample } from './resource-metrics.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const Mi = 2 ** 20;

function hpa(spec: Record<string, unknown> = {}, status?: object): HorizontalPodAutoscaler {
  return validateObject(horizontalPodAutoscalerKind, {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: { name: 'web', namespace: 'ns', uid: 'hpa-uid', generation: 3 },
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
      minReplicas: 1,
      maxReplicas: 10,
      metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } }],
      ...spec,
    },
    ...(status ? { status } : {}),
  }) as HorizontalPodAutoscaler;
}

const cpuPercent = (n: number) => ({ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: n } } });
const memoryAverage = (q: string) => ({ type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: q } } });

function scale(replicas: number, selector = 'app=web'): { scale: Scale } {
  return {
    scale: {
      apiVersion: 'autoscaling/v1',
      kind: 'Scale',
      metadata: { name: 'web', namespace: 'ns' },
      spec: { replicas },
      status: { replicas, ...(selector ? { selector } : {}) },
    },
  };
}

function pod(name: string, requests: Record<string, string> = { cpu: '1', memory: '100Mi' }, labels = { app: 'web' }): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'ns', labels },
    spec: { containers: [{ name: 'c', image: 'x', resources: { requests } }] },
    status: {
      phase: 'Running',
      startTime: new Date(T0 - 3_600_000).toISOString(),
      conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: new Date(T0 - 3_000_000).toISOString() }],
    },
  } as unknown as Pod;
}

/** Samples for pods p0..: [millicores, MiB] each. */
function samples(nowMs: number, ...usage: [number, number][]): { samples: Map<string, PodResourceSample> } {
  return {
    samples: new Map(
      usage.map(([cpu, mem], i) => [`p${i}`, { timestampMs: nowMs, windowMs: 10_000, containers: [{ name: 'c', cpuMilli: cpu, memoryBytes: mem * Mi }] }]),
    ),
  };
}

const pods = (n: number, requests?: Record<string, string>) => Array.from({ length: n }, (_, i) => pod(`p${i}`, requests));
const condition = (plan: AutoscalerPlan, type: string) => plan.status.conditions?.find((c) => c.type === type);
const brief = (plan: AutoscalerPlan, type: string) => {
  const c = condition(plan, type);
  return c ? `${c.status} ${c.reason}` : undefined;
};

function input(over: Partial<AutoscalerInput> & { replicas?: number; at?: number }): AutoscalerInput {
  const now = new Date(over.at ?? T0);
  return { hpa: hpa(), target: scale(over.replicas ?? 2), pods: pods(over.replicas ?? 2), now, ...over };
}

describe('planAutoscaler: one sync', () => {
  it('scales up on cpu above target, with kubectl-like Event and conditions', () => {
    const plan = planAutoscaler(input({ metrics: samples(T0, [900, 10], [900, 10]) }));
    assert.deepEqual(plan.rescale, { from: 2, to: 4, reason: 'cpu resource utilization (percentage of request) above target' });
    assert.deepEqual(plan.events, [
      { type: 'Normal', reason: 'SuccessfulRescale', message: 'New size: 4; reason: cpu resource utilization (percentage of request) above target' },
    ]);
    assert.equal(brief(plan, 'AbleToScale'), 'True SucceededRescale');
    assert.equal(condition(plan, 'AbleToScale')!.message, 'the HPA controller was able to update the target scale to 4');
    assert.equal(brief(plan, 'ScalingActive'), 'True ValidMetricFound');
    assert.equal(
      condition(plan, 'ScalingActive')!.message,
      'the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)',
    );
    assert.equal(brief(plan, 'ScalingLimited'), 'False DesiredWithinRange');
    assert.deepEqual(
      plan.status.conditions!.map((c) => c.type),
      ['AbleToScale', 'ScalingActive', 'ScalingLimited'],
    );
    assert.deepEqual(plan.status.currentMetrics, [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 90, averageValue: '900m' } } }]);
    assert.equal(plan.status.currentReplicas, 2);
    assert.equal(plan.status.desiredReplicas, 4);
    assert.equal(plan.status.observedGeneration, 3);
    assert.equal(plan.status.lastScaleTime, '2026-01-01T00:00:00Z');
    assert.deepEqual(plan.history.scaleUp, [{ change: 2, atMs: T0 }]);
  });

  it('keeps the size inside the tolerance and writes no lastScaleTime', () => {
    const plan = planAutoscaler(input({ metrics: samples(T0, [520, 10], [530, 10]) }));
    assert.equal(plan.rescale, undefined);
    assert.deepEqual(plan.events, []);
    assert.equal(plan.status.desiredReplicas, 2);
    assert.equal(plan.status.lastScaleTime, undefined);
    assert.equal(brief(plan, 'AbleToScale'), 'True ReadyForNewScale');
  });

  it('memory AverageValue: 150Mi per pod against 100Mi', () => {
    const plan = planAutoscaler(input({ hpa: hpa({ metrics: [memoryAverage('100Mi')] }), metrics: samples(T0, [0, 150], [0, 150]) }));
    assert.deepEqual(plan.rescale, { from: 2, to: 3, reason: 'memory resource above target' });
    assert.deepEqual(plan.status.currentMetrics, [{ type: 'Resource', resource: { name: 'memory', current: { averageValue: '150Mi' } } }]);
  });

  it('takes the largest proposal across metrics', () => {
    const h = hpa({ metrics: [cpuPercent(50), memoryAverage('100Mi')] });
    const cpuWins = planAutoscaler(input({ hpa: h, metrics: samples(T0, [1500, 100], [1500, 100]) }));
    assert.deepEqual(cpuWins.rescale?.to, 6);
    const memoryWins = planAutoscaler(input({ hpa: h, metrics: samples(T0, [500, 400], [500, 400]) }));
    // 8 wanted; the default scale-up rate allows 6 from 2.
    assert.deepEqual(memoryWins.rescale, { from: 2, to: 6, reason: 'memory resource above target' });
  });

  it('a pod without a cpu request makes the metric invalid: ScalingActive False, FailedGetResourceMetric, no rescale', () => {
    const plan = planAutoscaler(input({ pods: pods(2, { memory: '100Mi' }), metrics: samples(T0, [900, 10], [900, 10]) }));
    assert.equal(plan.rescale, undefined);
    assert.equal(brief(plan, 'ScalingActive'), 'False FailedGetResourceMetric');
    assert.equal(
      condition(plan, 'ScalingActive')!.message,
      'the HPA was unable to compute the replica count: missing request for cpu in container c of Pod p0',
    );
    assert.deepEqual(plan.events, [
      { type: 'Warning', reason: 'FailedGetResourceMetric', message: 'missing request for cpu in container c of Pod p0' },
      {
        type: 'Warning',
        reason: 'FailedComputeMetricsReplicas',
        message:
          'invalid metrics (1 invalid out of 1), first error is: failed to get cpu resource metric value: failed to get cpu utilization: missing request for cpu in container c of Pod p0',
      },
    ]);
    assert.deepEqual(plan.status.currentMetrics, [{ type: 'Resource', resource: { name: 'cpu', current: {} } }]);
    assert.equal(plan.status.currentReplicas, 2);
  });

  it('no samples at all: the metrics error is reported', () => {
    const plan = planAutoscaler(input({ metrics: { error: 'no metrics returned from resource metrics API' } }));
    assert.equal(
      condition(plan, 'ScalingActive')!.message,
      'the HPA was unable to compute the replica count: unable to get metrics for resource cpu: no metrics returned from resource metrics API',
    );
    assert.equal(plan.events[0]!.reason, 'FailedGetResourceMetric');
  });

  it('one invalid metric does not stop a scale-up, but does stop a scale-down', () => {
    const h = hpa({ metrics: [cpuPercent(50), { type: 'Pods', pods: { metric: { name: 'rps' }, target: { type: 'AverageValue', averageValue: '10' } } }] });
    const up = planAutoscaler(input({ hpa: h, metrics: samples(T0, [1000, 1], [1000, 1]) }));
    assert.equal(up.rescale?.to, 4);
    assert.equal(brief(up, 'ScalingActive'), 'True ValidMetricFound');
    assert.ok(up.events.some((e) => e.reason === 'FailedGetPodsMetric'));
    const down = planAutoscaler(input({ hpa: h, history: { recommendations: [], scaleUp: [], scaleDown: [] }, metrics: samples(T0, [100, 1], [100, 1]) }));
    assert.equal(down.rescale, undefined);
    assert.equal(brief(down, 'ScalingActive'), 'False FailedGetPodsMetric');
  });

  it('the target could not be read: AbleToScale False FailedGetScale', () => {
    const plan = planAutoscaler(input({ target: { error: 'deployments.apps "web" not found' } }));
    assert.equal(brief(plan, 'AbleToScale'), 'False FailedGetScale');
    assert.equal(condition(plan, 'AbleToScale')!.message, 'the HPA controller was unable to get the target\'s current scale: deployments.apps "web" not found');
    assert.deepEqual(plan.events, [{ type: 'Warning', reason: 'FailedGetScale', message: 'deployments.apps "web" not found' }]);
  });

  it('a target without a selector: SelectorRequired', () => {
    const plan = planAutoscaler(input({ target: scale(2, ''), metrics: samples(T0) }));
    assert.equal(brief(plan, 'ScalingActive'), 'False InvalidSelector');
    assert.deepEqual(
      plan.events.map((e) => e.reason),
      ['SelectorRequired', 'FailedComputeMetricsReplicas'],
    );
  });

  it('a target scaled to 0 is left alone: ScalingDisabled', () => {
    const i = input({ replicas: 0 });
    assert.equal(metricsNeeded(i.hpa, i.target), false);
    const plan = planAutoscaler(i);
    assert.equal(plan.rescale, undefined);
    assert.equal(brief(plan, 'ScalingActive'), 'False ScalingDisabled');
  });

  it('a target above max or below min is brought into range without metrics', () => {
    const above = input({ replicas: 12 });
    assert.equal(metricsNeeded(above.hpa, above.target), false);
    assert.deepEqual(planAutoscaler(above).rescale, { from: 12, to: 10, reason: 'Current number of replicas above Spec.MaxReplicas' });
    const below = input({ hpa: hpa({ minReplicas: 3 }), replicas: 1 });
    assert.deepEqual(planAutoscaler(below).rescale, { from: 1, to: 3, reason: 'Current number of replicas below Spec.MinReplicas' });
  });

  it('maxReplicas caps the proposal: ScalingLimited True TooManyReplicas', () => {
    const plan = planAutoscaler(input({ hpa: hpa({ maxReplicas: 3 }), metrics: samples(T0, [2000, 1], [2000, 1]) }));
    assert.equal(plan.rescale?.to, 3);
    assert.equal(brief(plan, 'ScalingLimited'), 'True TooManyReplicas');
  });

  it('the default scale-up rate: at most max(4 pods, 100%) per 15 s', () => {
    const plan = planAutoscaler(input({ hpa: hpa({ maxReplicas: 50 }), metrics: samples(T0, [5000, 1], [5000, 1]) }));
    assert.equal(plan.rescale?.to, 6);
    assert.equal(brief(plan, 'ScalingLimited'), 'True ScaleUpLimit');
  });

  it('a failed rescale keeps the size: AbleToScale False FailedUpdateScale, FailedRescale, no scale event', () => {
    const i = input({ metrics: samples(T0, [900, 10], [900, 10]) });
    const failed = rescaleFailed(planAutoscaler(i), 'etcd is down', i.now);
    assert.equal(failed.rescale, undefined);
    assert.equal(brief(failed, 'AbleToScale'), 'False FailedUpdateScale');
    assert.deepEqual(failed.events.at(-1), {
      type: 'Warning',
      reason: 'FailedRescale',
      message: 'New size: 4; reason: cpu resource utilization (percentage of request) above target; error: etcd is down',
    });
    assert.equal(failed.status.desiredReplicas, 2, 'the desired count it had (none yet: the current one)');
    assert.equal(failed.status.lastScaleTime, undefined);
    assert.deepEqual(failed.history.scaleUp, []);
  });
});

describe('planAutoscaler: syncs over time (manual clock)', () => {
  /** Runs syncs against a target whose size follows each rescale, as the Deployment's would. */
  function run(h: HorizontalPodAutoscaler, steps: { at: number; usage: number }[], start = 4) {
    let replicas = start;
    let status = h.status;
    let history: AutoscalerInput['history'];
    const sizes: number[] = [];
    for (const step of steps) {
      const now = T0 + step.at * 1000;
      const current = { ...h, status } as HorizontalPodAutoscaler;
      const usage = Array.from({ length: replicas }, () => [step.usage, 1] as [number, number]);
      const plan = planAutoscaler({
        hpa: current,
        target: scale(replicas),
        pods: pods(replicas),
        metrics: samples(now, ...usage),
        history,
        now: new Date(now),
      });
      if (plan.rescale) replicas = plan.rescale.to;
      ({ status, history } = plan);
      sizes.push(replicas);
    }
    return { sizes, status };
  }

  it('scale-down waits out the default 300 s stabilization window (the first size counts as a recommendation)', () => {
    const { sizes } = run(hpa(), [
      { at: 0, usage: 100 },
      { at: 150, usage: 100 },
      { at: 299, usage: 100 },
      { at: 301, usage: 100 },
    ]);
    assert.deepEqual(sizes, [4, 4, 4, 1]);
  });

  it('with a 10 s window, down after 10 s of low load; a spike inside the window holds it', () => {
    const h = hpa({ behavior: { scaleDown: { stabilizationWindowSeconds: 10 } } });
    assert.deepEqual(
      run(h, [
        { at: 0, usage: 100 },
        { at: 15, usage: 100 },
      ]).sizes,
      [4, 1],
    );
    assert.deepEqual(
      run(h, [
        { at: 20, usage: 500 },
        { at: 25, usage: 100 },
        { at: 29, usage: 100 },
        { at: 36, usage: 100 },
      ]).sizes,
      [4, 4, 4, 1],
    );
  });

  it('1 pod per 15 s down, Pods policy, over several syncs', () => {
    const h = hpa({ behavior: { scaleDown: { stabilizationWindowSeconds: 0, policies: [{ type: 'Pods', value: 1, periodSeconds: 15 }] } } });
    assert.deepEqual(
      run(h, [
        { at: 0, usage: 100 },
        { at: 5, usage: 100 },
        { at: 15, usage: 100 },
        { at: 31, usage: 100 },
      ]).sizes,
      [3, 3, 2, 1],
    );
  });

  it('scale-up policy Pods 1 per 30 s with a 20 s up window', () => {
    const h = hpa({ behavior: { scaleUp: { stabilizationWindowSeconds: 20, policies: [{ type: 'Pods', value: 1, periodSeconds: 30 }] } } });
    // Load first seen at 0: the window holds the size until the lowest recent recommendation is above it.
    const { sizes } = run(
      h,
      [
        { at: 0, usage: 2000 },
        { at: 15, usage: 2000 },
        { at: 21, usage: 2000 },
        { at: 40, usage: 2000 },
        { at: 52, usage: 2000 },
      ],
      2,
    );
    assert.deepEqual(sizes, [2, 2, 3, 3, 4]);
  });

  it('selectPolicy Disabled never scales down', () => {
    const h = hpa({ behavior: { scaleDown: { stabilizationWindowSeconds: 0, selectPolicy: 'Disabled' } } });
    const { sizes, status } = run(h, [
      { at: 0, usage: 10 },
      { at: 100, usage: 10 },
    ]);
    assert.deepEqual(sizes, [4, 4]);
    assert.equal(status?.conditions?.find((c) => c.type === 'ScalingLimited')?.reason, 'ScaleDownLimit');
  });

  it('conditions keep their transition time while their status holds; an unchanged sync changes nothing', () => {
    const h = hpa();
    const first = planAutoscaler(input({ hpa: h, metrics: samples(T0, [500, 1], [500, 1]) }));
    const later = new Date(T0 + 60_000);
    const second = planAutoscaler({
      ...input({ hpa: { ...h, status: first.status } as HorizontalPodAutoscaler, metrics: samples(later.getTime(), [500, 1], [500, 1]) }),
      now: later,
      history: first.history,
    });
    assert.deepEqual(second.status.conditions, first.status.conditions);
    assert.ok(sameStatus(first.status, second.status));
  });
});
