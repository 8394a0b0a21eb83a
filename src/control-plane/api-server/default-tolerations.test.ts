// DefaultTolerationSeconds: which pods get the not-ready and unreachable tolerations, and which keep their own.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod, Toleration } from '../../core/api/pod.js';
import { withDefaultTolerations } from './default-tolerations.js';

const pod = (tolerations?: Toleration[]) =>
  ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'default' },
    spec: { containers: [{ name: 'c', image: 'busybox' }], ...(tolerations ? { tolerations } : {}) },
  }) as unknown as Pod;

const notReady = (s: number): Toleration => ({ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: s });
const unreachable = (s: number): Toleration => ({ key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: s });

describe('withDefaultTolerations', () => {
  const cases: [string, Toleration[] | undefined, Toleration[]][] = [
    ['no tolerations: both added', undefined, [notReady(300), unreachable(300)]],
    [
      'unrelated ones are kept, both added',
      [{ key: 'gpu', operator: 'Exists', effect: 'NoSchedule' }],
      [{ key: 'gpu', operator: 'Exists', effect: 'NoSchedule' }, notReady(300), unreachable(300)],
    ],
    ['its own unreachable toleration wins', [unreachable(0)], [unreachable(0), notReady(300)]],
    [
      'a forever toleration (no seconds) wins',
      [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' }],
      [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' }, unreachable(300)],
    ],
    [
      'an empty effect covers NoExecute',
      [{ key: 'node.kubernetes.io/unreachable', operator: 'Exists' }],
      [{ key: 'node.kubernetes.io/unreachable', operator: 'Exists' }, notReady(300)],
    ],
    [
      'a NoSchedule one does not',
      [{ key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoSchedule' }],
      [{ key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoSchedule' }, notReady(300), unreachable(300)],
    ],
    ['tolerate-everything covers both', [{ operator: 'Exists' }], [{ operator: 'Exists' }]],
  ];
  for (const [name, given, want] of cases) {
    it(name, () => assert.deepEqual(withDefaultTolerations(pod(given), 300).spec.tolerations, want));
  }

  it('uses the configured seconds and leaves the input alone', () => {
    const p = pod();
    assert.deepEqual(withDefaultTolerations(p, 30).spec.tolerations, [notReady(30), unreachable(30)]);
    assert.equal(p.spec.tolerations, undefined);
  });
});
