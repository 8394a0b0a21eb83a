// PodDisruptionBudget decisions: allowed disruptions from minAvailable/maxUnavailable (numbers and percentages), disrupted pods, and the eviction check.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as v from 'valibot';
import type { OwnerReference } from '../../core/api/meta.js';
import { podDisruptionBudgetSchema, type PodDisruptionBudget } from '../../core/api/poddisruptionbudget.js';
import type { Pod } from '../../core/api/pod.js';
import { EVICTION_REFUSED_MESSAGE, evictionVerdict, planDisruption, type ScaleOf } from './disruption-plan.js';

const NOW = new Date('2026-01-01T00:10:00Z');

function pdb(spec: Record<string, unknown>, status: Record<string, unknown> = {}): PodDisruptionBudget {
  return v.parse(podDisruptionBudgetSchema, {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name: 'web', namespace: 'ns', generation: 1 },
    spec: { selector: { matchLabels: { app: 'web' } }, ...spec },
    status,
  });
}

function pod(name: string, o: { ready?: boolean; owner?: string | null; deleting?: boolean; labels?: Record<string, string> } = {}): Pod {
  const owner = o.owner === undefined ? 'rs-1' : o.owner;
  const ref: OwnerReference[] = owner ? [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: owner, uid: owner, controller: true }] : [];
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'ns',
      labels: o.labels ?? { app: 'web' },
      ownerReferences: ref,
      ...(o.deleting ? { deletionTimestamp: '2026-01-01T00:09:00Z' } : {}),
    },
    spec: { containers: [{ name: 'c', image: 'i' }] },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }] },
  } as Pod;
}

const scales: ScaleOf = (_ns, ref) => ({ 'rs-1': 3, 'rs-2': 2 })[ref.uid];
const three = [pod('a'), pod('b'), pod('c')];

describe('planDisruption', () => {
  const cases: {
    name: string;
    spec: Record<string, unknown>;
    pods: Pod[];
    allowed: number;
    healthy: number;
    desired: number;
    expected: number;
    reason: string;
  }[] = [
    { name: 'minAvailable 2 of 3 healthy', spec: { minAvailable: 2 }, pods: three, allowed: 1, healthy: 3, desired: 2, expected: 3, reason: 'SufficientPods' },
    { name: 'minAvailable 3 of 3', spec: { minAvailable: 3 }, pods: three, allowed: 0, healthy: 3, desired: 3, expected: 3, reason: 'InsufficientPods' },
    {
      name: 'minAvailable 2 with one not Ready',
      spec: { minAvailable: 2 },
      pods: [pod('a'), pod('b', { ready: false }), pod('c')],
      allowed: 0,
      healthy: 2,
      desired: 2,
      expected: 3,
      reason: 'InsufficientPods',
    },
    {
      name: 'a terminating pod is not healthy',
      spec: { minAvailable: 1 },
      pods: [pod('a'), pod('b', { deleting: true })],
      allowed: 0,
      healthy: 1,
      desired: 1,
      expected: 2,
      reason: 'InsufficientPods',
    },
    {
      name: 'minAvailable 50% of a scale of 3 rounds up to 2',
      spec: { minAvailable: '50%' },
      pods: three,
      allowed: 1,
      healthy: 3,
      desired: 2,
      expected: 3,
      reason: 'SufficientPods',
    },
    { name: 'maxUnavailable 1 of 3', spec: { maxUnavailable: 1 }, pods: three, allowed: 1, healthy: 3, desired: 2, expected: 3, reason: 'SufficientPods' },
    { name: 'maxUnavailable 0', spec: { maxUnavailable: 0 }, pods: three, allowed: 0, healthy: 3, desired: 3, expected: 3, reason: 'InsufficientPods' },
    {
      name: 'maxUnavailable counts the scale, not the pods that exist',
      spec: { maxUnavailable: 1 },
      pods: [pod('a'), pod('b')],
      allowed: 0,
      healthy: 2,
      desired: 2,
      expected: 3,
      reason: 'InsufficientPods',
    },
    {
      name: 'two controllers add their scales',
      spec: { maxUnavailable: '20%' },
      pods: [...three, pod('d', { owner: 'rs-2' }), pod('e', { owner: 'rs-2' })],
      allowed: 1,
      healthy: 5,
      desired: 4,
      expected: 5,
      reason: 'SufficientPods',
    },
    {
      name: 'maxUnavailable with an unmanaged pod fails the sync',
      spec: { maxUnavailable: 1 },
      pods: [pod('a', { owner: null })],
      allowed: 0,
      healthy: 1,
      desired: 0,
      expected: 0,
      reason: 'SyncFailed',
    },
    {
      name: 'minAvailable as a number needs no controller',
      spec: { minAvailable: 0 },
      pods: [pod('a', { owner: null })],
      allowed: 1,
      healthy: 1,
      desired: 0,
      expected: 1,
      reason: 'SufficientPods',
    },
    {
      name: 'pods the selector does not match are not counted',
      spec: { minAvailable: 1 },
      pods: [pod('a'), pod('x', { labels: { app: 'db' } })],
      allowed: 0,
      healthy: 1,
      desired: 1,
      expected: 1,
      reason: 'InsufficientPods',
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const { status } = planDisruption(pdb(c.spec), c.pods, scales, NOW);
      assert.deepEqual(
        {
          allowed: status.disruptionsAllowed,
          healthy: status.currentHealthy,
          desired: status.desiredHealthy,
          expected: status.expectedPods,
          reason: status.conditions?.[0]?.reason,
        },
        { allowed: c.allowed, healthy: c.healthy, desired: c.desired, expected: c.expected, reason: c.reason },
      );
      assert.equal(status.conditions?.[0]?.status, c.allowed > 0 ? 'True' : 'False');
    });
  }

  it('a pod granted an eviction is not healthy until it goes or two minutes pass', () => {
    const budget = pdb({ minAvailable: 1 }, { disruptedPods: { a: '2026-01-01T00:09:30Z', b: '2026-01-01T00:01:00Z', gone: '2026-01-01T00:09:30Z' } });
    const plan = planDisruption(budget, three, scales, NOW);
    assert.deepEqual(plan.status.disruptedPods, { a: '2026-01-01T00:09:30Z' });
    assert.equal(plan.status.currentHealthy, 2);
    assert.equal(plan.status.disruptionsAllowed, 1);
    assert.equal(plan.recheckAfterMs, 90_000);
  });

  it('keeps the condition transition time while the condition holds', () => {
    const first = planDisruption(pdb({ minAvailable: 1 }), three, scales, NOW).status;
    const later = planDisruption(pdb({ minAvailable: 1 }, first), three, scales, new Date('2026-01-01T00:20:00Z')).status;
    assert.equal(later.conditions?.[0]?.lastTransitionTime, '2026-01-01T00:10:00Z');
  });
});

