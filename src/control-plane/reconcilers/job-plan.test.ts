// Table tests of planJob: counting, parallelism, Indexed mode, backoff, pod failure policy, deadline, suspend, TTL.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import * as v from 'valibot';
import { jobSchema, type Job } from '../../core/api/job.js';
import { causeFromIssue } from '../../core/api/validate.js';
import type { Pod } from '../../core/api/pod.js';
import { formatIndexes, jobBackoffMs, parseIndexes, planJob } from './job-plan.js';

const NOW = new Date('2026-01-01T12:00:00Z');
const UID = '11111111-2222-3333-4444-555555555555';

function job(spec: Record<string, unknown> = {}, status: Record<string, unknown> = {}): Job {
  return v.parse(jobSchema, {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'j', namespace: 'ns', uid: UID },
    spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox' }] } }, ...spec },
    status,
  }) as Job;
}

let seq = 0;
function pod(
  phase: 'Pending' | 'Running' | 'Succeeded' | 'Failed',
  opts: { index?: number; exitCode?: number; finishedAt?: string; deleting?: boolean } = {},
): Pod {
  seq++;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `j-${seq}`,
      namespace: 'ns',
      uid: `pod-${seq}`,
      creationTimestamp: '2026-01-01T11:00:00Z',
      ...(opts.index !== undefined ? { annotations: { 'batch.kubernetes.io/job-completion-index': String(opts.index) } } : {}),
      ...(opts.deleting ? { deletionTimestamp: '2026-01-01T11:59:00Z' } : {}),
    },
    spec: { containers: [{ name: 'main', image: 'busybox' }] },
    status: {
      phase,
      ...(opts.exitCode !== undefined
        ? {
            containerStatuses: [
              {
                name: 'main',
                image: 'busybox',
                ready: false,
                restartCount: 0,
                state: { terminated: { exitCode: opts.exitCode, finishedAt: opts.finishedAt ?? '2026-01-01T11:00:00Z' } },
              },
            ],
          }
        : {}),
    },
  } as unknown as Pod;
}

describe('Job defaults and validation', () => {
  test('Kubernetes defaults and the generated selector and labels', () => {
    const j = job();
    assert.equal(j.spec.completions, 1);
    assert.equal(j.spec.parallelism, 1);
    assert.equal(j.spec.backoffLimit, 6);
    assert.equal(j.spec.completionMode, 'NonIndexed');
    assert.equal(j.spec.suspend, false);
    assert.deepEqual(j.spec.selector, { matchLabels: { 'batch.kubernetes.io/controller-uid': UID } });
    assert.equal(j.spec.template.metadata.labels?.['batch.kubernetes.io/job-name'], 'j');
    assert.equal(j.spec.template.metadata.labels?.['controller-uid'], UID);
  });

  test('parallelism alone is a work queue: completions stay unset', () => {
    const j = job({ parallelism: 3 });
    assert.equal(j.spec.completions, undefined);
    assert.equal(j.spec.parallelism, 3);
  });

  const invalid: [string, Record<string, unknown>, RegExp][] = [
    [
      'restartPolicy Always',
      { template: { spec: { containers: [{ name: 'c', image: 'i' }] } } },
      /spec.template.spec.restartPolicy: Unsupported value: "Always": supported values: "OnFailure", "Never"/,
    ],
    ['Indexed without completions', { completionMode: 'Indexed', parallelism: 2 }, /Required value: when completion mode is Indexed/],
    [
      'a hand-written selector without manualSelector',
      { selector: { matchLabels: { a: 'b' } } },
      /spec.selector: Invalid value: .*`selector` not auto-generated/,
    ],
  ];
  for (const [name, spec, message] of invalid) {
    test(`refused: ${name}`, () => {
      const r = v.safeParse(jobSchema, {
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { name: 'j', namespace: 'ns', uid: UID },
        spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'i' }] } }, ...spec },
      });
      assert.equal(r.success, false);
      const said = (r.issues ?? []).map((i) => {
        const c = causeFromIssue(i);
        return `${c.field}: ${c.message}`;
      });
      assert.match(said.join('\n'), message);
    });
  }
});

