// Unit tests of the build stream reader (steps, output, failure messages for pip and Docker) and of the progress throttle.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor } from '../../core/wait-for.js';
import { BuildLog, ProgressThrottle, type DockerStreamEvent } from './build-progress.js';

function feed(events: DockerStreamEvent[]): BuildLog {
  const log = new BuildLog();
  for (const e of events) log.feed(e);
  return log;
}

const PIP_STEP = { stream: 'Step 4/9 : RUN python3 -m pip install --no-cache-dir --target /app/deps -r /app/requirements.txt\n' };

describe('BuildLog', () => {
  it('follows the steps Docker announces, even when a line arrives in pieces', () => {
    const log = new BuildLog();
    assert.equal(log.feed({ stream: 'Step 1/9 : FROM 127.0.0.1:5000/python:3.11\n' }), true);
    assert.equal(log.step, '1/9 FROM 127.0.0.1:5000/python:3.11');
    assert.equal(log.feed({ stream: ' ---> 1234\nStep 2/9 : WOR' }), false);
    assert.equal(log.feed({ stream: 'KDIR /app\n' }), true);
    assert.equal(log.step, '2/9 WORKDIR /app');
    log.feed({ aux: { ID: 'sha256:abc' } });
    assert.equal(log.imageId, 'sha256:abc');
  });

  it('shortens long instructions', () => {
    const log = feed([{ stream: `Step 3/9 : RUN ${'x'.repeat(300)}\n` }]);
    assert.ok(log.step!.length < 120);
  });

  it('says no package index answered when pip could not connect, quoting pip', () => {
    const log = feed([
      PIP_STEP,
      {
        stream:
          "WARNING: Retrying (Retry(total=0, connect=None, read=None, redirect=None, status=None)) after connection broken by 'NewConnectionError('<pip._vendor.urllib3.connection.HTTPSConnection object at 0x7f>: Failed to establish a new connection: [Errno -3] Temporary failure in name resolution')': /simple/requests/\n",
      },
      { stream: 'ERROR: Could not find a version that satisfies the requirement requests==2.31 (from versions: none)\n' },
      { stream: 'ERROR: No matching distribution found for requests==2.31\n' },
      {
        error: "The command '/bin/sh -c python3 -m pip install ...' returned a non-zero code: 1",
        errorDetail: { code: 1, message: "The command '/bin/sh -c python3 -m pip install ...' returned a non-zero code: 1" },
      },
    ]);
    assert.ok(log.failedInPip);
    const message = log.failureMessage();
    assert.match(message, /^requirements could not be installed: no package index reachable \(set --pip-index-url/);
    assert.match(message, /No matching distribution found for requests==2\.31/);
  });

  it('says pip failed (with its exit code) when an index answered but pip did not succeed', () => {
    const log = feed([
      PIP_STEP,
      { stream: 'ERROR: Could not find a version that satisfies the requirement nosuchpkg (from versions: none)\n' },
      { error: "The command '/bin/sh -c python3 -m pip install' returned a non-zero code: 1" },
    ]);
    assert.match(
      log.failureMessage(),
      /^requirements could not be installed: pip failed \(exit code 1\): ERROR: Could not find a version that satisfies the requirement nosuchpkg \(from versions: none\)\n {2}ERROR: Could not find/,
    );
  });

  it('keeps ANSI codes and progress redraws out of the lines and the message', () => {
    const log = feed([
      PIP_STEP,
      { stream: '\x1b[33mCollecting pilow\x1b[0m\n' },
      { stream: '   \x1b[90m10%\x1b[0m\r   \x1b[90m100%\x1b[0m\r\n' },
      { stream: '\x1b[31mERROR: Could not find a version that satisfies the requirement pilow (from versions: none)\x1b[0m\n' },
      { stream: '\x1b[31mERROR: No matching distribution found for pilow\x1b[0m\n' },
      { error: "The command '/bin/sh -c python3 -m pip install' returned a non-zero code: 1" },
    ]);
    const message = log.failureMessage();
    assert.ok(!message.includes('\x1b') && !message.includes('\r'), message);
    assert.equal(
      message.split('\n')[0],
      'requirements could not be installed: pip failed (exit code 1): ERROR: Could not find a version that satisfies the requirement pilow (from versions: none)',
    );
    assert.deepEqual(log.lastLines(), [
      'Collecting pilow',
      '   100%',
      'ERROR: Could not find a version that satisfies the requirement pilow (from versions: none)',
      'ERROR: No matching distribution found for pilow',
    ]);
  });

  it('names the step of any other failure', () => {
    const log = feed([{ stream: 'Step 1/8 : FROM 127.0.0.1:5000/python:3.11\n' }, { error: 'manifest for 127.0.0.1:5000/python:3.11 not found' }]);
    assert.equal(log.failedInPip, false);
    assert.match(log.failureMessage(), /^the image build failed at step 1\/8 FROM 127\.0\.0\.1:5000\/python:3\.11: manifest for .* not found/);
  });

  it("quotes at most the last lines, without Docker's bookkeeping", () => {
    const lines = Array.from({ length: 40 }, (_, i) => ({ stream: `line ${i}\n ---> Running in abc\n` }));
    const log = feed([PIP_STEP, ...lines, { error: 'returned a non-zero code: 2' }]);
    const quoted = log.failureMessage().split('\n').slice(1);
    assert.equal(quoted.length, 12);
    assert.equal(quoted.at(-1), '  line 39');
  });
});

describe('ProgressThrottle', () => {
  it('writes the first value at once, then the latest at most once per interval, and nothing after close', async () => {
    let now = 0;
    const written: string[] = [];
    const throttle = new ProgressThrottle<string>({
      intervalMs: 50,
      now: () => now,
      write: async (v) => {
        written.push(v);
      },
    });
    throttle.push('a');
    await waitFor(() => written.length === 1, { timeoutMs: 2000 });
    throttle.push('b');
    throttle.push('c');
    now = 60;
    await waitFor(() => written.length === 2, { timeoutMs: 2000, description: 'the latest value after the interval' });
    assert.deepEqual(written, ['a', 'c']);
    throttle.push('d');
    await throttle.close();
    assert.deepEqual(written, ['a', 'c']);
  });

  it('keeps going after a failed write', async () => {
    let calls = 0;
    const throttle = new ProgressThrottle<string>({
      intervalMs: 0,
      write: async () => {
        calls++;
        throw new Error('conflict');
      },
    });
    throttle.push('a');
    await waitFor(() => calls === 1, { timeoutMs: 2000 });
    throttle.push('b');
    await waitFor(() => calls === 2, { timeoutMs: 2000 });
    await throttle.close();
  });
});
