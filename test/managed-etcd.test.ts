// Integration test of the managed etcd on a real etcd binary: start, stop, restart after a crash, leftovers, clear errors.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, openSync, closeSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '../src/core/wait-for.js';
import { request } from 'node:https';
import { etcdArgs, etcdLayout, isEtcdHealthy, startManagedEtcd, type ManagedEtcd } from '../src/control-plane/etcd/managed-etcd.js';
import { ensureEtcdPki } from '../src/control-plane/etcd/etcd-pki.js';
import { StartupError } from '../src/core/lifecycle/startup-error.js';
import { findExecutable } from '../src/control-plane/supervisor/supervised-process.js';
import { freePort } from './helpers/master.js';

const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'minik8s-etcd-test-'));
  dirs.push(d);
  return d;
}

/** A free port whose next port is free too (etcd's peer port). */
async function portPair(): Promise<number> {
  for (;;) {
    const p = await freePort();
    const free = await new Promise<boolean>((resolve) => {
      const s = createServer();
      s.once('error', () => resolve(false));
      s.listen(p + 1, '127.0.0.1', () => s.close(() => resolve(true)));
    });
    if (free) return p;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.startsWith('Z');
  } catch {
    return false;
  }
}

/** Healthy over TLS with the master's client certificate (the managed etcd), or over plain HTTP without a data dir (a leftover started by hand). */
async function healthy(port: number, dataDir?: string): Promise<boolean> {
  if (dataDir) return isEtcdHealthy(`https://127.0.0.1:${port}`, (await ensureEtcdPki(dataDir)).client);
  try {
    const res = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(1000) });
    return res.ok && ((await res.json()) as { health: string }).health === 'true';
  } catch {
    return false;
  }
}

