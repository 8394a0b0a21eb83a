// Slowloris against a real master: 20,000 half-request connections (more than its fd limit here) leave it alive and serving.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileDescriptorLimit } from '../src/core/lifecycle/listener-limits.js';
import { waitFor } from '../src/core/wait-for.js';
import { startMaster, type MasterProcess } from './helpers/master.js';

/** The attack that once exhausted the master's descriptors: 20,000 connections, each with half a request. */
const WANTED = 20_000;

/**
 * Run in two child processes, 10,000 connections each: one process could open at most as many
 * as its own fd limit, which is the master's too, so it could never use up the master's.
 * Each prints `opened N` once its connections are up, and holds them until its stdin closes.
 */
const FLOODER = `
import { connect } from 'node:net';
const [port, count] = process.argv.slice(1).map(Number);
const sockets = [];
let failed = 0;
const openOne = () => new Promise((resolve) => {
  const s = connect(port, '127.0.0.1');
  sockets.push(s);
  s.on('connect', () => { s.write('GET /api/v1/namespaces HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nX-Slow: '); resolve(); });
  s.on('error', () => { failed++; resolve(); });
});
for (let i = 0; i < count; i += 500) await Promise.all(Array.from({ length: Math.min(500, count - i) }, openOne));
process.stdout.write('opened ' + (sockets.length - failed) + ' failed ' + failed + '\\n');
process.stdin.on('end', () => { for (const s of sockets) s.destroy(); process.exit(0); });
process.stdin.resume();
`;

interface Flooder {
  child: ChildProcess;
  opened: Promise<string>;
}

function flood(port: number, count: number): Flooder {
  const child = spawn(process.execPath, ['--input-type=module', '-e', FLOODER, String(port), String(count)], { stdio: ['pipe', 'pipe', 'inherit'] });
  const opened = new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      if (out.includes('\n')) resolve(out.trim());
    });
    child.once('exit', (code) => reject(new Error(`the flooding process exited with ${code}`)));
  });
  return { child, opened };
}

describe('a flood of half-request connections', () => {
  let master: MasterProcess;
  const flooders: Flooder[] = [];
  before(async () => {
    master = await startMaster({ registry: false });
  });
  after(async () => {
    // Closing stdin ends each flooder, which closes its sockets; by PID if it does not go.
    for (const f of flooders) {
      f.child.stdin!.end();
      const timer = setTimeout(() => f.child.kill('SIGKILL'), 10_000);
      if (f.child.exitCode === null) await new Promise((resolve) => f.child.once('exit', resolve));
      clearTimeout(timer);
    }
    await master?.stop();
  });

  it('leaves /healthz answering and authenticated requests served, and the master running', async (t) => {
    const limit = fileDescriptorLimit();
    t.diagnostic(`fd limit ${limit ?? 'unknown'} (the master's as well); its default cap: ${limit ? Math.floor(limit * 0.8) : 8192}`);
    for (let i = 0; i < 2; i++) flooders.push(flood(master.port, WANTED / 2));
    const reports = await Promise.all(flooders.map((f) => f.opened));
    t.diagnostic(`${WANTED} half-request connections tried: ${reports.join('; ')}`);

    // The header timeout (10 s) frees the places the flood holds: /healthz answers within a deadline.
    const started = Date.now();
    await waitFor(
      async () => {
        assert.equal(master.child.exitCode, null, `the master exited:\n${master.output().slice(-2000)}`);
        const res = await fetch(`${master.url}/healthz`, { signal: AbortSignal.timeout(2000) }).catch(() => undefined);
        return res?.status === 200;
      },
      { timeoutMs: 30_000, description: '/healthz to answer during the flood' },
    );
    t.diagnostic(`/healthz answered ${Date.now() - started} ms after the flood was up`);
    const res = await fetch(`${master.url}/api/v1/namespaces`, { headers: { authorization: `Bearer ${master.token}` } });
    assert.equal(res.status, 200);
    const list = (await res.json()) as { items: { metadata: { name: string } }[] };
    assert.ok(list.items.some((n) => n.metadata.name === 'default'));
    assert.equal(master.child.exitCode, null);
    assert.doesNotMatch(master.output(), /EMFILE|uncaught/i);
  });
});
