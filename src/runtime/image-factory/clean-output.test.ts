// Unit tests of build output cleaning: ANSI codes stripped, progress redraws collapsed, the failing line picked.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { failingLine, stripAnsi, terminalLine } from './clean-output.js';

describe('stripAnsi', () => {
  it('removes colours, cursor moves, OSC titles and links', () => {
    assert.equal(stripAnsi('\x1b[31mERROR:\x1b[0m no'), 'ERROR: no');
    assert.equal(stripAnsi('\x1b[1;38;5;196mred\x1b[39m'), 'red');
    assert.equal(stripAnsi('\x1b[2K\x1b[1Gdone'), 'done');
    assert.equal(stripAnsi('\x1b]0;title\x07text'), 'text');
    assert.equal(stripAnsi('\x1b]8;;https://x\x1b\\link\x1b]8;;\x1b\\'), 'link');
    assert.equal(stripAnsi('\x1b[?25lhidden cursor\x1b[?25h'), 'hidden cursor');
  });

  it('leaves plain text (brackets included) alone', () => {
    assert.equal(stripAnsi('[notice] A new release of pip is available'), '[notice] A new release of pip is available');
  });
});

describe('terminalLine', () => {
  it('keeps the last drawing of a line redrawn with carriage returns', () => {
    assert.equal(terminalLine('   10% |##  |\r   50% |#### |\r  100% |########|\r'), '  100% |########|');
    assert.equal(terminalLine('\x1b[32mCollecting pillow\x1b[0m\r'), 'Collecting pillow');
  });
});

describe('failingLine', () => {
  it("picks pip's first ERROR line over the ones that repeat it", () => {
    assert.equal(
      failingLine([
        'Collecting pilow',
        'ERROR: Could not find a version that satisfies the requirement pilow (from versions: none)',
        'ERROR: No matching distribution found for pilow',
      ]),
      'ERROR: Could not find a version that satisfies the requirement pilow (from versions: none)',
    );
  });

  it("takes a build backend's error: line when pip printed no ERROR line", () => {
    assert.equal(
      failingLine(['  running build', '  error: subprocess-exited-with-error', 'note: This error originates from a subprocess']),
      'error: subprocess-exited-with-error',
    );
  });

  it('else the last line that is not a note or a notice; nothing for no output', () => {
    assert.equal(failingLine(['Processing', 'Killed', '[notice] A new release of pip is available', '']), 'Killed');
    assert.equal(failingLine([]), undefined);
  });
});