/** POST to etcd's JSON gateway over TLS; `cert: false` leaves the client certificate out. */
async function etcdPost(port: number, dataDir: string, path: string, body: unknown, cert = true): Promise<{ status: number; json: unknown }> {
  const tls = (await ensureEtcdPki(dataDir)).client;
  return new Promise((resolve, reject) => {
    const req = request(`https://127.0.0.1:${port}${path}`, { method: 'POST', ca: tls.ca, ...(cert ? { cert: tls.cert, key: tls.key } : {}) }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        text += d;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: text ? JSON.parse(text) : undefined }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

function listen(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(port, '127.0.0.1', () => resolve(s));
  });
}

interface Started {
  etcd: ManagedEtcd;
  controller: AbortController;
  port: number;
  dataDir: string;
  logs: string[];
}

const running: Started[] = [];
async function start(extra: { dataDir?: string; port?: number } = {}): Promise<Started> {
  const dataDir = extra.dataDir ?? tempDir();
  const port = extra.port ?? (await portPair());
  const controller = new AbortController();
  const logs: string[] = [];
  const etcd = await startManagedEtcd({
    dataDir,
    clientPort: port,
    signal: controller.signal,
    log: (m) => logs.push(m),
    restartDelayMs: 50,
  });
  const s = { etcd, controller, port, dataDir, logs };
  running.push(s);
  return s;
}

async function stop(s: Started): Promise<void> {
  s.controller.abort();
  await s.etcd.stopped;
}

after(async () => {
  for (const s of running) await stop(s);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('managed etcd', { skip: findExecutable('etcd') ? false : 'etcd is not installed' }, () => {
  it('starts healthy on 127.0.0.1 with its pidfile and log, and stops cleanly', async () => {
    const s = await start();
    const pid = s.etcd.pid()!;
    assert.ok(pid > 0);
    assert.deepEqual(s.etcd.endpoints, [`https://127.0.0.1:${s.port}`]);
    assert.ok(await healthy(s.port, s.dataDir));
    const layout = etcdLayout(s.dataDir);
    assert.equal(Number(readFileSync(layout.pidFile, 'utf8')), pid);
    assert.ok(existsSync(join(layout.etcdDataDir, 'member')), 'data under DATA_DIR/etcd');
    assert.ok(readFileSync(layout.logFile, 'utf8').includes('etcdmain'), 'etcd output goes to etcd.log');
    await stop(s);
    assert.equal(alive(pid), false, 'etcd exited');
    assert.equal(existsSync(layout.pidFile), false, 'pidfile removed on a clean stop');
    assert.equal(
      s.logs.some((l) => l.includes('unexpectedly')),
      false,
      s.logs.join('\n'),
    );
  });

  it('restarts etcd after it is killed and keeps the data', async () => {
    const s = await start();
    const put = await etcdPost(s.port, s.dataDir, '/v3/kv/put', { key: Buffer.from('k').toString('base64'), value: Buffer.from('v').toString('base64') });
    assert.equal(put.status, 200);
    const first = s.etcd.pid()!;
    process.kill(first, 'SIGKILL');
    await waitFor(
      async () => {
        const pid = s.etcd.pid();
        return pid !== undefined && pid !== first && s.etcd.restarts() === 1 && (await healthy(s.port, s.dataDir));
      },
      { timeoutMs: 20_000, description: 'etcd to be restarted' },
    );
    assert.ok(
      s.logs.some((l) => /killed by SIGKILL unexpectedly/.test(l)),
      s.logs.join('\n'),
    );
    const range = await etcdPost(s.port, s.dataDir, '/v3/kv/range', { key: Buffer.from('k').toString('base64') });
    const body = range.json as { kvs?: { value: string }[] };
    assert.equal(Buffer.from(body.kvs![0]!.value, 'base64').toString(), 'v');
    assert.equal(Number(readFileSync(etcdLayout(s.dataDir).pidFile, 'utf8')), s.etcd.pid());
    const second = s.etcd.pid()!;
    await stop(s);
    assert.equal(alive(second), false);
  });

  it('ends a leftover etcd named by the pidfile before starting', async () => {
    const dataDir = tempDir();
    const port = await portPair();
    const layout = etcdLayout(dataDir);
    const fd = openSync(join(dataDir, 'leftover.log'), 'a');
    const leftover = spawn(findExecutable('etcd')!, etcdArgs({ dataDir, clientPort: port, peerPort: port + 1 }), { stdio: ['ignore', fd, fd] });
    closeSync(fd);
    try {
      writeFileSync(layout.pidFile, `${leftover.pid}\n`);
      await waitFor(() => healthy(port), { timeoutMs: 20_000, description: 'leftover etcd to be healthy' });
      const exited = new Promise((resolve) => leftover.once('exit', resolve));
      const s = await start({ dataDir, port });
      await exited;
      assert.notEqual(s.etcd.pid(), leftover.pid);
      assert.ok(await healthy(port, dataDir));
      assert.ok(
        s.logs.some((l) => l.includes(`leftover etcd (PID ${leftover.pid})`)),
        s.logs.join('\n'),
      );
      await stop(s);
    } finally {
      if (leftover.exitCode === null && leftover.signalCode === null) leftover.kill('SIGKILL');
    }
  });

  it('ignores a pidfile that names some other process', async () => {
    const dataDir = tempDir();
    writeFileSync(etcdLayout(dataDir).pidFile, `${process.pid}\n`);
    const s = await start({ dataDir });
    assert.ok(await healthy(s.port, s.dataDir));
    await stop(s);
  });

  it('serves TLS only, to clients with a certificate of its own CA (DATA_DIR/pki/etcd, keys 0600)', async () => {
    const s = await start();
    const key = { key: Buffer.from('k').toString('base64') };
    // Plain HTTP: no answer an HTTP client can read.
    await assert.rejects(fetch(`http://127.0.0.1:${s.port}/v3/kv/range`, { method: 'POST', body: JSON.stringify(key) }));
    // TLS without a client certificate: refused in the handshake, for reads and writes alike.
    await assert.rejects(etcdPost(s.port, s.dataDir, '/v3/kv/range', key, false));
    await assert.rejects(etcdPost(s.port, s.dataDir, '/v3/kv/put', { ...key, value: key.key }, false));
    assert.equal((await etcdPost(s.port, s.dataDir, '/v3/kv/range', key)).status, 200);
    for (const f of ['etcd/ca.key', 'etcd/server.key', 'etcd/peer.key', 'apiserver-etcd-client.key']) {
      assert.equal(statSync(join(s.dataDir, 'pki', f)).mode & 0o777, 0o600, f);
    }
    await stop(s);
  });

  it('says which port is taken: client port', async () => {
    const port = await portPair();
    const blocker = await listen(port);
    try {
      await assert.rejects(start({ port }), (err: Error) => {
        assert.ok(err instanceof StartupError);
        assert.equal(err.message, `port ${port} is already in use (etcd client port); stop what uses it or pass --etcd-port`);
        return true;
      });
    } finally {
      blocker.close();
    }
  });

  it('says which port is taken: peer port', async () => {
    const port = await portPair();
    const blocker = await listen(port + 1);
    try {
      await assert.rejects(start({ port }), { message: `port ${port + 1} is already in use (etcd peer port); stop what uses it or pass --etcd-port` });
    } finally {
      blocker.close();
    }
  });

  it('explains a missing etcd binary', async () => {
    const controller = new AbortController();
    await assert.rejects(startManagedEtcd({ dataDir: tempDir(), clientPort: await portPair(), binary: 'etcd-not-installed-here', signal: controller.signal }), {
      name: 'StartupError',
      message: 'etcd not found on PATH: install it with "apt-get install -y etcd-server"',
    });
  });

  it("reports the last lines of etcd's log when it exits at start", async () => {
    const dataDir = tempDir();
    // A regular file where etcd wants its data directory: etcd refuses to start.
    writeFileSync(join(dataDir, 'etcd'), 'not a directory');
    const controller = new AbortController();
    await assert.rejects(startManagedEtcd({ dataDir, clientPort: await portPair(), signal: controller.signal, log: () => {} }), (err: Error) => {
      assert.ok(err instanceof StartupError);
      assert.match(err.message, /^etcd exited with code \d+ while starting; its last log lines/);
      assert.match(err.message, /etcdmain/);
      return true;
    });
    assert.equal(existsSync(etcdLayout(dataDir).pidFile), false);
  });

  it('creates the data directory when it is missing', async () => {
    const dataDir = join(tempDir(), 'nested', 'data');
    const s = await start({ dataDir });
    assert.ok(existsSync(join(dataDir, 'etcd', 'member')));
    await stop(s);
  });
});
