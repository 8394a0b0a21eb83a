// Deployment controller: the pure decisions (hash, fenceposts, rolling step, Recreate, history, status) with no I/O.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Deployment } from '../../core/api/deployment.js';
import type { ReplicaSet } from '../../core/api/replicaset.js';
import { POD_TEMPLATE_HASH_LABEL, REVISION_ANNOTATION } from '../../core/api/deployment.js';
import {
  newReplicaSetBody,
  planDeployment,
  podTemplateHash,
  resolveFenceposts,
  rollingStep,
  splitReplicaSets,
  statusChanged,
  templateMatches,
  type DeploymentAction,
} from './deployment.js';

const NOW = new Date('2026-01-01T00:10:00Z');
const D_UID = 'd-uid';

interface DOpts {
  replicas?: number;
  image?: string;
  strategy?: Deployment['spec']['strategy'];
  paused?: boolean;
  revisionHistoryLimit?: number;
  minReadySeconds?: number;
  status?: Deployment['status'];
}

function deploy(o: DOpts = {}): Deployment {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'ns', uid: D_UID, generation: 3 },
    spec: {
      replicas: o.replicas ?? 3,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: o.image ?? 'v2' }] } },
      strategy: o.strategy ?? { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
      minReadySeconds: o.minReadySeconds ?? 0,
      revisionHistoryLimit: o.revisionHistoryLimit ?? 10,
      progressDeadlineSeconds: 600,
      ...(o.paused ? { paused: true } : {}),
    },
    status: o.status ?? {},
  } as unknown as Deployment;
}

/** A ReplicaSet of the Deployment for `image` (as the controller would have made it) with spec replicas and available pods. */
function rs(
  image: string,
  replicas: number,
  avail: number,
  o: { revision?: number; created?: string; owner?: string | null; statusReplicas?: number } = {},
): ReplicaSet {
  const body = newReplicaSetBody(deploy({ image }), { replicas, revision: o.revision ?? 1 }) as ReplicaSet;
  const owner = o.owner === undefined ? D_UID : o.owner;
  return {
    ...body,
    metadata: {
      ...body.metadata,
      uid: `uid-${image}`,
      creationTimestamp: o.created ?? '2026-01-01T00:00:00Z',
      ownerReferences: owner ? [{ ...body.metadata.ownerReferences![0]!, uid: owner }] : undefined,
    },
    spec: body.spec,
    status: { replicas: o.statusReplicas ?? replicas, readyReplicas: avail, availableReplicas: avail },
  } as ReplicaSet;
}

function describeActions(actions: DeploymentAction[]): string[] {
  return actions.map((a) => {
    switch (a.type) {
      case 'create': {
        const body = a.body as ReplicaSet;
        return `create ${body.spec.template.spec.containers[0]!.image}=${body.spec.replicas} rev${body.metadata.annotations![REVISION_ANNOTATION]}`;
      }
      case 'update':
        return `scale ${a.rs.spec.template.spec.containers[0]!.image}=${a.replicas}${a.annotations ? ` rev${a.annotations[REVISION_ANNOTATION]}` : ''}`;
      case 'delete':
        return `delete ${a.rs.spec.template.spec.containers[0]!.image}`;
      default:
        return `${a.type} ${a.rs.spec.template.spec.containers[0]!.image}`;
    }
  });
}

describe('podTemplateHash', () => {
  it('is stable across key order, differs by template and collision count, and uses safe characters', () => {
    const a = deploy().spec.template;
    const reordered = { spec: a.spec, metadata: { labels: { app: 'web' } } } as typeof a;
    assert.equal(podTemplateHash(a), podTemplateHash(reordered));
    assert.notEqual(podTemplateHash(a), podTemplateHash(deploy({ image: 'v1' }).spec.template));
    assert.notEqual(podTemplateHash(a), podTemplateHash(a, 1));
    assert.match(podTemplateHash(a), /^[bcdfghjklmnpqrstvwxz2456789]{10}$/);
  });

  it('names the ReplicaSet and puts the hash in its selector, labels and template labels', () => {
    const body = newReplicaSetBody(deploy(), { replicas: 2, revision: 4 }) as ReplicaSet;
    const hash = podTemplateHash(deploy().spec.template);
    assert.equal(body.metadata.name, `web-${hash}`);
    assert.deepEqual(body.spec.selector.matchLabels, { app: 'web', [POD_TEMPLATE_HASH_LABEL]: hash });
    assert.deepEqual(body.metadata.labels, { app: 'web', [POD_TEMPLATE_HASH_LABEL]: hash });
    assert.deepEqual(body.spec.template.metadata?.labels, { app: 'web', [POD_TEMPLATE_HASH_LABEL]: hash });
    assert.equal(body.metadata.annotations?.[REVISION_ANNOTATION], '4');
    assert.deepEqual(body.metadata.ownerReferences, [
      { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: D_UID, controller: true, blockOwnerDeletion: true },
    ]);
  });

  it("takes a template with Go's creationTimestamp: null (kubectl rollout undo) for the ReplicaSet's own", () => {
    const d = deploy({ image: 'v1' });
    (d.spec.template.metadata as Record<string, unknown>).creationTimestamp = null;
    assert.equal(templateMatches(rs('v1', 3, 3), d), true);
    assert.equal(templateMatches(rs('v2', 3, 3), d), false);
  });

  it('finds the new ReplicaSet by template, the hash label aside', () => {
    const { newRs, old } = splitReplicaSets(deploy({ image: 'v2' }), [rs('v1', 3, 3), rs('v2', 1, 0)]);
    assert.equal(newRs?.spec.template.spec.containers[0]?.image, 'v2');
    assert.deepEqual(
      old.map((r) => r.spec.template.spec.containers[0]!.image),
      ['v1'],
    );
  });
});

