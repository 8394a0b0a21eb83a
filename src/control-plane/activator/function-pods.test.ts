// Which function pods serve, which are probed, and least-in-flight picking.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../../core/api/pod.js';
import { isServing, needsProbe, pickPod, podFacts, servingPods, type PodFacts, type ProbeView } from './function-pods.js';

function pod(
  o: {
    name?: string;
    version?: string;
    ip?: string;
    ready?: boolean;
    deleting?: boolean;
    phase?: string;
    ports?: { name?: string; containerPort: number }[];
  } = {},
): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: o.name ?? 'hello-v1-abc',
      namespace: 'ns',
      uid: `uid-${o.name ?? 'hello-v1-abc'}`,
      labels: { 'minik8s.io/function': 'hello', 'minik8s.io/function-version': o.version ?? '1' },
      ...(o.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
    },
    spec: { containers: [{ name: 'function', image: 'x', ...(o.ports ? { ports: o.ports } : {}) }] },
    status: {
      phase: o.phase ?? 'Running',
      ...(o.ip ? { podIP: o.ip } : {}),
      conditions: [{ type: 'Ready', status: o.ready ? 'True' : 'False' }],
    },
  } as unknown as Pod;
}

const facts = (o: Parameters<typeof pod>[0]) => podFacts(pod(o))!;
const noProbes: ProbeView = { probedHealthy: new Set(), everKubeletReady: new Set() };

describe('podFacts', () => {
  it('reads the function, version, address, port and state', () => {
    assert.deepEqual(facts({ ip: '10.0.0.5', ready: true, ports: [{ containerPort: 9000 }, { name: 'http', containerPort: 8080 }] }), {
      key: 'ns/hello-v1-abc',
      uid: 'uid-hello-v1-abc',
      functionKey: 'ns/hello',
      version: 1,
      ip: '10.0.0.5',
      port: 8080,
      kubeletReady: true,
      deleting: false,
      finished: false,
    });
    assert.equal(facts({}).port, 8080);
    assert.equal(facts({ phase: 'Failed' }).finished, true);
  });

  it('ignores pods of no function', () => {
    const p = pod();
    p.metadata.labels = { app: 'web' };
    assert.equal(podFacts(p), undefined);
  });
});

describe('serving and probing', () => {
  const cases: [string, PodFacts, ProbeView, { serving: boolean; probe: boolean }][] = [
    ['no address yet', facts({}), noProbes, { serving: false, probe: false }],
    ['address, not ready: probe it', facts({ ip: '10.0.0.5' }), noProbes, { serving: false, probe: true }],
    [
      'probed healthy before the kubelet said so: serving',
      facts({ ip: '10.0.0.5' }),
      { probedHealthy: new Set(['uid-hello-v1-abc']), everKubeletReady: new Set() },
      { serving: true, probe: false },
    ],
    ['kubelet Ready', facts({ ip: '10.0.0.5', ready: true }), noProbes, { serving: true, probe: false }],
    [
      'kubelet said Ready once, now not: its word counts, no probe',
      facts({ ip: '10.0.0.5' }),
      { probedHealthy: new Set(['uid-hello-v1-abc']), everKubeletReady: new Set(['uid-hello-v1-abc']) },
      { serving: false, probe: false },
    ],
    ['being deleted', facts({ ip: '10.0.0.5', ready: true, deleting: true }), noProbes, { serving: false, probe: false }],
    ['finished', facts({ ip: '10.0.0.5', ready: true, phase: 'Succeeded' }), noProbes, { serving: false, probe: false }],
  ];
  for (const [name, p, probes, want] of cases) {
    it(name, () => {
      assert.equal(isServing(p, probes), want.serving);
      assert.equal(needsProbe(p, probes), want.probe);
    });
  }

  it('prefers the current version, and falls back to any serving pod during a soft update', () => {
    const old = facts({ name: 'hello-v1-a', version: '1', ip: '10.0.0.1', ready: true });
    const fresh = facts({ name: 'hello-v2-a', version: '2', ip: '10.0.0.2', ready: true });
    const starting = facts({ name: 'hello-v2-b', version: '2', ip: '10.0.0.3' });
    assert.deepEqual(
      servingPods([old, fresh, starting], noProbes, 2).map((p) => p.key),
      ['ns/hello-v2-a'],
    );
    assert.deepEqual(
      servingPods([old, starting], noProbes, 2).map((p) => p.key),
      ['ns/hello-v1-a'],
    );
    assert.deepEqual(
      servingPods([old, fresh], noProbes, undefined).map((p) => p.key),
      ['ns/hello-v1-a', 'ns/hello-v2-a'],
    );
  });
});

describe('pickPod', () => {
  const pods = ['a', 'b', 'c'].map((key) => ({ key }));
  const load = (m: Record<string, number>) => (k: string) => m[k] ?? 0;
  const cases: [string, Record<string, number>, number, string[], string | undefined][] = [
    ['least in flight', { a: 3, b: 1, c: 2 }, 0, [], 'b'],
    ['ties rotate with the turn', {}, 0, [], 'a'],
    ['ties rotate with the turn (next)', {}, 1, [], 'b'],
    ['ties rotate with the turn (wraps)', {}, 5, [], 'c'],
    ['an excluded pod is skipped even when idlest', { a: 2, b: 0, c: 1 }, 0, ['b'], 'c'],
    ['all excluded: none', {}, 0, ['a', 'b', 'c'], undefined],
  ];
  for (const [name, inFlight, turn, exclude, want] of cases) {
    it(name, () => assert.equal(pickPod(pods, load(inFlight), turn, new Set(exclude))?.key, want));
  }
  it('no pods: none', () =>
    assert.equal(
      pickPod([], () => 0, 0),
      undefined,
    ));
});
