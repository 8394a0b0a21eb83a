// `minik8s dns host enable|disable` on files of a temporary directory: the worker's record, a second enable, restore, and the errors.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { runCliAgainst } from './cli-test-run.js';

describe('minik8s dns host', () => {
  const dir = mkdtempSync(join(tmpdir(), 'minik8s-dns-host-'));
  const resolvConf = join(dir, 'resolv.conf');
  const original = 'search corp.example\nnameserver 192.0.2.53\n';
  // No API server is needed: the verb only touches local files.
  const run = (...args: string[]) => runCliAgainst('https://127.0.0.1:1', ['dns', 'host', ...args, '--data-dir', dir, '--resolv-conf', resolvConf]);
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses with the reason when no worker recorded its cluster DNS here', async () => {
    writeFileSync(resolvConf, original);
    const r = await run('enable');
    assert.equal(r.code, 1);
    assert.match(r.err, /no cluster DNS recorded in .*cluster-dns: run this on a worker started with --dns=on/);
    assert.equal(readFileSync(resolvConf, 'utf8'), original);
  });

  it("enables with the worker's address, twice without stacking, and disables back to the original", async () => {
    writeFileSync(join(dir, 'cluster-dns'), '10.96.0.10\n');
    assert.equal((await run('enable')).code, 0);
    writeFileSync(join(dir, 'cluster-dns'), '10.96.0.11\n');
    const again = await run('enable');
    assert.equal(again.code, 0, again.err);
    const during = readFileSync(resolvConf, 'utf8');
    assert.match(during, /^nameserver 10\.96\.0\.11\nnameserver 192\.0\.2\.53\nsearch corp\.example\n$/m);
    assert.doesNotMatch(during, /10\.96\.0\.10/);
    const back = await run('disable');
    assert.equal(back.code, 0, back.err);
    assert.equal(readFileSync(resolvConf, 'utf8'), original);
    const twice = await run('disable');
    assert.match(twice.out, /not minik8s's; nothing to undo/);
  });

  it('refuses a nameserver that is not an IPv4 address', async () => {
    const r = await run('enable', '--nameserver', 'cluster.local');
    assert.equal(r.code, 1);
    assert.match(r.err, /"cluster\.local" is not an IPv4 address/);
  });
});