describe('resolveFenceposts', () => {
  const cases: [string, number, number | string, number | string, number, number][] = [
    ['defaults 25% of 4', 4, '25%', '25%', 1, 1],
    ['25% of 10: surge up, unavailable down', 10, '25%', '25%', 3, 2],
    ['25% of 1: surge 1, unavailable 0', 1, '25%', '25%', 1, 0],
    ['numbers as given', 5, 2, 1, 2, 1],
    ['0% and 10% of 3 round to 0/0: one unavailable allowed', 3, '0%', '10%', 0, 1],
    ['100% unavailable', 3, 0, '100%', 0, 3],
  ];
  for (const [name, replicas, maxSurge, maxUnavailable, surge, unavailable] of cases) {
    it(name, () => {
      assert.deepEqual(resolveFenceposts(deploy({ replicas, strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge, maxUnavailable } } })), {
        maxSurge: surge,
        maxUnavailable: unavailable,
      });
    });
  }
});

describe('rollingStep', () => {
  type R = [number, number];
  const cases: [string, { replicas: number; surge: number | string; unavailable: number | string }, R, R[], Record<string, number>][] = [
    ['surge 1: new up by one', { replicas: 3, surge: 1, unavailable: 0 }, [0, 0], [[3, 3]], { new: 1 }],
    ['at the surge limit, new not available: wait', { replicas: 3, surge: 1, unavailable: 0 }, [1, 0], [[3, 3]], {}],
    ['new available: old down by one', { replicas: 3, surge: 1, unavailable: 0 }, [1, 1], [[3, 3]], { old0: 2 }],
    ['old down: new up again', { replicas: 3, surge: 1, unavailable: 0 }, [1, 1], [[2, 2]], { new: 2 }],
    ['surge 0 / unavailable 1: old down first', { replicas: 3, surge: 0, unavailable: 1 }, [0, 0], [[3, 3]], { old0: 2 }],
    ['unavailable old pods go first (no available one is lost)', { replicas: 3, surge: 1, unavailable: 0 }, [1, 1], [[3, 1]], { old0: 2 }],
    [
      'oldest ReplicaSet first',
      { replicas: 4, surge: 0, unavailable: 2 },
      [0, 0],
      [
        [2, 2],
        [2, 2],
      ],
      { old0: 0 },
    ],
    ['new above desired: down to desired', { replicas: 2, surge: 1, unavailable: 0 }, [3, 3], [], { new: 2 }],
    ['done: nothing', { replicas: 3, surge: 1, unavailable: 0 }, [3, 3], [[0, 0]], {}],
    ['defaults 25% of 4: new up 1, then old down to keep 3 available', { replicas: 4, surge: '25%', unavailable: '25%' }, [1, 0], [[4, 4]], { old0: 3 }],
  ];
  for (const [name, o, [nr, na], old, want] of cases) {
    it(name, () => {
      const d = deploy({ replicas: o.replicas, strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: o.surge, maxUnavailable: o.unavailable } } });
      const targets = rollingStep(
        d,
        { name: 'new', replicas: nr, available: na },
        old.map(([replicas, available], i) => ({ name: `old${i}`, replicas, available })),
      );
      assert.deepEqual(Object.fromEntries(targets), want);
    });
  }
});

