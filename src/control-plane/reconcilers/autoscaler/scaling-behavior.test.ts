// HPA behavior: defaults, stabilization windows, rate policies with Max/Min/Disabled, min/max limits, and the event history.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { scalingRules, type ScalingRules } from '../../../core/api/hpa-behavior.js';
import { limitByRate, recordScaleEvent, scaleDownLimit, scaleUpLimit, stabilize, type Recommendation, type ScaleEvent } from './scaling-behavior.js';

const NOW = 1_000_000_000;
const at = (secondsAgo: number) => NOW - secondsAgo * 1000;
const DEFAULTS = scalingRules(undefined);

describe('scalingRules', () => {
  it("fills Kubernetes' defaults", () => {
    assert.deepEqual(DEFAULTS.up, {
      stabilizationWindowSeconds: 0,
      selectPolicy: 'Max',
      tolerance: 0.1,
      policies: [
        { type: 'Pods', value: 4, periodSeconds: 15 },
        { type: 'Percent', value: 100, periodSeconds: 15 },
      ],
    });
    assert.deepEqual(DEFAULTS.down, {
      stabilizationWindowSeconds: 300,
      selectPolicy: 'Max',
      tolerance: 0.1,
      policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }],
    });
  });

  it('keeps what is given and fills the rest', () => {
    const r = scalingRules(
      { scaleDown: { stabilizationWindowSeconds: 10, tolerance: '50m' }, scaleUp: { policies: [{ type: 'Pods', value: 1, periodSeconds: 60 }] } },
      120,
    );
    assert.equal(r.down.stabilizationWindowSeconds, 10);
    assert.equal(r.down.tolerance, 0.05);
    assert.deepEqual(r.up.policies, [{ type: 'Pods', value: 1, periodSeconds: 60 }]);
    assert.equal(r.up.selectPolicy, 'Max');
    assert.equal(scalingRules({}, 120).down.stabilizationWindowSeconds, 120, 'the controller-wide default window');
  });
});

describe('stabilize', () => {
  const rules = (up: number, down: number) => ({
    up: { ...DEFAULTS.up, stabilizationWindowSeconds: up },
    down: { ...DEFAULTS.down, stabilizationWindowSeconds: down },
  });
  const recs = (...list: [number, number][]): Recommendation[] => list.map(([replicas, ago]) => ({ replicas, atMs: at(ago) }));
  const cases: { name: string; current: number; desired: number; up: number; down: number; history: Recommendation[]; want: number; reason: string }[] = [
    {
      name: 'scale-down held at the highest recommendation of the window',
      current: 5,
      desired: 2,
      up: 0,
      down: 300,
      history: recs([5, 100], [3, 200]),
      want: 5,
      reason: 'ScaleDownStabilized',
    },
    {
      name: 'scale-down to the highest recent one when below current',
      current: 5,
      desired: 2,
      up: 0,
      down: 300,
      history: recs([4, 100], [3, 200]),
      want: 4,
      reason: 'ScaleDownStabilized',
    },
    {
      name: 'recommendations older than the window do not count',
      current: 5,
      desired: 2,
      up: 0,
      down: 300,
      history: recs([5, 301]),
      want: 2,
      reason: 'ScaleDownStabilized',
    },
    { name: 'no window: the desired count', current: 5, desired: 2, up: 0, down: 0, history: recs([9, 1]), want: 2, reason: 'ScaleDownStabilized' },
    {
      name: 'scale-up held at the lowest recommendation of the up window',
      current: 3,
      desired: 6,
      up: 60,
      down: 0,
      history: recs([3, 30]),
      want: 3,
      reason: 'ScaleUpStabilized',
    },
    {
      name: 'scale-up to the lowest recent one above current',
      current: 3,
      desired: 6,
      up: 60,
      down: 0,
      history: recs([5, 30], [8, 10]),
      want: 5,
      reason: 'ScaleUpStabilized',
    },
    {
      name: 'scale-up with the default (no) window: at once',
      current: 3,
      desired: 6,
      up: 0,
      down: 300,
      history: recs([3, 1]),
      want: 6,
      reason: 'ScaleUpStabilized',
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const got = stabilize({ current: c.current, desired: c.desired, rules: rules(c.up, c.down), recommendations: c.history, nowMs: NOW });
      assert.equal(got.replicas, c.want);
      assert.equal(got.reason, c.reason);
      assert.deepEqual(got.recommendations.at(-1), { replicas: c.desired, atMs: NOW }, 'this recommendation is remembered');
    });
  }
  it('forgets recommendations older than both windows', () => {
    const got = stabilize({ current: 3, desired: 3, rules: rules(60, 120), recommendations: recs([1, 200], [2, 100], [3, 10]), nowMs: NOW });
    assert.deepEqual(
      got.recommendations.map((r) => r.replicas),
      [2, 3, 3],
    );
  });
});

