// Table tests of planCronJob: next times across DST and time zones, missed times after a restart, concurrency, deadline, history.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import * as v from 'valibot';
import { cronJobSchema, scheduleTimesBetween, type CronJob } from '../../core/api/cronjob.js';
import type { Job } from '../../core/api/job.js';
import { causeFromIssue } from '../../core/api/validate.js';
import { jobNameFor, planCronJob } from './cronjob-plan.js';

function cronJob(spec: Record<string, unknown>, status: Record<string, unknown> = {}, created = '2026-01-01T00:00:00Z'): CronJob {
  return v.parse(cronJobSchema, {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name: 'cj', namespace: 'ns', uid: 'cj-uid', creationTimestamp: created },
    spec: { jobTemplate: { spec: { template: { spec: { restartPolicy: 'OnFailure', containers: [{ name: 'c', image: 'busybox' }] } } } }, ...spec },
    status,
  });
}

function job(name: string, state: 'active' | 'Complete' | 'Failed', start: string): Job {
  const conditions = state === 'active' ? [] : [{ type: state, status: 'True' }];
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, namespace: 'ns', uid: `uid-${name}`, creationTimestamp: start },
    spec: {},
    status: { startTime: start, conditions, ...(state === 'Complete' ? { completionTime: start } : {}) },
  } as unknown as Job;
}

const iso = (d: Date) => d.toISOString().replace('.000', '');

describe('CronJob schedule times', () => {
  const cases: [string, { schedule: string; timeZone?: string }, string, string, string[]][] = [
    [
      'every minute',
      { schedule: '* * * * *' },
      '2026-01-01T00:00:30Z',
      '2026-01-01T00:03:00Z',
      ['2026-01-01T00:01:00Z', '2026-01-01T00:02:00Z', '2026-01-01T00:03:00Z'],
    ],
    [
      'spring forward in Berlin: 02:30 does not exist that night and runs once at 03:00 local',
      { schedule: '30 2 * * *', timeZone: 'Europe/Berlin' },
      '2026-03-27T12:00:00Z',
      '2026-03-30T12:00:00Z',
      ['2026-03-28T01:30:00Z', '2026-03-29T01:00:00Z', '2026-03-30T00:30:00Z'],
    ],
    [
      'fall back in New York: 01:30 comes twice that night and runs once',
      { schedule: '30 1 * * *', timeZone: 'America/New_York' },
      '2026-10-31T12:00:00Z',
      '2026-11-02T12:00:00Z',
      ['2026-11-01T05:30:00Z', '2026-11-02T06:30:00Z'],
    ],
    ['CRON_TZ in the schedule', { schedule: 'CRON_TZ=Asia/Tokyo 0 9 * * *' }, '2026-01-01T00:00:00Z', '2026-01-02T12:00:00Z', ['2026-01-02T00:00:00Z']],
  ];
  for (const [name, spec, after, until, want] of cases) {
    test(name, () => {
      assert.deepEqual(scheduleTimesBetween(spec, new Date(after), new Date(until), 10).map(iso), want);
    });
  }

  test('refused: bad schedule, unknown zone, both CRON_TZ and timeZone, restartPolicy Always', () => {
    const bad = (spec: Record<string, unknown>) => {
      const r = v.safeParse(cronJobSchema, {
        apiVersion: 'batch/v1',
        kind: 'CronJob',
        metadata: { name: 'cj', namespace: 'ns' },
        spec: {
          schedule: '* * * * *',
          jobTemplate: { spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'i' }] } } } },
          ...spec,
        },
      });
      return (r.issues ?? []).map((i) => `${causeFromIssue(i).field}: ${causeFromIssue(i).message}`).join('\n');
    };
    assert.match(bad({ schedule: '61 * * * *' }), /^spec.schedule: Invalid value: "61 \* \* \* \*"/);
    assert.match(bad({ timeZone: 'Mars/Olympus' }), /^spec.timeZone: Invalid value: "Mars\/Olympus": unknown time zone Mars\/Olympus/);
    assert.match(bad({ schedule: 'CRON_TZ=UTC * * * * *', timeZone: 'UTC' }), /cannot use both timeZone field and TZ or CRON_TZ in schedule/);
    assert.match(
      bad({ jobTemplate: { spec: { template: { spec: { containers: [{ name: 'c', image: 'i' }] } } } } }),
      /spec.jobTemplate.spec.template.spec.restartPolicy: Unsupported value: "Always"/,
    );
    assert.equal(bad({}), '');
  });
});