describe('evictionVerdict', () => {
  const observed = { observedGeneration: 1, currentHealthy: 3, desiredHealthy: 2, expectedPods: 3 };
  it('takes one disruption and records the pod', () => {
    const verdict = evictionVerdict(pdb({ minAvailable: 2 }, { ...observed, disruptionsAllowed: 1 }), pod('a'), NOW);
    assert.deepEqual(verdict, { allow: true, status: { ...observed, disruptionsAllowed: 0, disruptedPods: { a: '2026-01-01T00:10:00Z' } } });
  });
  it('refuses with 429 and the budget as the cause when none is left', () => {
    const verdict = evictionVerdict(pdb({ minAvailable: 3 }, { ...observed, desiredHealthy: 3, disruptionsAllowed: 0 }), pod('a'), NOW);
    assert.equal(verdict.allow, false);
    const status = !verdict.allow && verdict.error.toStatus();
    assert.deepEqual(status, {
      apiVersion: 'v1',
      kind: 'Status',
      metadata: {},
      status: 'Failure',
      message: EVICTION_REFUSED_MESSAGE,
      reason: 'TooManyRequests',
      details: { causes: [{ reason: 'DisruptionBudget', message: 'The disruption budget web needs 3 healthy pods and has 3 currently' }] },
      code: 429,
    });
  });
  it('refuses while the controller has not seen the budget', () => {
    const verdict = evictionVerdict(pdb({ minAvailable: 1 }, { disruptionsAllowed: 5 }), pod('a'), NOW);
    assert.equal(!verdict.allow && verdict.error.details.causes?.[0]?.message, 'The disruption budget web is still being processed by the server.');
  });
  it('lets an unready pod go without a disruption while the budget is healthy', () => {
    assert.deepEqual(evictionVerdict(pdb({ minAvailable: 2 }, { ...observed, disruptionsAllowed: 0, currentHealthy: 2 }), pod('x', { ready: false }), NOW), {
      allow: true,
    });
  });
  it('lets a finished or terminating pod go', () => {
    const done = { ...pod('a'), status: { phase: 'Succeeded' } } as Pod;
    const budget = pdb({ minAvailable: 3 }, { ...observed, disruptionsAllowed: 0 });
    assert.deepEqual(evictionVerdict(budget, done, NOW), { allow: true });
    assert.deepEqual(evictionVerdict(budget, pod('a', { deleting: true }), NOW), { allow: true });
  });
});

describe('podDisruptionBudgetSchema', () => {
  it('refuses minAvailable and maxUnavailable together', () => {
    const r = v.safeParse(podDisruptionBudgetSchema, {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'x' },
      spec: { minAvailable: 1, maxUnavailable: 1 },
    });
    assert.equal(r.success, false);
  });
});
