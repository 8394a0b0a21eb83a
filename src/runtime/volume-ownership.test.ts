// Unit tests of fsGroup ownership: modes as the kubelet sets them, the walk over a real temp tree, OnRootMismatch skipping a tree already done.
import assert from 'node:assert/strict';
import { chownSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { applyFsGroup, ownershipMode } from './volume-ownership.js';

describe('ownershipMode', () => {
  const cases: [string, number, boolean, boolean, number][] = [
    ['writable dir: setgid, group rwx', 0o755, true, false, 0o2775],
    ['writable file: group rw', 0o644, false, false, 0o664],
    ['read-only file: group r', 0o600, false, true, 0o640],
    ['read-only dir: setgid, group rx', 0o700, true, true, 0o2750],
  ];
  for (const [name, mode, dir, ro, want] of cases) it(name, () => assert.equal(ownershipMode(mode, dir, ro).toString(8), want.toString(8)));
});

describe('applyFsGroup', { skip: process.getuid?.() !== 0 ? 'needs root to change groups' : false }, () => {
  const root = mkdtempSync(join(tmpdir(), 'fsgroup-'));
  after(() => rmSync(root, { recursive: true, force: true }));

  it('gives the tree the group and modes, leaving symlinks unfollowed', () => {
    const dir = join(root, 'vol');
    mkdirSync(join(dir, 'sub'), { recursive: true, mode: 0o755 });
    writeFileSync(join(dir, 'sub', 'f'), 'x', { mode: 0o644 });
    symlinkSync('sub/f', join(dir, 'link'));
    assert.equal(applyFsGroup(dir, { fsGroup: 2345 }), true);
    for (const p of [dir, join(dir, 'sub'), join(dir, 'sub', 'f')]) assert.equal(statSync(p).gid, 2345, p);
    assert.equal((statSync(dir).mode & 0o7777).toString(8), '2775');
    assert.equal((statSync(join(dir, 'sub', 'f')).mode & 0o7777).toString(8), '664');
  });

  it('OnRootMismatch skips a root that already matches; Always walks again', () => {
    const dir = join(root, 'again');
    mkdirSync(dir, { mode: 0o755 });
    applyFsGroup(dir, { fsGroup: 77 });
    writeFileSync(join(dir, 'late'), 'x', { mode: 0o600 });
    // The setgid dir hands new files its group; one put there by other means may not have it.
    assert.equal(statSync(join(dir, 'late')).gid, 77);
    chownSync(join(dir, 'late'), 0, 0);
    assert.equal(applyFsGroup(dir, { fsGroup: 77, policy: 'OnRootMismatch' }), false);
    assert.equal(statSync(join(dir, 'late')).gid, 0);
    assert.equal(applyFsGroup(dir, { fsGroup: 77, policy: 'Always' }), true);
    assert.equal(statSync(join(dir, 'late')).gid, 77);
    assert.equal(applyFsGroup(dir, { fsGroup: 78, policy: 'OnRootMismatch' }), true, 'another group is a mismatch');
  });
});
