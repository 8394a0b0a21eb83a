// writeAtomically on a temp dir: Kubernetes' ..data layout, modes, in-place updates through the symlink swap, and no write when nothing changed.
import assert from 'node:assert/strict';
import { lstatSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { writeAtomically } from './atomic-writer.js';

const file = (path: string, text: string, mode = 0o644) => ({ path, content: Buffer.from(text), mode });

describe('writeAtomically', () => {
  const root = mkdtempSync(join(tmpdir(), 'atomic-writer-'));
  after(() => rmSync(root, { recursive: true, force: true }));

  it('lays files out behind ..data and per-name links, with their modes', () => {
    const dir = join(root, 'layout');
    assert.equal(writeAtomically(dir, [file('app.conf', 'a=1'), file('sub/deep', 'd', 0o400)], new Date('2026-11-26T09:13:05Z')), true);
    const entries = readdirSync(dir).sort();
    assert.equal(entries.length, 4);
    assert.match(entries[0]!, /^\.\.2026_11_26_09_13_05\.[0-9a-f]+$/);
    assert.deepEqual(entries.slice(1), ['..data', 'app.conf', 'sub']);
    assert.equal(readlinkSync(join(dir, '..data')), entries[0]);
    assert.equal(readlinkSync(join(dir, 'app.conf')), '..data/app.conf');
    assert.equal(readFileSync(join(dir, 'sub/deep'), 'utf8'), 'd');
    assert.equal(statSync(join(dir, 'sub/deep')).mode & 0o777, 0o400);
    assert.equal(statSync(join(dir, 'app.conf')).mode & 0o777, 0o644);
  });

  it('updates in place: new payload, same links, old payload and dropped names gone; unchanged input writes nothing', () => {
    const dir = join(root, 'update');
    writeAtomically(dir, [file('a', '1'), file('b', '2')]);
    const before = readlinkSync(join(dir, '..data'));
    assert.equal(writeAtomically(dir, [file('a', '1'), file('b', '2')]), false);
    assert.equal(readlinkSync(join(dir, '..data')), before);
    assert.equal(writeAtomically(dir, [file('a', 'changed')]), true);
    assert.notEqual(readlinkSync(join(dir, '..data')), before);
    assert.equal(readFileSync(join(dir, 'a'), 'utf8'), 'changed');
    assert.ok(lstatSync(join(dir, 'a')).isSymbolicLink());
    assert.deepEqual(
      readdirSync(dir).filter((e) => !e.startsWith('..')),
      ['a'],
    );
    assert.equal(readdirSync(dir).filter((e) => e.startsWith('..2')).length, 1, 'one payload dir');
    assert.equal(writeAtomically(dir, [file('a', 'changed', 0o600)]), true, 'a mode change is a change');
  });
});
