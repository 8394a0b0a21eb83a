// Scores, table-driven: the seeds' least-allocated formula, fewest pods, Kubernetes' balanced allocation, and how each ranks nodes.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { podInfo } from './pod-info.js';
import { cacheOf, node, pod, type FixtureNode, type FixturePod } from './scheduler-fixtures.js';
import { balancedAllocationScore, balancedScore, fewestPodsScore, leastAllocatedFractionScore, leastAllocatedScore, type Score } from './scores.js';

interface Case {
  name: string;
  node: FixtureNode;
  existing?: FixturePod[];
  pod: FixturePod;
  want: number;
}

function run(score: Score, cases: readonly Case[]): void {
  for (const c of cases) {
    it(c.name, () => {
      const cache = cacheOf(
        [node(c.node)],
        (c.existing ?? []).map((p) => pod({ ...p, nodeName: c.node.name })),
      );
      const got = score(podInfo(pod(c.pod)), cache.nodeOf(c.node.name)!);
      assert.ok(Math.abs(got - c.want) < 1e-9, `got ${got}, want ${c.want}`);
    });
  }
}

describe('leastAllocatedScore (free memory MiB + 1000 x (1 - cpu use) x cores)', () =>
  run(leastAllocatedScore, [
    {
      name: 'an empty node, a pod of 1 core and 1 GiB',
      node: { name: 'n', cpu: '4', memory: '8Gi' },
      pod: { name: 'p', cpu: '1', memory: '1Gi' },
      want: 7 * 1024 + 1000 * (1 - 1 / 4) * 4,
    },
    {
      name: 'what is bound counts',
      node: { name: 'n', cpu: '4', memory: '8Gi' },
      existing: [{ name: 'a', cpu: '2', memory: '4Gi' }],
      pod: { name: 'p', cpu: '1', memory: '1Gi' },
      want: 3 * 1024 + 1000 * (1 - 3 / 4) * 4,
    },
    {
      name: 'a pod that requests nothing counts as 100m and 200 MiB (so such pods spread)',
      node: { name: 'n', cpu: '2', memory: '1Gi' },
      pod: { name: 'p' },
      want: 1024 - 200 + 1000 * (1 - 0.1 / 2) * 2,
    },
    { name: 'a node with no cpu scores its memory only', node: { name: 'n', cpu: '0', memory: '1Gi' }, pod: { name: 'p', memory: '512Mi' }, want: 512 },
  ]));

describe('fewestPodsScore', () =>
  run(fewestPodsScore, [
    { name: 'an empty node', node: { name: 'n' }, pod: { name: 'p' }, want: 0 },
    { name: 'two pods', node: { name: 'n' }, existing: [{ name: 'a' }, { name: 'b' }], pod: { name: 'p' }, want: -2 },
    { name: 'finished pods are not running', node: { name: 'n' }, existing: [{ name: 'a', phase: 'Succeeded' }, { name: 'b' }], pod: { name: 'p' }, want: -1 },
  ]));

describe('balancedAllocationScore (100 x (1 - std of cpu and memory fractions))', () =>
  run(balancedAllocationScore, [
    { name: 'cpu and memory filled alike', node: { name: 'n', cpu: '4', memory: '4Gi' }, pod: { name: 'p', cpu: '2', memory: '2Gi' }, want: 100 },
    {
      name: 'cpu half, memory a quarter',
      node: { name: 'n', cpu: '4', memory: '4Gi' },
      pod: { name: 'p', cpu: '2', memory: '1Gi' },
      want: 100 * (1 - 0.25 / 2),
    },
    { name: 'fractions cap at 1', node: { name: 'n', cpu: '1', memory: '4Gi' }, pod: { name: 'p', cpu: '3', memory: '0' }, want: 50 },
  ]));

describe("leastAllocatedFractionScore (Kubernetes' LeastAllocated, 0-100)", () =>
  run(leastAllocatedFractionScore, [
    { name: 'half of each left', node: { name: 'n', cpu: '4', memory: '4Gi' }, pod: { name: 'p', cpu: '2', memory: '2Gi' }, want: 50 },
    { name: 'all cpu used, all memory free', node: { name: 'n', cpu: '1', memory: '4Gi' }, pod: { name: 'p', cpu: '1', memory: '0' }, want: 50 },
  ]));

describe('ranking', () => {
  const big = node({ name: 'big', cpu: '8', memory: '16Gi' });
  const small = node({ name: 'small', cpu: '2', memory: '2Gi' });
  const busy = [pod({ name: 'a', nodeName: 'big' }), pod({ name: 'b', nodeName: 'big' })];
  const cache = cacheOf([big, small], busy);
  const p = podInfo(pod({ name: 'p', cpu: '500m', memory: '512Mi' }));
  const best = (score: Score) => ['big', 'small'].sort((x, y) => score(p, cache.nodeOf(y)!) - score(p, cache.nodeOf(x)!))[0];

  it('least-allocated prefers the node with more free resources', () => assert.equal(best(leastAllocatedScore), 'big'));
  it('fewest-pods prefers the node with fewer pods', () => assert.equal(best(fewestPodsScore), 'small'));
  it('balanced prefers the emptier node when both are balanced alike', () => assert.equal(best(balancedScore), 'big'));
});