describe('planCronJob', () => {
  test('defaults: Allow, history 3 and 1, not suspended', () => {
    const cj = cronJob({ schedule: '* * * * *' });
    assert.equal(cj.spec.concurrencyPolicy, 'Allow');
    assert.equal(cj.spec.successfulJobsHistoryLimit, 3);
    assert.equal(cj.spec.failedJobsHistoryLimit, 1);
    assert.equal(cj.spec.suspend, false);
  });

  test('a due time runs a Job named after its minute, and the next time is when to look again', () => {
    const plan = planCronJob(cronJob({ schedule: '*/5 * * * *' }), [], new Date('2026-01-01T00:05:02Z'));
    assert.equal(plan.run?.jobName, `cj-${Date.parse('2026-01-01T00:05:00Z') / 60_000}`);
    assert.equal(plan.status.lastScheduleTime, '2026-01-01T00:05:00Z');
    assert.equal(plan.requeueAfterMs, 5 * 60_000 - 2000 + 100);
  });

  test('nothing due yet: no run, look again at the next time', () => {
    const plan = planCronJob(cronJob({ schedule: '*/5 * * * *' }, { lastScheduleTime: '2026-01-01T00:05:00Z' }), [], new Date('2026-01-01T00:07:00Z'));
    assert.equal(plan.run, undefined);
    assert.equal(plan.requeueAfterMs, 3 * 60_000 + 100);
  });

  test('after a master restart only the most recent missed time runs (no storm)', () => {
    const cj = cronJob({ schedule: '*/10 * * * *' }, { lastScheduleTime: '2026-01-01T00:00:00Z' });
    const plan = planCronJob(cj, [], new Date('2026-01-01T03:05:00Z'));
    assert.equal(plan.run?.scheduledTime.toISOString(), '2026-01-01T03:00:00.000Z');
    assert.deepEqual(plan.events, []);
  });

  test('more than 100 missed times: one run and the TooManyMissedTimes warning', () => {
    const cj = cronJob({ schedule: '* * * * *' }, { lastScheduleTime: '2026-01-01T00:00:00Z' });
    const plan = planCronJob(cj, [], new Date('2026-01-02T00:00:30Z'));
    assert.equal(plan.run?.scheduledTime.toISOString(), '2026-01-02T00:00:00.000Z');
    assert.deepEqual(plan.events, [
      {
        type: 'Warning',
        reason: 'TooManyMissedTimes',
        message: 'too many missed start times: 1440. Set or decrease .spec.startingDeadlineSeconds or check clock skew',
      },
    ]);
  });

  test('startingDeadlineSeconds: a time missed by longer is skipped', () => {
    const cj = cronJob({ schedule: '0 * * * *', startingDeadlineSeconds: 60 }, { lastScheduleTime: '2026-01-01T00:00:00Z' });
    assert.equal(planCronJob(cj, [], new Date('2026-01-01T01:00:50Z')).run?.scheduledTime.toISOString(), '2026-01-01T01:00:00.000Z');
    assert.equal(planCronJob(cj, [], new Date('2026-01-01T01:01:10Z')).run, undefined);
  });

  test('Forbid skips while a Job runs; Allow runs beside it; Replace deletes it first', () => {
    const now = new Date('2026-01-01T00:02:01Z');
    const running = job('cj-29450881', 'active', '2026-01-01T00:01:00Z');
    const status = { lastScheduleTime: '2026-01-01T00:01:00Z' };
    const forbid = planCronJob(cronJob({ schedule: '* * * * *', concurrencyPolicy: 'Forbid' }, status), [running], now);
    assert.equal(forbid.run, undefined);
    assert.equal(forbid.status.lastScheduleTime, '2026-01-01T00:01:00Z');
    assert.equal(forbid.status.active?.[0].name, 'cj-29450881');
    assert.equal(forbid.events[0].reason, 'JobAlreadyActive');
    const allow = planCronJob(cronJob({ schedule: '* * * * *' }, status), [running], now);
    assert.equal(allow.run?.jobName, jobNameFor('cj', new Date('2026-01-01T00:02:00Z')));
    assert.deepEqual(allow.replace, []);
    const replace = planCronJob(cronJob({ schedule: '* * * * *', concurrencyPolicy: 'Replace' }, status), [running], now);
    assert.deepEqual(
      replace.replace.map((j) => j.metadata.name),
      ['cj-29450881'],
    );
    assert.equal(replace.status.active, undefined);
  });

  test('a Job already made for the time (status write lost) is not made again', () => {
    const t = new Date('2026-01-01T00:02:00Z');
    const plan = planCronJob(
      cronJob({ schedule: '* * * * *' }, { lastScheduleTime: '2026-01-01T00:01:00Z' }),
      [job(jobNameFor('cj', t), 'active', '2026-01-01T00:02:00Z')],
      new Date('2026-01-01T00:02:05Z'),
    );
    assert.equal(plan.run, undefined);
    assert.equal(plan.status.lastScheduleTime, '2026-01-01T00:02:00Z');
  });

  test('suspended: no run, no requeue', () => {
    const plan = planCronJob(cronJob({ schedule: '* * * * *', suspend: true }), [], new Date('2026-01-01T01:00:00Z'));
    assert.equal(plan.run, undefined);
    assert.equal(plan.requeueAfterMs, undefined);
  });

  test('history limits prune the oldest finished Jobs; lastSuccessfulTime follows completions', () => {
    const jobs = [
      job('a', 'Complete', '2026-01-01T00:01:00Z'),
      job('b', 'Complete', '2026-01-01T00:02:00Z'),
      job('c', 'Failed', '2026-01-01T00:03:00Z'),
      job('d', 'Complete', '2026-01-01T00:04:00Z'),
      job('e', 'Failed', '2026-01-01T00:05:00Z'),
    ];
    const plan = planCronJob(
      cronJob({ schedule: '0 0 1 1 *', successfulJobsHistoryLimit: 2 }, { lastScheduleTime: '2026-01-01T00:00:00Z' }),
      jobs,
      new Date('2026-01-01T00:06:00Z'),
    );
    assert.deepEqual(
      plan.prune.map((j) => j.metadata.name),
      ['a', 'c'],
    );
    assert.equal(plan.status.lastSuccessfulTime, '2026-01-01T00:04:00Z');
  });
});
