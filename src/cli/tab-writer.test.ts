// The tabwriter emulation: blocks of lines that share a column align, a line without tabs ends them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { alignTabs } from './tab-writer.js';

describe('alignTabs', () => {
  it('aligns a block to its widest cell plus two', () => {
    assert.equal(alignTabs('Name:\tweb\nNamespace:\tdefault\n'), 'Name:       web\nNamespace:  default\n');
  });
  it('restarts alignment after a line without tabs', () => {
    assert.equal(alignTabs('A:\t1\nSection:\n  Longer key:\t2\n'), 'A:  1\nSection:\n  Longer key:  2\n');
  });
  it('aligns each column within the block of the one before', () => {
    assert.equal(
      alignTabs('  Type\tStatus\tReason\n  Available \tTrue\tOK\nOld:\tx\n'),
      '  Type        Status  Reason\n  Available   True    OK\nOld:          x\n',
    );
  });
});