describe('planDeployment', () => {
  const recreate = { type: 'Recreate' as const };
  const cases: [string, Deployment, ReplicaSet[], boolean, string[]][] = [
    ['first sync: the new ReplicaSet with surge allowance', deploy(), [], false, ['create v2=3 rev1']],
    ['new template: new RS at revision 2, one surge pod', deploy(), [rs('v1', 3, 3)], false, ['create v2=1 rev2']],
    ['rolling: old down once the new pod is available', deploy(), [rs('v1', 3, 3), rs('v2', 1, 1, { revision: 2 })], false, ['scale v1=2']],
    [
      'undo to an old template: it becomes the newest revision',
      deploy({ image: 'v1' }),
      [rs('v1', 0, 0, { revision: 1 }), rs('v2', 3, 3, { revision: 2 })],
      false,
      ['scale v1=1 rev3'],
    ],
    ['adopts a matching orphan ReplicaSet', deploy(), [rs('v2', 3, 3, { owner: null })], false, ['adopt v2']],
    ['ignores a ReplicaSet of another controller', deploy(), [rs('v2', 3, 3, { owner: 'other' })], false, ['create v2=3 rev1']],
    ['recreate: old down to 0 first', deploy({ strategy: recreate }), [rs('v1', 3, 3)], true, ['scale v1=0']],
    ['recreate: waits for old pods to be gone', deploy({ strategy: recreate }), [rs('v1', 0, 0, { statusReplicas: 1 })], true, []],
    ['recreate: then the new at full size', deploy({ strategy: recreate }), [rs('v1', 0, 0)], false, ['create v2=3 rev2']],
    ['paused: no rollout', deploy({ paused: true }), [rs('v1', 3, 3)], false, []],
    ['paused: plain scaling still happens', deploy({ paused: true, replicas: 5 }), [rs('v1', 3, 3)], false, ['scale v1=5']],
    [
      'history: idle old ReplicaSets beyond the limit deleted, oldest revision first',
      deploy({ revisionHistoryLimit: 1 }),
      [rs('a', 0, 0, { revision: 1 }), rs('b', 0, 0, { revision: 2 }), rs('c', 0, 0, { revision: 3 }), rs('v2', 3, 3, { revision: 4 })],
      false,
      ['delete a', 'delete b'],
    ],
    [
      'history: an old ReplicaSet with pods left is kept',
      deploy({ revisionHistoryLimit: 0 }),
      [rs('a', 0, 0, { statusReplicas: 1 }), rs('v2', 3, 3, { revision: 2 })],
      false,
      [],
    ],
    ['minReadySeconds changed: pushed to the new ReplicaSet', deploy({ minReadySeconds: 5 }), [rs('v2', 3, 3)], false, ['scale v2=3']],
  ];
  for (const [name, d, rses, oldPodsRunning, want] of cases) {
    it(name, () => {
      assert.deepEqual(describeActions(planDeployment(d, { replicaSets: rses, oldPodsRunning, now: NOW }).actions), want);
    });
  }

  it('status sums the ReplicaSets; complete means NewReplicaSetAvailable and Available', () => {
    const { status } = planDeployment(deploy(), { replicaSets: [rs('v1', 0, 0), rs('v2', 3, 3, { revision: 2 })], oldPodsRunning: false, now: NOW });
    assert.equal(status.replicas, 3);
    assert.equal(status.updatedReplicas, 3);
    assert.equal(status.availableReplicas, 3);
    assert.equal(status.unavailableReplicas, 0);
    assert.equal(status.observedGeneration, 3);
    const cond = (t: string) => status.conditions!.find((c) => c.type === t)!;
    assert.equal(cond('Available').status, 'True');
    assert.equal(cond('Progressing').reason, 'NewReplicaSetAvailable');
    assert.match(cond('Progressing').message!, /^ReplicaSet "web-[a-z0-9]+" has successfully progressed\.$/);
  });

  it("annotates the Deployment with its new ReplicaSet's revision (kubectl rollout undo patches those annotations), once", () => {
    const inputs = { replicaSets: [rs('v1', 0, 0), rs('v2', 3, 3, { revision: 2 })], oldPodsRunning: false, now: NOW };
    assert.equal(planDeployment(deploy(), inputs).revisionAnnotation, '2');
    const annotated = deploy();
    annotated.metadata.annotations = { 'deployment.kubernetes.io/revision': '2' };
    assert.equal(planDeployment(annotated, inputs).revisionAnnotation, undefined);
    // An undo brings v1's template back: its ReplicaSet becomes the newest revision, and so does the Deployment.
    const undone = planDeployment(deploy({ image: 'v1' }), { ...inputs, replicaSets: [rs('v1', 0, 0), rs('v2', 3, 3, { revision: 2 })] });
    assert.equal(undone.revisionAnnotation, '3');
  });

  it('Progressing: NewReplicaSetCreated, ReplicaSetUpdated, then ProgressDeadlineExceeded without progress', () => {
    const created = planDeployment(deploy(), { replicaSets: [rs('v1', 3, 3)], oldPodsRunning: false, now: NOW });
    assert.equal(created.status.conditions!.find((c) => c.type === 'Progressing')!.reason, 'NewReplicaSetCreated');
    assert.equal(created.recheckAfterMs, 600_000);

    const rolling = [rs('v1', 3, 3), rs('v2', 1, 0, { revision: 2 })];
    const stuck = deploy({ status: { ...created.status, replicas: 4, updatedReplicas: 1, readyReplicas: 3, availableReplicas: 3 } });
    const waiting = planDeployment(stuck, { replicaSets: rolling, oldPodsRunning: false, now: new Date(NOW.getTime() + 60_000) });
    assert.deepEqual(waiting.actions, []);
    assert.equal(waiting.status.conditions!.find((c) => c.type === 'Progressing')!.reason, 'NewReplicaSetCreated', 'no progress: the condition stands');
    assert.equal(waiting.recheckAfterMs, 540_000);

    const late = planDeployment(stuck, { replicaSets: rolling, oldPodsRunning: false, now: new Date(NOW.getTime() + 600_000) });
    const p = late.status.conditions!.find((c) => c.type === 'Progressing')!;
    assert.equal(p.status, 'False');
    assert.equal(p.reason, 'ProgressDeadlineExceeded');

    const moved = planDeployment(stuck, {
      replicaSets: [rs('v1', 3, 3), rs('v2', 1, 1, { revision: 2 })],
      oldPodsRunning: false,
      now: new Date(NOW.getTime() + 60_000),
    });
    const q = moved.status.conditions!.find((c) => c.type === 'Progressing')!;
    assert.equal(q.reason, 'ReplicaSetUpdated');
    assert.equal(q.lastUpdateTime, new Date(NOW.getTime() + 60_000).toISOString());
  });

  it('Progressing: a scale step without progress changes the status only when it changes the condition', () => {
    const before = new Date(NOW.getTime() - 5_000).toISOString();
    const cases: { name: string; reason: string; message?: string; moves: boolean }[] = [
      { name: 'a step retried (the same condition) writes nothing new', reason: 'ReplicaSetUpdated', moves: false },
      {
        name: 'a rollout starting on an existing ReplicaSet moves the deadline',
        reason: 'NewReplicaSetAvailable',
        message: 'ReplicaSet "web-old" has successfully progressed.',
        moves: true,
      },
    ];
    // v2 has 1 of 3 available and the one surge pod is in use: the step scales v1 down; the counts are those already reported.
    const replicaSets = [rs('v1', 3, 3), rs('v2', 1, 1, { revision: 2 })];
    const newName = replicaSets[1]!.metadata.name;
    for (const c of cases) {
      const progressing = {
        type: 'Progressing',
        status: 'True',
        reason: c.reason,
        message: c.message ?? `ReplicaSet "${newName}" is progressing.`,
        lastTransitionTime: before,
        lastUpdateTime: before,
      };
      const available = {
        type: 'Available',
        status: 'True',
        reason: 'MinimumReplicasAvailable',
        message: 'Deployment has minimum availability.',
        lastTransitionTime: before,
        lastUpdateTime: before,
      };
      const d = deploy({
        status: {
          observedGeneration: 3,
          replicas: 4,
          updatedReplicas: 1,
          readyReplicas: 4,
          availableReplicas: 4,
          unavailableReplicas: 0,
          conditions: [available, progressing],
        } as Deployment['status'],
      });
      const plan = planDeployment(d, { replicaSets, oldPodsRunning: false, now: NOW });
      assert.deepEqual(describeActions(plan.actions), ['scale v1=2'], c.name);
      const p = plan.status.conditions!.find((x) => x.type === 'Progressing')!;
      assert.equal(p.reason, 'ReplicaSetUpdated', c.name);
      assert.equal(p.lastUpdateTime, c.moves ? NOW.toISOString() : before, c.name);
      assert.equal(statusChanged(d, plan.status), c.moves, c.name);
    }
  });

  it('Available is False below replicas - maxUnavailable; paused shows DeploymentPaused', () => {
    const { status } = planDeployment(deploy({ paused: true }), { replicaSets: [rs('v1', 3, 1)], oldPodsRunning: false, now: NOW });
    assert.equal(status.conditions!.find((c) => c.type === 'Available')!.status, 'False');
    assert.equal(status.conditions!.find((c) => c.type === 'Progressing')!.reason, 'DeploymentPaused');
    assert.equal(status.unavailableReplicas, 2);
  });
});
