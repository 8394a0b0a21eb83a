// The replica calculator against Kubernetes' cases: ratio and tolerance, unready, missing and finished pods, requests, average values.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../../../core/api/pod.js';
import {
  averageValueReplicas,
  formatResourceValue,
  groupPods,
  podRequests,
  resourceValue,
  utilizationReplicas,
  type PodMetricsInfo,
  type ResourceName,
} from './replica-calculator.js';

const NOW = Date.parse('2026-01-01T01:00:00Z');
const ago = (seconds: number) => new Date(NOW - seconds * 1000).toISOString();
const TOLERANCES = { scaleDown: 0.1, scaleUp: 0.1 };

interface PodSpec {
  /** Usage sample (millicores or bytes); undefined: no sample. */
  use?: number;
  request?: string | null;
  phase?: 'Pending' | 'Running' | 'Succeeded' | 'Failed';
  /** Ready condition: status and seconds since it last changed; undefined: no condition. */
  ready?: ['True' | 'False', number];
  /** Seconds since the pod started (default: an hour, past the cpu initialization period). */
  started?: number;
  deleting?: boolean;
  /** Seconds before now the sample was taken (default 0). */
  sampledAgo?: number;
}

function build(specs: PodSpec[], resource: ResourceName = 'cpu'): { pods: Pod[]; metrics: PodMetricsInfo } {
  const pods: Pod[] = [];
  const metrics: PodMetricsInfo = new Map();
  specs.forEach((s, i) => {
    const name = `p${i}`;
    const request = s.request === undefined ? (resource === 'cpu' ? '1' : '100Mi') : s.request;
    pods.push({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: 'ns', ...(s.deleting ? { deletionTimestamp: ago(1) } : {}) },
      spec: { containers: [{ name: 'c', image: 'x', ...(request === null ? {} : { resources: { requests: { [resource]: request } } }) }] },
      status: {
        phase: s.phase ?? 'Running',
        startTime: ago(s.started ?? 3600),
        conditions: s.ready === undefined ? undefined : [{ type: 'Ready', status: s.ready[0], lastTransitionTime: ago(s.ready[1]) }],
      },
    } as Pod);
    if (s.use !== undefined) metrics.set(name, { value: s.use, timestampMs: NOW - (s.sampledAgo ?? 0) * 1000, windowMs: 10_000 });
  });
  return { pods, metrics };
}

const ready = (use: number | undefined, extra: PodSpec = {}): PodSpec => ({ use, ready: ['True', 3000], ...extra });