describe('rate policies', () => {
  const ev = (...list: [number, number][]): ScaleEvent[] => list.map(([change, ago]) => ({ change, atMs: at(ago) }));
  const none = { scaleUp: [], scaleDown: [] };
  const rules = (selectPolicy: ScalingRules['selectPolicy'], policies: ScalingRules['policies']): ScalingRules => ({
    stabilizationWindowSeconds: 0,
    selectPolicy,
    policies,
    tolerance: 0.1,
  });
  const up: { name: string; current: number; history: { scaleUp: ScaleEvent[]; scaleDown: ScaleEvent[] }; rules: ScalingRules; want: number }[] = [
    { name: 'defaults from 1: 4 pods beats 100%', current: 1, history: none, rules: DEFAULTS.up, want: 5 },
    { name: 'defaults from 10: 100% beats 4 pods', current: 10, history: none, rules: DEFAULTS.up, want: 20 },
    {
      name: 'defaults after adding 4 in this period: from where the period started',
      current: 5,
      history: { scaleUp: ev([4, 10]), scaleDown: [] },
      rules: DEFAULTS.up,
      want: 5,
    },
    { name: 'an event older than the period no longer counts', current: 5, history: { scaleUp: ev([4, 16]), scaleDown: [] }, rules: DEFAULTS.up, want: 10 },
    { name: 'Min picks the smallest', current: 1, history: none, rules: { ...DEFAULTS.up, selectPolicy: 'Min' }, want: 2 },
    { name: 'Disabled: no growth', current: 3, history: none, rules: { ...DEFAULTS.up, selectPolicy: 'Disabled' }, want: 3 },
    {
      name: '1 pod per 60 s, one added 30 s ago',
      current: 4,
      history: { scaleUp: ev([1, 30]), scaleDown: [] },
      rules: rules('Max', [{ type: 'Pods', value: 1, periodSeconds: 60 }]),
      want: 4,
    },
    { name: 'percent rounds up', current: 3, history: none, rules: rules('Max', [{ type: 'Percent', value: 10, periodSeconds: 60 }]), want: 4 },
  ];
  for (const c of up) it(`up: ${c.name}`, () => assert.equal(scaleUpLimit(c.current, c.history, c.rules, NOW), c.want));

  const down: typeof up = [
    { name: 'default 100%: to 0', current: 8, history: none, rules: DEFAULTS.down, want: 0 },
    { name: '1 pod per 60 s', current: 5, history: none, rules: rules('Max', [{ type: 'Pods', value: 1, periodSeconds: 60 }]), want: 4 },
    {
      name: '1 pod per 60 s, one removed 30 s ago',
      current: 4,
      history: { scaleUp: [], scaleDown: ev([1, 30]) },
      rules: rules('Max', [{ type: 'Pods', value: 1, periodSeconds: 60 }]),
      want: 4,
    },
    { name: 'percent truncates', current: 5, history: none, rules: rules('Max', [{ type: 'Percent', value: 30, periodSeconds: 60 }]), want: 3 },
    {
      name: 'Max: the policy allowing the most change',
      current: 10,
      history: none,
      rules: rules('Max', [
        { type: 'Pods', value: 1, periodSeconds: 60 },
        { type: 'Percent', value: 50, periodSeconds: 60 },
      ]),
      want: 5,
    },
    {
      name: 'Min: the policy allowing the least change',
      current: 10,
      history: none,
      rules: rules('Min', [
        { type: 'Pods', value: 1, periodSeconds: 60 },
        { type: 'Percent', value: 50, periodSeconds: 60 },
      ]),
      want: 9,
    },
    { name: 'Disabled', current: 10, history: none, rules: rules('Disabled', [{ type: 'Pods', value: 1, periodSeconds: 60 }]), want: 10 },
  ];
  for (const c of down) it(`down: ${c.name}`, () => assert.equal(scaleDownLimit(c.current, c.history, c.rules, NOW), c.want));
});

describe('limitByRate', () => {
  const history = { recommendations: [], scaleUp: [], scaleDown: [] };
  const cases: { name: string; current: number; desired: number; min: number; max: number; want: number; reason: string }[] = [
    { name: 'within range', current: 3, desired: 5, min: 1, max: 10, want: 5, reason: 'DesiredWithinRange' },
    { name: 'faster than the rate allows', current: 2, desired: 20, min: 1, max: 10, want: 6, reason: 'ScaleUpLimit' },
    { name: 'above max', current: 8, desired: 20, min: 1, max: 10, want: 10, reason: 'TooManyReplicas' },
    { name: 'below min', current: 5, desired: 1, min: 2, max: 10, want: 2, reason: 'TooFewReplicas' },
    { name: 'no change', current: 5, desired: 5, min: 1, max: 10, want: 5, reason: 'DesiredWithinRange' },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const got = limitByRate({ current: c.current, desired: c.desired, minReplicas: c.min, maxReplicas: c.max, rules: DEFAULTS, history, nowMs: NOW });
      assert.deepEqual([got.replicas, got.reason], [c.want, c.reason]);
    });
  }
  it('a scale-down slower than policy says ScaleDownLimit', () => {
    const rules = { up: DEFAULTS.up, down: { ...DEFAULTS.down, policies: [{ type: 'Pods' as const, value: 1, periodSeconds: 60 }] } };
    const got = limitByRate({ current: 5, desired: 1, minReplicas: 1, maxReplicas: 10, rules, history, nowMs: NOW });
    assert.deepEqual([got.replicas, got.reason], [4, 'ScaleDownLimit']);
  });
});

describe('recordScaleEvent', () => {
  it('adds the change to its direction and drops events older than every policy period', () => {
    const h = {
      recommendations: [],
      scaleUp: [
        { change: 2, atMs: at(20) },
        { change: 1, atMs: at(5) },
      ],
      scaleDown: [],
    };
    const after = recordScaleEvent(h, DEFAULTS, 3, 7, NOW);
    assert.deepEqual(after.scaleUp, [
      { change: 1, atMs: at(5) },
      { change: 4, atMs: NOW },
    ]);
    assert.deepEqual(recordScaleEvent(h, DEFAULTS, 7, 4, NOW).scaleDown, [{ change: 3, atMs: NOW }]);
  });
});
