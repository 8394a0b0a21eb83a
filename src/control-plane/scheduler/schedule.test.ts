// schedule(), table-driven: which node each policy picks, how consecutive decisions spread, and kube-scheduler's FailedScheduling message.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../../core/api/pod.js';
import { podInfo } from './pod-info.js';
import { feasibleNodesToFind, NO_NODES_MESSAGE, schedule, unschedulableMessage, type SchedulingState } from './schedule.js';
import type { SchedulerCache } from './scheduler-cache.js';
import { cacheOf, node, pod, sameNodeTerm, type FixtureNode, type FixturePod } from './scheduler-fixtures.js';
import type { SchedulerPolicy } from './scores.js';

/** Schedules pods one after another, assuming each where it went (as the scheduler does), and returns the node names. */
function placeAll(cache: SchedulerCache, pods: readonly Pod[], policy: SchedulerPolicy, state: SchedulingState = {}): (string | undefined)[] {
  const out: (string | undefined)[] = [];
  for (const p of pods) {
    const info = podInfo(p);
    const result = schedule(info, cache, policy, state);
    state = result.state;
    if (result.nodeName) cache.assume(info, result.nodeName);
    out.push(result.nodeName);
  }
  return out;
}

const three = (extra: Partial<FixtureNode> = {}) => ['n1', 'n2', 'n3'].map((name) => node({ name, ...extra }));
const many = (n: number, p: Partial<FixturePod> = {}) => Array.from({ length: n }, (_, i) => pod({ name: `p${i}`, ...p }));

describe('schedule: picking a node', () => {
  const cases: {
    name: string;
    nodes: FixtureNode[];
    existing?: FixturePod[];
    pod: FixturePod;
    policy: SchedulerPolicy;
    state?: SchedulingState;
    want: string;
  }[] = [
    {
      name: 'least-allocated: the node with the most free memory and cpu',
      nodes: [
        { name: 'n1', memory: '4Gi' },
        { name: 'n2', memory: '16Gi' },
        { name: 'n3', memory: '8Gi' },
      ],
      pod: { name: 'p', memory: '1Gi' },
      policy: 'least-allocated',
      want: 'n2',
    },
    {
      name: 'least-allocated counts what is bound',
      nodes: [
        { name: 'n1', memory: '8Gi' },
        { name: 'n2', memory: '8Gi' },
      ],
      existing: [{ name: 'a', memory: '4Gi', nodeName: 'n1' }],
      pod: { name: 'p', memory: '1Gi' },
      policy: 'least-allocated',
      want: 'n2',
    },
    {
      name: 'fewest-pods',
      nodes: [{ name: 'n1' }, { name: 'n2' }, { name: 'n3' }],
      existing: [
        { name: 'a', nodeName: 'n1' },
        { name: 'b', nodeName: 'n2' },
        { name: 'c', nodeName: 'n2' },
      ],
      pod: { name: 'p' },
      policy: 'fewest-pods',
      want: 'n3',
    },
    {
      name: 'balanced: cpu and memory filling in step',
      nodes: [
        { name: 'n1', cpu: '4', memory: '4Gi' },
        { name: 'n2', cpu: '4', memory: '4Gi' },
      ],
      existing: [
        { name: 'a', cpu: '2', memory: '200Mi', nodeName: 'n1' },
        { name: 'b', cpu: '100m', memory: '2Gi', nodeName: 'n2' },
      ],
      pod: { name: 'p', cpu: '1800m', memory: '100Mi' },
      policy: 'balanced',
      want: 'n2',
    },
    {
      name: 'round-robin: the next node after the last one chosen',
      nodes: [{ name: 'n1' }, { name: 'n2' }, { name: 'n3' }],
      pod: { name: 'p' },
      policy: 'round-robin',
      state: { after: 'n1' },
      want: 'n2',
    },
    {
      name: 'round-robin wraps around',
      nodes: [{ name: 'n1' }, { name: 'n2' }, { name: 'n3' }],
      pod: { name: 'p' },
      policy: 'round-robin',
      state: { after: 'n3' },
      want: 'n1',
    },
    {
      name: 'round-robin skips nodes that do not fit',
      nodes: [{ name: 'n1' }, { name: 'n2', ready: false }, { name: 'n3' }],
      pod: { name: 'p' },
      policy: 'round-robin',
      state: { after: 'n1' },
      want: 'n3',
    },
    {
      name: 'round-robin after a node that has gone',
      nodes: [{ name: 'n1' }, { name: 'n3' }],
      pod: { name: 'p' },
      policy: 'round-robin',
      state: { after: 'n2' },
      want: 'n3',
    },
    {
      name: 'only nodes that pass every filter are ranked',
      nodes: [
        { name: 'n1', memory: '64Gi', labels: { disk: 'hdd' } },
        { name: 'n2', memory: '2Gi', labels: { disk: 'ssd' } },
      ],
      pod: { name: 'p', nodeSelector: { disk: 'ssd' } },
      policy: 'least-allocated',
      want: 'n2',
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const cache = cacheOf(c.nodes.map(node), (c.existing ?? []).map(pod));
      const result = schedule(podInfo(pod(c.pod)), cache, c.policy, c.state ?? {});
      assert.equal(result.nodeName, c.want, result.nodeName === undefined ? result.message : '');
      if (c.policy === 'round-robin') assert.deepEqual(result.state, { after: c.want });
    });
  }
});

