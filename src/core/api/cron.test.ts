// Unit tests of cron schedules: which are refused and why, and when a schedule fires next.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cronProblem, nextCronTime } from './cron.js';

describe('cron schedules', () => {
  it('accepts five fields with ranges, lists, steps, names and the @ nicknames', () => {
    for (const s of ['*/1 * * * *', '0 9 * * MON-FRI', '0,30 8-18/2 1 JAN,JUL *', '5 4 * * sun', '@hourly', '@daily', ' 0 0 * * * ']) {
      assert.equal(cronProblem(s), undefined, s);
    }
  });

  it('refuses what cron would not run, saying why', () => {
    const table: [string, RegExp][] = [
      ['', /must be a cron schedule/],
      ['* * * *', /must have five fields .*found 4/],
      ['* * * * * *', /must have five fields .*found 6/],
      ['61 * * * *', /not a valid cron schedule.*minute/],
      ['* 24 * * *', /not a valid cron schedule.*hour/],
      ['a b c d e', /not a valid cron schedule/],
      ['0 0 31 2 *', /never fires/],
    ];
    for (const [s, re] of table) assert.match(cronProblem(s) ?? '', re, s);
  });

  it('the next time is strictly after the given one', () => {
    // Local time is what cron means; these schedules give the same answer in any whole-hour zone.
    const t = new Date(2024, 0, 1, 10, 0, 30);
    assert.deepEqual(nextCronTime('* * * * *', t), new Date(2024, 0, 1, 10, 1, 0));
    assert.deepEqual(nextCronTime('* * * * *', new Date(2024, 0, 1, 10, 1, 0)), new Date(2024, 0, 1, 10, 2, 0));
    assert.deepEqual(nextCronTime('*/15 * * * *', t), new Date(2024, 0, 1, 10, 15, 0));
    assert.deepEqual(nextCronTime('0 9 * * MON-FRI', new Date(2024, 0, 6, 12, 0, 0)), new Date(2024, 0, 8, 9, 0, 0));
  });
});