describe('utilizationReplicas (cpu, percent of requests)', () => {
  const cases: { name: string; current: number; target: number; pods: PodSpec[]; want: number | string; utilization?: number }[] = [
    { name: 'scale up: 50% against 30% of 3 pods', current: 3, target: 30, pods: [ready(300), ready(500), ready(700)], want: 5, utilization: 50 },
    {
      name: 'scale down: 28% against 50% of 5 pods',
      current: 5,
      target: 50,
      pods: [ready(100), ready(300), ready(500), ready(250), ready(250)],
      want: 3,
      utilization: 28,
    },
    { name: 'within tolerance (102% of 100%) keeps 3', current: 3, target: 100, pods: [ready(1010), ready(1030), ready(1020)], want: 3, utilization: 102 },
    { name: 'just outside tolerance (112% of 100%) grows', current: 3, target: 100, pods: [ready(1120), ready(1120), ready(1120)], want: 4, utilization: 112 },
    { name: 'utilization is truncated to a whole percent', current: 2, target: 50, pods: [ready(333), ready(334)], want: 2, utilization: 33 },
    {
      name: 'scale up with an unready pod: it counts as 0 (Kubernetes: 4, not 6)',
      current: 3,
      target: 30,
      pods: [{ use: 300, ready: ['False', 10], started: 60 }, ready(500), ready(700)],
      want: 4,
      utilization: 60,
    },
    {
      name: 'scale down with an unready pod: it is left out',
      current: 3,
      target: 50,
      pods: [{ use: 900, ready: ['False', 10], started: 60 }, ready(100), ready(100)],
      want: 1,
      utilization: 10,
    },
    {
      name: 'a pending pod on a scale up counts as 0',
      current: 3,
      target: 50,
      pods: [{ phase: 'Pending' }, ready(900), ready(900)],
      want: 4,
      utilization: 90,
    },
    {
      name: 'missing sample on a scale down: assumed at 100% of its request',
      current: 4,
      target: 50,
      pods: [ready(100), ready(100), ready(100), ready(undefined)],
      want: 3,
      utilization: 10,
    },
    {
      name: 'missing sample on a scale up: assumed 0',
      current: 4,
      target: 50,
      pods: [ready(900), ready(900), ready(900), ready(undefined)],
      want: 6,
      utilization: 90,
    },
    {
      name: 'missing samples that would turn a scale up around keep the size',
      current: 2,
      target: 50,
      pods: [ready(550), ready(undefined)],
      want: 2,
      utilization: 55,
    },
    {
      name: 'deleted and failed pods are ignored',
      current: 3,
      target: 50,
      pods: [ready(1000), ready(5000, { deleting: true }), { phase: 'Failed', use: 5000 }],
      want: 2,
      utilization: 100,
    },
    {
      name: 'a young pod sampled before it had been Ready a whole window is unready (4, not 8)',
      current: 2,
      target: 25,
      pods: [{ use: 1000, ready: ['True', 5], started: 30 }, ready(1000)],
      want: 4,
      utilization: 100,
    },
    {
      name: 'a young pod Ready for longer than the window counts',
      current: 2,
      target: 25,
      pods: [{ use: 1000, ready: ['True', 20], started: 30 }, ready(1000)],
      want: 8,
      utilization: 100,
    },
    {
      name: 'an old pod that was Ready and is not now still counts',
      current: 2,
      target: 25,
      pods: [{ use: 1000, ready: ['False', 100], started: 3600 }, ready(1000)],
      want: 8,
      utilization: 100,
    },
    {
      name: 'an old pod never Ready (went False right after start) is unready',
      current: 2,
      target: 25,
      pods: [{ use: 1000, ready: ['False', 3590], started: 3600 }, ready(1000)],
      want: 4,
      utilization: 100,
    },
    { name: 'a pod without a Ready condition is unready', current: 2, target: 50, pods: [{ use: 1000 }, ready(500)], want: 2, utilization: 50 },
    { name: 'no pods', current: 2, target: 50, pods: [], want: 'no pods returned by selector while calculating replica count' },
    {
      name: 'only unready pods',
      current: 2,
      target: 50,
      pods: [{ phase: 'Pending' }, { use: 10, ready: ['False', 1], started: 5 }],
      want: 'did not receive metrics for targeted pods (pods might be unready)',
    },
    {
      name: 'a pod without a cpu request',
      current: 2,
      target: 50,
      pods: [ready(100), ready(100, { request: null })],
      want: 'missing request for cpu in container c of Pod p1',
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const { pods, metrics } = build(c.pods);
      const got = utilizationReplicas({
        currentReplicas: c.current,
        resource: 'cpu',
        tolerances: TOLERANCES,
        pods,
        metrics,
        timing: { now: NOW },
        targetUtilization: c.target,
      });
      if (typeof c.want === 'string') return assert.deepEqual(got, { error: c.want });
      assert.ok(!('error' in got), JSON.stringify(got));
      assert.equal(got.replicas, c.want);
      if (c.utilization !== undefined) assert.equal(got.utilization, c.utilization);
    });
  }

  it('memory ignores readiness: an unready pod counts at its sample', () => {
    const { pods, metrics } = build(
      [
        { use: 200 * 2 ** 20, ready: ['False', 1], started: 5 },
        { use: 200 * 2 ** 20, ready: ['True', 100] },
      ],
      'memory',
    );
    const got = utilizationReplicas({
      currentReplicas: 2,
      resource: 'memory',
      tolerances: TOLERANCES,
      pods,
      metrics,
      timing: { now: NOW },
      targetUtilization: 100,
    });
    assert.deepEqual(got, { replicas: 4, utilization: 200, rawAverage: 200 * 2 ** 20 });
  });

  it('a configured tolerance widens the band one way only', () => {
    const { pods, metrics } = build([ready(1300), ready(1300)]);
    const run = (scaleUp: number) =>
      utilizationReplicas({
        currentReplicas: 2,
        resource: 'cpu',
        tolerances: { scaleDown: 0.1, scaleUp },
        pods,
        metrics,
        timing: { now: NOW },
        targetUtilization: 100,
      });
    assert.equal((run(0.5) as { replicas: number }).replicas, 2);
    assert.equal((run(0.1) as { replicas: number }).replicas, 3);
  });
});

