// `minik8s invoke`'s argument handling, URLs and failure messages.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { failureMessage, invokeTarget, readData, withSubPath } from './invoke.js';

describe('invoke arguments', () => {
  it('NAME is a function; workflow NAME and function NAME say which', () => {
    assert.deepEqual(invokeTarget('hello', undefined), { type: 'function', name: 'hello' });
    assert.deepEqual(invokeTarget('workflow', 'flow'), { type: 'workflow', name: 'flow' });
    assert.deepEqual(invokeTarget('wf', 'flow'), { type: 'workflow', name: 'flow' });
    assert.deepEqual(invokeTarget('fn', 'workflow'), { type: 'function', name: 'workflow' });
    assert.throws(() => invokeTarget(undefined, undefined), /invoke needs a function/);
    assert.throws(() => invokeTarget('workflow', undefined), /invoke workflow needs a name/);
    assert.throws(() => invokeTarget('hello', 'extra'), /unexpected argument "extra"/);
  });

  it('--data: text as given, @FILE, @- for stdin', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'minik8s-invoke-'));
    try {
      writeFileSync(join(dir, 'in.json'), '{"a": 1}');
      assert.equal(await readData('{"x":2}', Readable.from([])), '{"x":2}');
      assert.equal(await readData(`@${join(dir, 'in.json')}`, Readable.from([])), '{"a": 1}');
      assert.equal(await readData('@-', Readable.from(['from ', 'stdin'])), 'from stdin');
      assert.equal(await readData(undefined, Readable.from([])), undefined);
      await assert.rejects(readData(`@${join(dir, 'nope.json')}`, Readable.from([])), /cannot read --data file .*nope.json: ENOENT/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('--path joins the function URL', () => {
    assert.equal(withSubPath('http://m:8090/function/hello', undefined), 'http://m:8090/function/hello');
    assert.equal(withSubPath('http://m:8090/function/hello', '/a/b?x=1'), 'http://m:8090/function/hello/a/b?x=1');
    assert.equal(withSubPath('http://m:8090/function/hello', 'a'), 'http://m:8090/function/hello/a');
    assert.equal(withSubPath('http://m:8090/function/hello/', '?x=1'), 'http://m:8090/function/hello?x=1');
  });
});

describe('failureMessage', () => {
  const fn = { type: 'function' as const, name: 'hello' };
  it('a handler that raised: its error, the invocation id, then its traceback', () => {
    assert.equal(
      failureMessage(fn, 500, JSON.stringify({ error: 'ValueError: bad', traceback: 'Traceback (most recent call last):\nValueError: bad\n' }), 'abc123', null),
      'error: function hello failed (HTTP 500): ValueError: bad (invocation abc123)\nTraceback (most recent call last):\nValueError: bad\n',
    );
  });
  it("the activator's own Status: its message", () => {
    assert.equal(
      failureMessage(
        fn,
        503,
        JSON.stringify({ kind: 'Status', message: 'function hello has no pod ready to serve yet; try again', invocationId: 'i1' }),
        null,
        null,
      ),
      'error: function hello failed (HTTP 503): function hello has no pod ready to serve yet; try again (invocation i1)\n',
    );
  });
  it('a failed workflow execution: error, cause and execution', () => {
    assert.equal(
      failureMessage(
        { type: 'workflow', name: 'flow' },
        500,
        JSON.stringify({ error: 'States.TaskFailed', cause: 'boom', execution: 'flow-7' }),
        null,
        'flow-7',
      ),
      'error: workflow flow failed (HTTP 500): States.TaskFailed: boom (execution flow-7)\n',
    );
  });
  it('a body that is not JSON', () => {
    assert.equal(failureMessage(fn, 502, 'Bad Gateway', null, null), 'error: function hello failed (HTTP 502): Bad Gateway\n');
    assert.equal(failureMessage(fn, 404, '', null, null), 'error: function hello failed (HTTP 404): HTTP 404\n');
  });
});