describe('planJob', () => {
  test('a new Job starts its first pod and its clock', () => {
    const plan = planJob(job(), [], NOW);
    assert.deepEqual(plan.create, [{}]);
    assert.equal(plan.status.startTime, '2026-01-01T12:00:00Z');
    assert.equal(plan.status.active, 1);
  });

  test('parallelism bounded by the completions left', () => {
    const j = job({ completions: 5, parallelism: 3 });
    const pods = [pod('Succeeded'), pod('Succeeded'), pod('Succeeded'), pod('Running')];
    const plan = planJob(j, pods, NOW);
    assert.equal(plan.create.length, 1);
    assert.equal(plan.status.succeeded, 3);
    assert.equal(plan.status.active, 2);
  });

  test('more pods running than wanted: the extra ones go', () => {
    const plan = planJob(job({ completions: 4, parallelism: 1 }), [pod('Running'), pod('Running'), pod('Pending')], NOW);
    assert.equal(plan.delete.length, 2);
    assert.equal(plan.status.terminating, 2);
  });

  test('all completions reached: Complete with completionTime', () => {
    const plan = planJob(job({ completions: 2, parallelism: 2 }), [pod('Succeeded'), pod('Succeeded')], NOW);
    const c = plan.status.conditions?.find((x) => x.type === 'Complete');
    assert.equal(c?.status, 'True');
    assert.equal(c?.reason, 'CompletionsReached');
    assert.equal(plan.status.completionTime, '2026-01-01T12:00:00Z');
    assert.deepEqual(plan.create, []);
    assert.equal(plan.status.active, undefined);
  });

  test('counts never go down when a finished pod is deleted', () => {
    const plan = planJob(job({ completions: 3 }, { succeeded: 2, failed: 1 }), [], NOW);
    assert.equal(plan.status.succeeded, 2);
    assert.equal(plan.status.failed, 1);
    assert.equal(plan.create.length, 1);
  });

  test('a work queue completes once one pod succeeded and none is active', () => {
    assert.equal(planJob(job({ parallelism: 2 }), [pod('Succeeded'), pod('Running')], NOW).create.length, 0);
    const done = planJob(job({ parallelism: 2 }), [pod('Succeeded'), pod('Succeeded')], NOW);
    assert.equal(done.status.conditions?.[0].type, 'Complete');
  });

  test('Indexed: lowest missing indexes first, one pod each, completedIndexes compressed', () => {
    const j = job({ completions: 5, parallelism: 2, completionMode: 'Indexed' });
    const plan = planJob(j, [pod('Succeeded', { index: 0 }), pod('Succeeded', { index: 2 }), pod('Running', { index: 3 })], NOW);
    assert.deepEqual(plan.create, [{ index: 1 }]);
    assert.equal(plan.status.completedIndexes, '0,2');
    assert.equal(plan.status.succeeded, 2);
    const dup = planJob(j, [pod('Running', { index: 1 }), pod('Running', { index: 1 })], NOW);
    assert.equal(dup.delete.length, 1);
    assert.deepEqual(dup.create, [{ index: 0 }]);
    const all = planJob(
      j,
      [0, 1, 2, 3, 4].map((index) => pod('Succeeded', { index })),
      NOW,
    );
    assert.equal(all.status.completedIndexes, '0-4');
    assert.equal(all.status.conditions?.[0].type, 'Complete');
  });

  test('backoff: 10 s doubling per failure, capped at 6 minutes', () => {
    assert.deepEqual([0, 1, 2, 3, 6, 7, 20].map(jobBackoffMs), [0, 10_000, 20_000, 40_000, 320_000, 360_000, 360_000]);
  });

  test('after a failure the next pod waits out the backoff from the failure', () => {
    const j = job({ backoffLimit: 3 });
    const failedAt = new Date(NOW.getTime() - 4000).toISOString();
    const waiting = planJob(j, [pod('Failed', { exitCode: 1, finishedAt: failedAt })], NOW);
    assert.deepEqual(waiting.create, []);
    assert.equal(waiting.requeueAfterMs, 6000);
    assert.equal(waiting.status.failed, 1);
    const later = planJob(j, [pod('Failed', { exitCode: 1, finishedAt: failedAt })], new Date(NOW.getTime() + 6000));
    assert.equal(later.create.length, 1);
  });

  test('more failures than backoffLimit: Failed/BackoffLimitExceeded and active pods removed', () => {
    const plan = planJob(
      job({ backoffLimit: 1, parallelism: 2, completions: 4 }),
      [pod('Failed', { exitCode: 1 }), pod('Failed', { exitCode: 2 }), pod('Running')],
      NOW,
    );
    const c = plan.status.conditions?.find((x) => x.type === 'Failed');
    assert.equal(c?.reason, 'BackoffLimitExceeded');
    assert.equal(c?.message, 'Job has reached the specified backoff limit');
    assert.equal(plan.delete.length, 1);
    assert.equal(plan.status.completionTime, undefined);
  });

  const policy = {
    podFailurePolicy: {
      rules: [
        { action: 'FailJob', onExitCodes: { containerName: 'main', operator: 'In', values: [42] } },
        { action: 'Ignore', onExitCodes: { operator: 'In', values: [137] } },
        { action: 'Count', onExitCodes: { operator: 'NotIn', values: [0] } },
      ],
    },
  };
  const policyCases: [string, number, { failedType?: string; failed?: number }][] = [
    ['exit 42 fails the Job at once', 42, { failedType: 'PodFailurePolicy' }],
    ['exit 137 is ignored: not counted, replaced', 137, { failed: undefined }],
    ['exit 3 counts toward backoffLimit', 3, { failed: 1 }],
  ];
  for (const [name, exitCode, want] of policyCases) {
    test(`podFailurePolicy: ${name}`, () => {
      const plan = planJob(job({ ...policy, backoffLimit: 5 }), [pod('Failed', { exitCode })], NOW);
      const c = plan.status.conditions?.find((x) => x.type === 'Failed');
      if (want.failedType) {
        assert.equal(c?.reason, want.failedType);
        assert.match(c?.message ?? '', /^Container main for pod ns\/j-\d+ failed with exit code 42 matching FailJob rule at index 0$/);
      } else {
        assert.equal(c, undefined);
        assert.equal(plan.status.failed, want.failed);
      }
    });
  }

  test('activeDeadlineSeconds: Failed/DeadlineExceeded once passed, a recheck before', () => {
    const j = job({ activeDeadlineSeconds: 60 }, { startTime: '2026-01-01T11:59:30Z' });
    const before = planJob(j, [pod('Running')], NOW);
    assert.equal(before.requeueAfterMs, 30_000);
    const after = planJob(j, [pod('Running')], new Date('2026-01-01T12:00:31Z'));
    assert.equal(after.status.conditions?.find((x) => x.type === 'Failed')?.reason, 'DeadlineExceeded');
    assert.equal(after.delete.length, 1);
  });

  test('suspend removes the active pods and says Suspended; resume restarts the clock', () => {
    const suspended = planJob(job({ suspend: true }, { startTime: '2026-01-01T11:00:00Z' }), [pod('Running')], NOW);
    assert.equal(suspended.delete.length, 1);
    assert.deepEqual(
      suspended.status.conditions?.map((c) => [c.type, c.status, c.reason]),
      [['Suspended', 'True', 'JobSuspended']],
    );
    assert.equal(suspended.status.startTime, undefined);
    const resumed = planJob(job({ suspend: false }, suspended.status), [], new Date('2026-01-01T13:00:00Z'));
    assert.deepEqual(
      resumed.status.conditions?.map((c) => [c.type, c.status, c.reason]),
      [['Suspended', 'False', 'JobResumed']],
    );
    assert.equal(resumed.status.startTime, '2026-01-01T13:00:00Z');
    assert.equal(resumed.create.length, 1);
  });

  test('ttlSecondsAfterFinished: wait, then delete the Job', () => {
    const finished = planJob(job({ ttlSecondsAfterFinished: 30 }), [pod('Succeeded')], NOW);
    assert.equal(finished.requeueAfterMs, 30_000);
    const later = planJob(job({ ttlSecondsAfterFinished: 30 }, finished.status), [pod('Succeeded')], new Date(NOW.getTime() + 30_000));
    assert.equal(later.deleteJob, true);
  });

  test('a finished Job plans nothing more and keeps its status as it is', () => {
    const first = planJob(job(), [pod('Succeeded')], NOW);
    const again = planJob(job({}, first.status), [pod('Succeeded')], new Date(NOW.getTime() + 5000));
    assert.deepEqual(again.status, first.status);
    assert.deepEqual(again.create, []);
    assert.deepEqual(again.events, []);
  });

  test('index lists round-trip', () => {
    assert.equal(formatIndexes([5, 0, 1, 2, 7, 8]), '0-2,5,7-8');
    assert.deepEqual([...parseIndexes('0-2,5,7-8')], [0, 1, 2, 5, 7, 8]);
  });
});
