// Boolean query parameters: Go's spellings, empty as absent, anything else a 400.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BadRequestError } from '../errors.js';
import { isTrueWord, parseQueryBool } from './query-bool.js';

describe('parseQueryBool', () => {
  it('reads every spelling strconv.ParseBool reads', () => {
    for (const word of ['1', 't', 'T', 'TRUE', 'true', 'True']) assert.equal(parseQueryBool(word, 'watch'), true, word);
    for (const word of ['0', 'f', 'F', 'FALSE', 'false', 'False']) assert.equal(parseQueryBool(word, 'watch'), false, word);
  });

  it('takes absent and empty as not given', () => {
    assert.equal(parseQueryBool(undefined, 'watch'), undefined);
    assert.equal(parseQueryBool(null, 'watch'), undefined);
    assert.equal(parseQueryBool('', 'watch'), undefined);
  });

  it('answers anything else with a 400 naming the parameter', () => {
    for (const word of ['yes', 'tRuE', ' true', '2']) {
      assert.throws(
        () => parseQueryBool(word, 'follow'),
        (err: unknown) =>
          err instanceof BadRequestError && err.message === `invalid value for query parameter follow: "${word}" is not a boolean (true, false, 1 or 0)`,
      );
    }
  });
});

describe('isTrueWord', () => {
  it('is true only for a true word', () => {
    assert.equal(isTrueWord('True'), true);
    assert.equal(isTrueWord('1'), true);
    assert.equal(isTrueWord('false'), false);
    assert.equal(isTrueWord('yes'), false);
    assert.equal(isTrueWord(undefined), false);
  });
});