describe('schedule: consecutive decisions', () => {
  for (const policy of ['least-allocated', 'fewest-pods', 'balanced', 'round-robin'] as const) {
    it(`${policy} spreads equal pods evenly over equal nodes`, () => {
      const placed = placeAll(cacheOf(three()), many(9, { cpu: '100m', memory: '128Mi' }), policy);
      const counts = Object.fromEntries(['n1', 'n2', 'n3'].map((n) => [n, placed.filter((x) => x === n).length]));
      assert.deepEqual(counts, { n1: 3, n2: 3, n3: 3 }, placed.join(','));
    });
  }

  it('least-allocated spreads pods that request nothing too', () => {
    const placed = placeAll(cacheOf(three()), many(6), 'least-allocated');
    assert.equal(new Set(placed).size, 3, placed.join(','));
  });

  it('an assumed pod counts for the next decision: a node fills up', () => {
    const placed = placeAll(cacheOf([node({ name: 'n1', cpu: '1' })]), many(3, { cpu: '400m' }), 'least-allocated');
    assert.deepEqual(placed, ['n1', 'n1', undefined]);
  });

  it('anti-affinity pairs never share a node, and the third waits', () => {
    const web = (name: string) =>
      pod({
        name,
        labels: { app: 'web' },
        affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [sameNodeTerm('web')] } } as FixturePod['affinity'],
      });
    const placed = placeAll(cacheOf(three().slice(0, 2)), [web('a'), web('b'), web('c')], 'least-allocated');
    assert.notEqual(placed[0], placed[1]);
    assert.equal(placed[2], undefined);
  });

  it('affinity keeps a pod with its partner', () => {
    const placed = placeAll(
      cacheOf(three()),
      [
        pod({ name: 'db', labels: { app: 'db' } }),
        pod({ name: 'filler1' }),
        pod({ name: 'app', affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [sameNodeTerm('db')] } } as FixturePod['affinity'] }),
      ],
      'round-robin',
    );
    assert.equal(placed[2], placed[0]);
  });
});

describe('schedule: big clusters', () => {
  it("looks at a share of the nodes, as kube-scheduler's adaptive percentageOfNodesToScore does", () => {
    assert.deepEqual([3, 99, 100, 500, 1000, 5000, 10_000].map(feasibleNodesToFind), [3, 99, 100, 230, 420, 500, 500]);
  });

  it('scores only the nodes it needs, then carries on from where it stopped', () => {
    const nodes = Array.from({ length: 300 }, (_, i) => node({ name: `n${String(i).padStart(3, '0')}` }));
    const cache = cacheOf(nodes);
    const first = schedule(podInfo(pod({ name: 'a' })), cache, 'least-allocated', {});
    assert.equal(first.nodeName, 'n000');
    assert.deepEqual(first.state, { after: 'n143' }, '144 of 300 nodes (48%)');
    const second = schedule(podInfo(pod({ name: 'b' })), cache, 'least-allocated', first.state);
    assert.equal(second.nodeName, 'n144');
    assert.deepEqual(second.state, { after: 'n287' });
  });

  it('still looks at every node before saying none fits', () => {
    const nodes = Array.from({ length: 300 }, (_, i) => node({ name: `n${String(i).padStart(3, '0')}`, memory: '1Gi' }));
    const result = schedule(podInfo(pod({ name: 'a', memory: '2Gi' })), cacheOf(nodes), 'fewest-pods', { after: 'n123' });
    assert.equal(result.nodeName === undefined && result.message, '0/300 nodes are available: 300 Insufficient memory.');
  });
});

describe('schedule: no node fits', () => {
  it("counts the reasons over the nodes, sorted by reason: the issue's example", () => {
    const cache = cacheOf([
      node({ name: 'n1', memory: '1Gi' }),
      node({ name: 'n2', memory: '1Gi' }),
      node({ name: 'cp', taints: [{ key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' }] }),
    ]);
    const result = schedule(podInfo(pod({ name: 'p', memory: '2Gi' })), cache, 'least-allocated', {});
    assert.equal(result.nodeName, undefined);
    assert.equal(
      result.nodeName === undefined && result.message,
      '0/3 nodes are available: 2 Insufficient memory, 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }.',
    );
  });

  it('a node failing on two resources counts for both', () => {
    const cache = cacheOf([node({ name: 'n1', cpu: '1', memory: '1Gi' }), node({ name: 'n2', ready: false })]);
    const result = schedule(podInfo(pod({ name: 'p', cpu: '2', memory: '2Gi' })), cache, 'fewest-pods', { after: 'n1' });
    assert.equal(
      result.nodeName === undefined && result.message,
      '0/2 nodes are available: 1 Insufficient cpu, 1 Insufficient memory, 1 node(s) were not ready.',
    );
    assert.deepEqual(result.state, { after: 'n1' }, 'a failure leaves the rotation where it was');
  });

  it('says so when there are no nodes', () => {
    const result = schedule(podInfo(pod({ name: 'p' })), cacheOf([]), 'least-allocated', {});
    assert.equal(result.nodeName === undefined && result.message, NO_NODES_MESSAGE);
  });

  it('formats like kube-scheduler', () => {
    assert.equal(
      unschedulableMessage(
        5,
        new Map([
          ["node(s) didn't match Pod's node affinity/selector", 3],
          ['Too many pods', 2],
        ]),
      ),
      "0/5 nodes are available: 2 Too many pods, 3 node(s) didn't match Pod's node affinity/selector.",
    );
  });
});
