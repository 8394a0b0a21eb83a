// rollout: kubectl's status messages, history table, undo target and template, --timeout parsing.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Deployment } from '../core/api/deployment.js';
import type { ReplicaSet } from '../core/api/replicaset.js';
import type { DaemonSet } from '../core/api/daemonset.js';
import { daemonSetRolloutStatusMessage, formatHistory, formatRevision, parseTimeout, rolloutStatusMessage, templateForUndo, undoTarget } from './rollout.js';

const deploy = (generation: number, status: Deployment['status']): Deployment =>
  ({
    metadata: { name: 'web', uid: 'd', generation },
    spec: { replicas: 3, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'v2' }] } } },
    status,
  }) as unknown as Deployment;

const rs = (revision: number, image: string, cause?: string): ReplicaSet =>
  ({
    metadata: {
      name: `web-${revision}`,
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'd', controller: true }],
      annotations: { 'deployment.kubernetes.io/revision': String(revision), ...(cause ? { 'kubernetes.io/change-cause': cause } : {}) },
    },
    spec: { template: { metadata: { labels: { app: 'web', 'pod-template-hash': `h${revision}` } }, spec: { containers: [{ name: 'c', image }] } } },
  }) as unknown as ReplicaSet;

describe('rolloutStatusMessage', () => {
  const cases: [string, Deployment, boolean, string][] = [
    ['spec not yet observed', deploy(2, { observedGeneration: 1 }), false, 'Waiting for deployment spec update to be observed...'],
    [
      'new replicas being made',
      deploy(2, { observedGeneration: 2, updatedReplicas: 1, replicas: 4 }),
      false,
      'Waiting for deployment "web" rollout to finish: 1 out of 3 new replicas have been updated...',
    ],
    [
      'old ones terminating',
      deploy(2, { observedGeneration: 2, updatedReplicas: 3, replicas: 4 }),
      false,
      'Waiting for deployment "web" rollout to finish: 1 old replicas are pending termination...',
    ],
    [
      'not all available',
      deploy(2, { observedGeneration: 2, updatedReplicas: 3, replicas: 3, availableReplicas: 1 }),
      false,
      'Waiting for deployment "web" rollout to finish: 1 of 3 updated replicas are available...',
    ],
    ['done', deploy(2, { observedGeneration: 2, updatedReplicas: 3, replicas: 3, availableReplicas: 3 }), true, 'deployment "web" successfully rolled out'],
  ];
  for (const [name, d, done, message] of cases) it(name, () => assert.deepEqual(rolloutStatusMessage(d), { done, message }));

  it('a passed progress deadline fails', () => {
    const s = rolloutStatusMessage(
      deploy(1, { observedGeneration: 1, conditions: [{ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded' }] }),
    );
    assert.equal(s.failed, true);
    assert.equal(s.message, 'deployment "web" exceeded its progress deadline');
  });
});

describe('history and undo', () => {
  const d = deploy(1, {});
  const rses = [rs(2, 'v2'), rs(1, 'v1', 'first')];

  it('lists revisions oldest first with their change cause', () => {
    assert.equal(formatHistory(d, rses), 'deployment.apps/web\nREVISION  CHANGE-CAUSE\n1         first\n2         <none>\n\n');
  });

  it("shows one revision's pod template without the hash label, and says when there is no such revision", () => {
    const out = formatRevision(d, rses, 1);
    assert.match(out, /^deployment\.apps\/web with revision #1\nChange-Cause: first\nPod Template:\n/);
    assert.match(out, /image: v1/);
    assert.doesNotMatch(out, /pod-template-hash/);
    assert.throws(() => formatRevision(d, rses, 7), /unable to find the specified revision 7/);
  });

  it('undo goes to the previous revision, or the one asked for, without the hash label', () => {
    assert.equal(undoTarget(d, rses, undefined).metadata.name, 'web-1');
    assert.equal(undoTarget(d, rses, 2).metadata.name, 'web-2');
    assert.throws(() => undoTarget(d, rses, 7), /unable to find specified revision 7 in history/);
    assert.throws(() => undoTarget(d, [rses[0]!], undefined), /no rollout history found/);
    assert.deepEqual(templateForUndo(rses[1]!).metadata.labels, { app: 'web' });
  });

  it('parses --timeout', () => {
    assert.equal(parseTimeout(undefined), 0);
    assert.equal(parseTimeout('30'), 30);
    assert.equal(parseTimeout('2m'), 120);
    assert.throws(() => parseTimeout('soon'), /--timeout/);
  });
});

describe('daemonSetRolloutStatusMessage', () => {
  const ds = (generation: number, status: Record<string, number>) => ({ metadata: { name: 'agent', generation }, status }) as unknown as DaemonSet;
  const cases: [string, DaemonSet, boolean, string][] = [
    ['a spec not yet seen', ds(2, { observedGeneration: 1 }), false, 'Waiting for daemon set spec update to be observed...'],
    [
      'pods still to update',
      ds(2, { observedGeneration: 2, desiredNumberScheduled: 3, updatedNumberScheduled: 1 }),
      false,
      'Waiting for daemon set "agent" rollout to finish: 1 out of 3 new pods have been updated...',
    ],
    [
      'updated pods not yet available',
      ds(2, { observedGeneration: 2, desiredNumberScheduled: 3, updatedNumberScheduled: 3, numberAvailable: 2 }),
      false,
      'Waiting for daemon set "agent" rollout to finish: 2 of 3 updated pods are available...',
    ],
    [
      'done',
      ds(2, { observedGeneration: 2, desiredNumberScheduled: 3, updatedNumberScheduled: 3, numberAvailable: 3 }),
      true,
      'daemon set "agent" successfully rolled out',
    ],
  ];
  for (const [name, d, done, message] of cases) it(name, () => assert.deepEqual(daemonSetRolloutStatusMessage(d), { done, message }));
});
