// Unit tests of the scheduled triggers' decisions on a fake clock: first tick after a (re)start, firing once per tick, no catch-up after a gap, changes and removals.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { planTicks, scheduleEntries, type Planned, type ScheduleEntry } from './schedule-plan.js';

const MIN = 60_000;
/** A fake cron: `every:N` fires at every multiple of N minutes. */
const nextTime = (schedule: string, after: number): number | undefined => {
  const n = Number(schedule.split(':')[1]) * MIN;
  return n > 0 ? Math.floor(after / n) * n + n : undefined;
};

const entry = (id: string, schedule: string): ScheduleEntry => ({ id, namespace: 'default', function: id, schedule });

/** Runs looks at the given times, carrying the plan; returns which entries fired at each. */
function simulate(times: number[], entriesAt: (t: number) => ScheduleEntry[], start: Map<string, Planned> = new Map()) {
  let planned: ReadonlyMap<string, Planned> = start;
  const fired: [number, string[]][] = [];
  for (const t of times) {
    const plan = planTicks(entriesAt(t), planned, t, nextTime);
    planned = plan.planned;
    fired.push([t, plan.due.map((e) => e.id)]);
  }
  return fired;
}

describe('planTicks', () => {
  it('a new trigger waits for its first tick, then fires once per tick', () => {
    const fired = simulate([30_000, MIN, MIN + 5, 2 * MIN, 3 * MIN - 1, 3 * MIN], () => [entry('a', 'every:1')]);
    assert.deepEqual(fired, [
      [30_000, []],
      [MIN, ['a']],
      [MIN + 5, []],
      [2 * MIN, ['a']],
      [3 * MIN - 1, []],
      [3 * MIN, ['a']],
    ]);
  });

  it('a look at exactly a tick, on the first look (a master just started), does not fire it: no catch-up', () => {
    assert.deepEqual(
      simulate([5 * MIN, 6 * MIN], () => [entry('a', 'every:1')]),
      [
        [5 * MIN, []],
        [6 * MIN, ['a']],
      ],
    );
  });

  it('ticks missed while the master was busy fire once, not one by one', () => {
    assert.deepEqual(
      simulate([30_000, 10 * MIN + 1, 11 * MIN], () => [entry('a', 'every:1')]),
      [
        [30_000, []],
        [10 * MIN + 1, ['a']],
        [11 * MIN, ['a']],
      ],
    );
  });

  it('wakes at the earliest planned tick', () => {
    const plan = planTicks([entry('a', 'every:5'), entry('b', 'every:2')], new Map(), MIN, nextTime);
    assert.equal(plan.wakeAt, 2 * MIN);
    assert.deepEqual(
      [...plan.planned],
      [
        ['a', { schedule: 'every:5', at: 5 * MIN }],
        ['b', { schedule: 'every:2', at: 2 * MIN }],
      ],
    );
  });

  it('a changed schedule is planned afresh and does not fire on the old one; a removed trigger is dropped', () => {
    const fired = simulate([30_000, MIN, 2 * MIN, 4 * MIN], (t) => (t < MIN ? [entry('a', 'every:1'), entry('b', 'every:1')] : [entry('a', 'every:2')]));
    assert.deepEqual(fired, [
      [30_000, []],
      [MIN, []],
      [2 * MIN, ['a']],
      [4 * MIN, ['a']],
    ]);
  });

  it('a clock set back is followed: the next tick comes from the new now', () => {
    const plan = planTicks([entry('a', 'every:1')], new Map([['a', { schedule: 'every:1', at: 100 * MIN }]]), 10 * MIN + 1, nextTime);
    assert.deepEqual(plan.due, []);
    assert.equal(plan.planned.get('a')!.at, 11 * MIN);
  });
});

describe('scheduleEntries', () => {
  const fn = (triggers: unknown, deleting = false) => ({
    apiVersion: 'minik8s.io/v1',
    kind: 'Function',
    metadata: { name: 'tick', namespace: 'ns', ...(deleting ? { deletionTimestamp: '2024-01-01T00:00:00Z' } : {}) },
    spec: { triggers },
  });

  it('one entry per schedule, with its data; none for a function being deleted', () => {
    assert.deepEqual(scheduleEntries(fn([{ schedule: '*/1 * * * *', data: { n: 1 } }, { schedule: '@hourly' }])), [
      { id: 'ns/tick#0', namespace: 'ns', function: 'tick', schedule: '*/1 * * * *', data: { n: 1 } },
      { id: 'ns/tick#1', namespace: 'ns', function: 'tick', schedule: '@hourly' },
    ]);
    assert.deepEqual(scheduleEntries(fn([{ schedule: '* * * * *' }], true)), []);
    assert.deepEqual(scheduleEntries(fn(undefined)), []);
  });
});
