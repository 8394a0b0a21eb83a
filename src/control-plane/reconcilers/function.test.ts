// Unit tests of the function controller shell's pure helpers: the trigger URL and the status patch that removes what the plan dropped.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { applyMergePatch } from '../api-server/merge-patch.js';
import { functionUrl, replacingPatch } from './function.js';

describe('functionUrl', () => {
  it('is /function/NAME in the default namespace and /namespaces/NS/function/NAME elsewhere', () => {
    assert.equal(functionUrl('http://10.0.0.1:8090/', 'default', 'hello'), 'http://10.0.0.1:8090/function/hello');
    assert.equal(functionUrl('http://10.0.0.1:8090', 'team', 'hello'), 'http://10.0.0.1:8090/namespaces/team/function/hello');
    assert.equal(functionUrl(undefined, 'default', 'hello'), undefined);
  });
});

describe('replacingPatch', () => {
  const cases: [string, unknown, unknown][] = [
    ['a key dropped from a nested object', { version: 1, build: { phase: 'Building', step: '2/7 COPY' } }, { version: 1, build: { phase: 'Succeeded' } }],
    ['a whole object dropped', { build: { phase: 'Failed' }, version: 2 }, { version: 2 }],
    ['lists replaced whole', { conditions: [{ type: 'A' }, { type: 'B' }] }, { conditions: [{ type: 'B' }] }],
    ['from nothing', {}, { version: 1, url: 'u' }],
  ];
  for (const [name, from, to] of cases) {
    it(`applied as a merge patch, gives the new status: ${name}`, () => {
      assert.deepEqual(applyMergePatch(from, replacingPatch(from, to)), to);
    });
  }
});