describe('averageValueReplicas (per-pod average)', () => {
  const Mi = 2 ** 20;
  const cases: { name: string; current: number; target: number; pods: PodSpec[]; want: number | string }[] = [
    { name: '150Mi against 100Mi grows 2 to 3', current: 2, target: 100 * Mi, pods: [ready(150 * Mi), ready(150 * Mi)], want: 3 },
    {
      name: '30Mi against 100Mi shrinks 4 to 2',
      current: 4,
      target: 100 * Mi,
      pods: [ready(30 * Mi), ready(30 * Mi), ready(30 * Mi), ready(30 * Mi)],
      want: 2,
    },
    { name: 'within tolerance', current: 2, target: 100 * Mi, pods: [ready(105 * Mi), ready(105 * Mi)], want: 2 },
    { name: 'missing on a scale down counts as the target', current: 3, target: 100 * Mi, pods: [ready(10 * Mi), ready(10 * Mi), ready(undefined)], want: 2 },
    { name: 'no pods', current: 1, target: 100 * Mi, pods: [], want: 'no pods returned by selector while calculating replica count' },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const { pods, metrics } = build(c.pods, 'memory');
      const got = averageValueReplicas({
        currentReplicas: c.current,
        resource: 'memory',
        tolerances: TOLERANCES,
        pods,
        metrics,
        timing: { now: NOW },
        targetAverage: c.target,
      });
      if (typeof c.want === 'string') return assert.deepEqual(got, { error: c.want });
      assert.ok(!('error' in got), JSON.stringify(got));
      assert.equal(got.replicas, c.want);
    });
  }
});

describe('pod grouping, requests and units', () => {
  it('groups each pod once', () => {
    const { pods, metrics } = build([ready(1), { phase: 'Pending' }, ready(undefined), { phase: 'Succeeded' }, { use: 1, ready: ['False', 1], started: 2 }]);
    const g = groupPods(pods, metrics, 'cpu', { now: NOW });
    assert.deepEqual(
      { ready: g.readyPodCount, unready: [...g.unready], missing: [...g.missing], ignored: [...g.ignored] },
      { ready: 1, unready: ['p1', 'p4'], missing: ['p2'], ignored: ['p3'] },
    );
  });

  it('sums requests over containers, or takes one container', () => {
    const pod = {
      metadata: { name: 'p' },
      spec: {
        containers: [
          { name: 'a', resources: { requests: { cpu: '250m' } } },
          { name: 'b', resources: { requests: { cpu: '1' } } },
        ],
      },
    } as unknown as Pod;
    assert.deepEqual(podRequests([pod], 'cpu'), new Map([['p', 1250]]));
    assert.deepEqual(podRequests([pod], 'cpu', 'b'), new Map([['p', 1000]]));
    assert.deepEqual(podRequests([pod], 'memory'), { error: 'missing request for memory in container a of Pod p' });
  });

  it('converts quantities both ways', () => {
    assert.equal(resourceValue('cpu', '250m'), 250);
    assert.equal(resourceValue('cpu', 2), 2000);
    assert.equal(resourceValue('memory', '100Mi'), 100 * 2 ** 20);
    assert.equal(formatResourceValue('cpu', 250), '250m');
    assert.equal(formatResourceValue('cpu', 2000), '2');
    assert.equal(formatResourceValue('memory', 120 * 2 ** 20), '120Mi');
    assert.equal(formatResourceValue('memory', 1000 * 1024 + 3), '1000Ki');
  });
});
