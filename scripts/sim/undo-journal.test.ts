// Table tests for reading an undo journal back, torn last line included.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseUndoJournal } from './undo-journal.js';

describe('parseUndoJournal', () => {
  const link = { kind: 'delete-link', name: 'mk8s-sim' };
  const dir = { kind: 'remove-dir', path: '/var/lib/minik8s-sim/sim/sim-1' };
  const cases: [string, string, unknown[]][] = [
    ['an empty journal', '', []],
    ['actions in order', `${JSON.stringify(link)}\n${JSON.stringify(dir)}\n`, [link, dir]],
    ['a torn last line (the writer was killed mid-write)', `${JSON.stringify(link)}\n{"kind":"remove-d`, [link]],
    ['blank lines and lines that are not actions', `\n${JSON.stringify(link)}\n\n42\n"x"\n{"no":"kind"}\n`, [link]],
  ];
  for (const [what, text, want] of cases) {
    it(`reads ${what}`, () => assert.deepEqual(parseUndoJournal(text), want));
  }
});
