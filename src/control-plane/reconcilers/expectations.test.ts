// Controller expectations: outstanding creates and deletes hold a key back until observed or timed out.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ControllerExpectations } from './expectations.js';

describe('ControllerExpectations', () => {
  const make = () => {
    let now = 1_000;
    const exp = new ControllerExpectations({ timeoutMs: 60_000, now: () => now });
    return { exp, advance: (ms: number) => (now += ms) };
  };

  it('an unknown key is satisfied', () => {
    assert.equal(make().exp.satisfied('ns/rs'), true);
  });

  it('creates hold the key until each is observed', () => {
    const { exp } = make();
    exp.expect('ns/rs', 3);
    assert.equal(exp.satisfied('ns/rs'), false);
    exp.creationObserved('ns/rs');
    exp.creationObserved('ns/rs');
    assert.equal(exp.satisfied('ns/rs'), false);
    exp.creationObserved('ns/rs');
    assert.equal(exp.satisfied('ns/rs'), true);
    exp.creationObserved('ns/rs'); // extra observations do not go negative
    exp.expect('ns/rs', 1);
    assert.equal(exp.satisfied('ns/rs'), false);
  });

  it('failed or skipped creates lower the count by many at once', () => {
    const { exp } = make();
    exp.expect('ns/rs', 8);
    exp.creationObserved('ns/rs', 7);
    assert.equal(exp.satisfied('ns/rs'), false);
    exp.creationObserved('ns/rs', 1);
    assert.equal(exp.satisfied('ns/rs'), true);
  });

  it('deletes are tracked by pod key: the same pod seen twice counts once', () => {
    const { exp } = make();
    exp.expect('ns/rs', 0, ['ns/a', 'ns/b']);
    exp.deletionObserved('ns/rs', 'ns/a');
    exp.deletionObserved('ns/rs', 'ns/a');
    exp.deletionObserved('ns/rs', 'ns/other');
    assert.equal(exp.satisfied('ns/rs'), false);
    exp.deletionObserved('ns/rs', 'ns/b');
    assert.equal(exp.satisfied('ns/rs'), true);
  });

  it('times out so a lost event cannot stall the key, and says how long is left', () => {
    const { exp, advance } = make();
    exp.expect('ns/rs', 2);
    assert.equal(exp.remainingMs('ns/rs'), 60_000);
    advance(59_999);
    assert.equal(exp.satisfied('ns/rs'), false);
    assert.equal(exp.remainingMs('ns/rs'), 1);
    advance(1);
    assert.equal(exp.satisfied('ns/rs'), true);
    assert.equal(exp.remainingMs('ns/rs'), undefined);
  });

  it('keys are independent and forget drops a record', () => {
    const { exp } = make();
    exp.expect('ns/a', 1);
    assert.equal(exp.satisfied('ns/b'), true);
    exp.forget('ns/a');
    assert.equal(exp.satisfied('ns/a'), true);
  });
});
