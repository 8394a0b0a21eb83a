// Integration test of the managed registry on the real docker-registry binary: start, /v2/, restart after a kill, leftovers, clear errors.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '../src/core/wait-for.js';
import {
  registryAddresses,
  registryConfig,
  registryLayout,
  startManagedRegistry,
  type ManagedRegistry,
} from '../src/control-plane/registry/managed-registry.js';
import { StartupError } from '../src/core/lifecycle/startup-error.js';
import { findExecutable } from '../src/control-plane/supervisor/supervised-process.js';
import { freePort } from './helpers/master.js';

const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'minik8s-registry-test-'));
  dirs.push(d);
  return d;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.startsWith('Z');
  } catch {
    return false;
  }
}

async function answers(port: number): Promise<boolean> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/v2/`, { signal: AbortSignal.timeout(1000) });
    await res.arrayBuffer();
    return res.status === 200;
  } catch {
    return false;
  }
}

function listen(port: number, host = '127.0.0.1'): Promise<Server> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(port, host, () => resolve(s));
  });
}

interface Started {
  registry: ManagedRegistry;
  controller: AbortController;
  port: number;
  dataDir: string;
  logs: string[];
}

const running: Started[] = [];
async function start(extra: { dataDir?: string; port?: number; address?: string } = {}): Promise<Started> {
  const dataDir = extra.dataDir ?? tempDir();
  const port = extra.port ?? (await freePort());
  const controller = new AbortController();
  const logs: string[] = [];
  const registry = await startManagedRegistry({
    dataDir,
    port,
    address: extra.address ?? '127.0.0.1',
    signal: controller.signal,
    log: (m) => logs.push(m),
    restartDelayMs: 50,
  });
  const s = { registry, controller, port, dataDir, logs };
  running.push(s);
  return s;
}

async function stop(s: Started): Promise<void> {
  s.controller.abort();
  await s.registry.stopped;
}

after(async () => {
  for (const s of running) await stop(s);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('managed registry', { skip: findExecutable('docker-registry') ? false : 'docker-registry is not installed' }, () => {
  it('answers /v2/ with its config, pidfile and log in the data dir, and stops cleanly', async () => {
    const s = await start();
    const pid = s.registry.pid()!;
    assert.ok(pid > 0);
    assert.equal(s.registry.endpoint, `http://127.0.0.1:${s.port}`);
    assert.equal(s.registry.address, `127.0.0.1:${s.port}`);
    assert.ok(await answers(s.port));
    const layout = registryLayout(s.dataDir);
    assert.equal(Number(readFileSync(layout.pidFile, 'utf8')), pid);
    assert.match(readFileSync(layout.configFile, 'utf8'), /rootdirectory: ".*\/registry"/);
    assert.ok(existsSync(layout.storeDir));
    // The catalog is served from the store: an empty store lists no repositories.
    const catalog = await (await fetch(`${s.registry.endpoint}/v2/_catalog`)).json();
    assert.deepEqual(catalog, { repositories: [] });
    await stop(s);
    assert.equal(alive(pid), false, 'the registry exited');
    assert.equal(existsSync(layout.pidFile), false, 'pidfile removed on a clean stop');
    assert.equal(
      s.logs.some((l) => l.includes('unexpectedly')),
      false,
      s.logs.join('\n'),
    );
  });

  it('listens on every address by default and advertises loopback', async () => {
    const s = await start({ address: '0.0.0.0' });
    assert.equal(s.registry.address, `127.0.0.1:${s.port}`);
    assert.ok(await answers(s.port));
    await stop(s);
  });

  it('restarts the registry after it is killed', async () => {
    const s = await start();
    const first = s.registry.pid()!;
    process.kill(first, 'SIGKILL');
    await waitFor(
      async () => {
        const pid = s.registry.pid();
        return pid !== undefined && pid !== first && s.registry.restarts() === 1 && (await answers(s.port));
      },
      { timeoutMs: 20_000, description: 'the registry to be restarted' },
    );
    assert.ok(
      s.logs.some((l) => /killed by SIGKILL unexpectedly/.test(l)),
      s.logs.join('\n'),
    );
    assert.equal(Number(readFileSync(registryLayout(s.dataDir).pidFile, 'utf8')), s.registry.pid());
    const second = s.registry.pid()!;
    await stop(s);
    assert.equal(alive(second), false);
  });

  it('ends a leftover registry named by the pidfile before starting', async () => {
    const dataDir = tempDir();
    const port = await freePort();
    const layout = registryLayout(dataDir);
    mkdirSync(layout.storeDir, { recursive: true });
    writeFileSync(layout.configFile, registryConfig({ storeDir: layout.storeDir, listen: registryAddresses({ address: '127.0.0.1', port }).listen }));
    const fd = openSync(join(dataDir, 'leftover.log'), 'a');
    const leftover = spawn(findExecutable('docker-registry')!, ['serve', layout.configFile], { stdio: ['ignore', fd, fd] });
    closeSync(fd);
    try {
      writeFileSync(layout.pidFile, `${leftover.pid}\n`);
      await waitFor(() => answers(port), { timeoutMs: 20_000, description: 'the leftover registry to answer' });
      const exited = new Promise((resolve) => leftover.once('exit', resolve));
      const s = await start({ dataDir, port });
      await exited;
      assert.notEqual(s.registry.pid(), leftover.pid);
      assert.ok(await answers(port));
      assert.ok(
        s.logs.some((l) => l.includes(`leftover registry (PID ${leftover.pid})`)),
        s.logs.join('\n'),
      );
      await stop(s);
    } finally {
      if (leftover.exitCode === null && leftover.signalCode === null) leftover.kill('SIGKILL');
    }
  });

  it('says the port is taken', async () => {
    const port = await freePort();
    const blocker = await listen(port);
    try {
      await assert.rejects(start({ port }), (err: Error) => {
        assert.ok(err instanceof StartupError);
        assert.equal(err.message, `port ${port} is already in use (image registry); stop what uses it or pass --registry-port`);
        return true;
      });
    } finally {
      blocker.close();
    }
  });

  it('explains a missing binary', async () => {
    const controller = new AbortController();
    await assert.rejects(
      startManagedRegistry({ dataDir: tempDir(), port: await freePort(), binary: 'docker-registry-not-installed-here', signal: controller.signal }),
      { name: 'StartupError', message: 'docker-registry not found on PATH: install it with "apt-get install -y docker-registry"' },
    );
  });

  it("reports the registry's own words when it exits at start", async () => {
    const dataDir = tempDir();
    // A stand-in binary that fails the way the registry does on a bad config.
    const controller = new AbortController();
    const fake = join(dataDir, 'fake-registry');
    writeFileSync(fake, '#!/bin/sh\necho \'time="x" level=fatal msg="configuration error: something is wrong"\'\nexit 1\n', { mode: 0o755 });
    await assert.rejects(startManagedRegistry({ dataDir, port: await freePort(), binary: fake, signal: controller.signal, log: () => {} }), (err: Error) => {
      assert.ok(err instanceof StartupError);
      assert.match(err.message, /^the image registry exited with code 1 while starting; its last log lines/);
      assert.match(err.message, /configuration error: something is wrong/);
      return true;
    });
  });
});
