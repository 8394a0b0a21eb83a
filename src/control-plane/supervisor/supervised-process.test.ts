// Unit tests of the supervisor's pure parts: restart backoff, exit wording, log summary and tail, startup messages, /proc parsing.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  delayAfterRun,
  describeExit,
  endLeftover,
  findExecutable,
  nextRestartDelay,
  parseCmdline,
  readLogTail,
  startFailureMessage,
  summarizeLogLines,
} from './supervised-process.js';

const dir = mkdtempSync(join(tmpdir(), 'minik8s-supervisor-test-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('restart backoff', () => {
  it('doubles from the first delay up to the maximum', () => {
    const waits: number[] = [];
    let delay = 500;
    for (let i = 0; i < 9; i++) {
      waits.push(delay);
      delay = nextRestartDelay(delay, 30_000);
    }
    assert.deepEqual(waits, [500, 1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000]);
  });

  it('starts over only after a run that stayed up more than a minute', () => {
    assert.equal(delayAfterRun({ delayMs: 8_000, firstMs: 500, ranMs: 60_000 }), 8_000);
    assert.equal(delayAfterRun({ delayMs: 8_000, firstMs: 500, ranMs: 60_001 }), 500);
  });
});

describe('describeExit', () => {
  const cases: [Parameters<typeof describeExit>[0], string][] = [
    [{ code: 2, signal: null }, 'exited with code 2'],
    [{ code: 0, signal: null }, 'exited with code 0'],
    [{ code: null, signal: 'SIGKILL' }, 'was killed by SIGKILL'],
    [{ code: null, signal: null, error: new Error('spawn EACCES') }, 'could not run (spawn EACCES)'],
  ];
  for (const [exit, want] of cases) it(want, () => assert.equal(describeExit(exit), want));
});

describe('summarizeLogLines', () => {
  const options = { isError: (l: string) => l.startsWith('E '), strip: (l: string) => l.slice(2) };

  it('shows the last three errors when there are any', () => {
    const lines = ['I a', 'E one', 'E two', 'I b', 'E three', 'E four', 'I c'];
    assert.deepEqual(summarizeLogLines(lines, options), ['two', 'three', 'four']);
  });

  it('shows the last five lines when there is no error', () => {
    const lines = ['I 1', 'I 2', 'I 3', 'I 4', 'I 5', 'I 6'];
    assert.deepEqual(summarizeLogLines(lines, options), ['2', '3', '4', '5', '6']);
  });

  it('shows nothing for an empty log', () => {
    assert.deepEqual(summarizeLogLines([], options), []);
  });
});

describe('startFailureMessage', () => {
  it('quotes the summary and says where the full log is', () => {
    assert.equal(
      startFailureMessage({ title: 'etcd', why: 'exited with code 1 while starting', summary: ['bad flag', 'giving up'], logFile: '/d/etcd.log' }),
      'etcd exited with code 1 while starting; its last log lines (full log in /d/etcd.log):\n  bad flag\n  giving up',
    );
  });

  it('points at the log when it said nothing', () => {
    assert.equal(
      startFailureMessage({ title: 'the image registry', why: 'was killed by SIGKILL while starting', summary: [], logFile: '/d/registry.log' }),
      'the image registry was killed by SIGKILL while starting (see /d/registry.log)',
    );
  });
});

describe('readLogTail', () => {
  it('reads the last eight non-empty lines written since the offset, without ignored ones', () => {
    const file = join(dir, 'tail.log');
    const before = 'old line from an earlier run\n';
    const lines = Array.from({ length: 10 }, (_, i) => `line ${i}  `);
    writeFileSync(file, `${before}${lines.slice(0, 5).join('\n')}\n\n[WARNING] Deprecated x\n${lines.slice(5).join('\n')}\n`);
    assert.deepEqual(
      readLogTail(file, Buffer.byteLength(before), (l) => l.startsWith('[WARNING] Deprecated')),
      ['line 2', 'line 3', 'line 4', 'line 5', 'line 6', 'line 7', 'line 8', 'line 9'],
    );
    assert.deepEqual(readLogTail(file, Buffer.byteLength(before)).slice(0, 2), ['line 3', 'line 4']);
  });

  it('is empty for a missing log', () => {
    assert.deepEqual(readLogTail(join(dir, 'missing.log'), 0), []);
  });
});

describe('parseCmdline', () => {
  it('splits on NUL and drops the trailing terminator only', () => {
    assert.deepEqual(parseCmdline('/usr/bin/etcd\0--data-dir\0/d\0'), ['/usr/bin/etcd', '--data-dir', '/d']);
    assert.deepEqual(parseCmdline('prog\0\0last\0'), ['prog', '', 'last']);
  });

  it('is undefined for an empty command line (a zombie or an exiting process)', () => {
    assert.equal(parseCmdline(''), undefined);
  });
});

describe('endLeftover', () => {
  const program = (pidFile: string) => ({ name: 'etcd', pidFile, leftoverFor: '/d/etcd', isOurs: () => false });

  it('does nothing without a pidfile, or for a pidfile naming a process that is not ours', async () => {
    const logs: string[] = [];
    assert.equal(await endLeftover({ program: program(join(dir, 'none.pid')), stopTimeoutMs: 10, log: (m) => logs.push(m) }), false);
    const pidFile = join(dir, 'other.pid');
    writeFileSync(pidFile, `${process.pid}\n`);
    assert.equal(await endLeftover({ program: program(pidFile), stopTimeoutMs: 10, log: (m) => logs.push(m) }), false);
    writeFileSync(pidFile, 'garbage\n');
    assert.equal(await endLeftover({ program: program(pidFile), stopTimeoutMs: 10, log: (m) => logs.push(m) }), false);
    assert.deepEqual(logs, []);
  });
});

describe('findExecutable', () => {
  it('finds a name on PATH and a path as given, and only executable files', () => {
    const exe = join(dir, 'my-tool');
    writeFileSync(exe, '#!/bin/sh\n');
    chmodSync(exe, 0o755);
    const plain = join(dir, 'not-executable');
    writeFileSync(plain, '');
    assert.equal(findExecutable('my-tool', `/nonexistent:${dir}`), exe);
    assert.equal(findExecutable(exe, ''), exe);
    assert.equal(findExecutable('not-executable', dir), undefined);
    assert.equal(findExecutable('missing-tool', dir), undefined);
    assert.equal(findExecutable('.', dir), undefined, 'a directory is no executable');
  });
});
