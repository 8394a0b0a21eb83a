// Continue tokens: what a token carries survives the trip, and tokens this server did not write are BadRequest.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BadRequestError } from '../../core/errors.js';
import { decodeContinue, encodeContinue } from './continue-token.js';

const prefix = '/registry/pods/';

test('a token carries the revision and the key after the last one returned, relative to the prefix', () => {
  const token = encodeContinue(`${prefix}default/web-1`, prefix, 42);
  assert.match(token, /^[A-Za-z0-9_-]+$/);
  assert.deepEqual(JSON.parse(Buffer.from(token, 'base64url').toString()), { v: 'meta.k8s.io/v1', rv: 42, start: 'default/web-1\u0000' });
  assert.deepEqual(decodeContinue(token, prefix), { fromKey: `${prefix}default/web-1\u0000`, revision: 42 });
});

test('a token of revision -1 continues at the current revision', () => {
  assert.deepEqual(decodeContinue(encodeContinue(`${prefix}a`, prefix, -1), prefix), { fromKey: `${prefix}a\u0000`, revision: undefined });
});

test('a token read under another prefix stays under that prefix', () => {
  const token = encodeContinue(`${prefix}default/a`, prefix, 7);
  assert.equal(decodeContinue(token, '/registry/pods/other/').fromKey, '/registry/pods/other/default/a\u0000');
});

test('malformed tokens are BadRequest', () => {
  const enc = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  for (const token of [
    'not base64!',
    Buffer.from('not json').toString('base64url'),
    enc({ v: 'meta.k8s.io/v2', rv: 1, start: 'a' }),
    enc({ v: 'meta.k8s.io/v1', rv: 0, start: 'a' }),
    enc({ v: 'meta.k8s.io/v1', rv: '5', start: 'a' }),
    enc({ v: 'meta.k8s.io/v1', rv: 5, start: '' }),
    enc(null),
  ]) {
    assert.throws(
      () => decodeContinue(token, prefix),
      (err: unknown) => err instanceof BadRequestError && /^invalid continue token: /.test(err.message),
      token,
    );
  }
});
