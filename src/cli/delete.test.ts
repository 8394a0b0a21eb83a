// Unit tests for delete's kubectl flags: --grace-period, --now, --force and --timeout.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CliError } from './cli-error.js';
import { gracePeriodOf, parseTimeout } from './delete.js';

describe('gracePeriodOf', () => {
  for (const [flags, want] of [
    [{}, undefined],
    [{ gracePeriod: '-1' }, undefined],
    [{ gracePeriod: '5' }, 5],
    [{ now: true }, 1],
    [{ gracePeriod: '0' }, 1],
    [{ gracePeriod: '0', force: true }, 0],
    [{ gracePeriod: '7', force: true }, 7],
  ] as const) {
    it(`${JSON.stringify(flags)} -> ${want}`, () => assert.equal(gracePeriodOf(flags), want));
  }

  for (const [flags, message] of [
    [{ now: true, gracePeriod: '5' }, /cannot be specified together/],
    [{ force: true }, /--force needs --grace-period=0/],
    [{ gracePeriod: 'soon' }, /invalid --grace-period "soon"/],
  ] as const) {
    it(`refuses ${JSON.stringify(flags)}`, () =>
      assert.throws(
        () => gracePeriodOf(flags),
        (err: Error) => err instanceof CliError && message.test(err.message),
      ));
  }
});

describe('parseTimeout', () => {
  it('reads durations, and 0 or nothing as no limit', () => {
    assert.equal(parseTimeout('30s'), 30_000);
    assert.equal(parseTimeout('2m'), 120_000);
    assert.equal(parseTimeout('500ms'), 500);
    assert.equal(parseTimeout('0'), undefined);
    assert.equal(parseTimeout(undefined), undefined);
    assert.throws(() => parseTimeout('soon'), /invalid --timeout "soon"/);
  });
});
