// Spawns the real executable: connection failures and usage errors exit 1 with kubectl's message and no stack trace.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';

const BIN = fileURLToPath(new URL('./minik8s.js', import.meta.url));
// An empty HOME and no MINIK8S_* variables: the user's own config must not leak in.
const home = mkdtempSync(join(tmpdir(), 'minik8s-home-'));
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('MINIK8S_')));

function run(args: string[]) {
  return spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env: { ...env, HOME: home }, timeout: 30_000 });
}

describe('minik8s executable', () => {
  after(() => rmSync(home, { recursive: true, force: true }));

  it('get against a closed port: the connection-refused message, exit 1, no stack', () => {
    const r = run(['get', 'pods', '--server', 'http://127.0.0.1:1']);
    assert.equal(r.status, 1);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr, 'The connection to the server 127.0.0.1:1 was refused - did you specify the right host or port?\n');
    assert.doesNotMatch(r.stderr, /\n\s+at /);
  });

  it('version without a server prints the client version, then the error', () => {
    const r = run(['version', '--server', 'http://127.0.0.1:1']);
    assert.equal(r.status, 1);
    assert.equal(r.stdout, 'Client Version: v0.1.0\n');
    assert.match(r.stderr, /^The connection to the server 127\.0\.0\.1:1 was refused/);
  });

  it('an unknown command exits 1', () => {
    const r = run(['frobnicate']);
    assert.equal(r.status, 1);
    assert.equal(r.stderr, 'error: unknown command "frobnicate" for "minik8s"\n');
  });

  it('--help exits 0 and lists the commands', () => {
    const r = run(['--help']);
    assert.equal(r.status, 0);
    assert.match(r.stdout, /minik8s apply/);
  });
});
