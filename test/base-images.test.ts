// Integration test of the base images: a seeded managed registry serves them, Docker pulls from it, pause reaps zombies and stops on SIGTERM.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { waitFor } from '../src/core/wait-for.js';
import { startManagedRegistry, type ManagedRegistry } from '../src/control-plane/registry/managed-registry.js';
import { findExecutable } from '../src/control-plane/supervisor/supervised-process.js';
import { BASE_IMAGES, ensureBaseImages, LOCAL_REGISTRY, seedRegistryStore } from './helpers/images.js';
import { freePort } from './helpers/master.js';

const run = promisify(execFile);
const docker = async (...args: string[]) => (await run('docker', args, { maxBuffer: 16 * 1024 * 1024 })).stdout.trim();

async function dockerWorks(): Promise<boolean> {
  try {
    await docker('info', '--format', '{{.ID}}');
    return process.getuid?.() === 0 && findExecutable('docker-registry') !== undefined;
  } catch {
    return false;
  }
}

const skip = (await dockerWorks()) ? false : 'needs root, a Docker engine and docker-registry';
const suffix = `${process.pid}-${Date.now()}`;
const containers: string[] = [];
const images: string[] = [];
let dataDir: string | undefined;
let controller: AbortController | undefined;
let registry: ManagedRegistry | undefined;
let registryStore = '';

describe('base images', { skip }, () => {
  before(
    async () => {
      ({ registryStore } = await ensureBaseImages());
    },
    { timeout: 15 * 60_000 },
  );

  after(async () => {
    for (const c of containers) await docker('rm', '-f', c).catch(() => '');
    for (const i of images) await docker('rmi', i).catch(() => '');
    controller?.abort();
    await registry?.stopped;
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it("a test master's registry seeded from the store serves every base image", async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'minik8s-images-test-'));
    const seeded = await seedRegistryStore(dataDir);
    // Blobs are shared with the prebuilt store, not copied.
    const blobs = join(registryStore, 'docker/registry/v2/blobs');
    assert.equal(statSync(join(seeded, 'docker/registry/v2/blobs')).isDirectory(), true);
    assert.ok(statSync(blobs).isDirectory());
    const port = await freePort();
    controller = new AbortController();
    registry = await startManagedRegistry({ dataDir, port, address: '127.0.0.1', signal: controller.signal, log: () => {} });
    for (const image of BASE_IMAGES) {
      const [repo, tag] = image.split(':') as [string, string];
      const res: Response = await fetch(`${registry.endpoint}/v2/${repo}/manifests/${tag}`, {
        method: 'HEAD',
        headers: { accept: 'application/vnd.docker.distribution.manifest.v2+json' },
      });
      assert.equal(res.status, 200, `${image} is in the seeded registry`);
    }
  });

  it('Docker pulls busybox from the seeded registry and runs it', async () => {
    assert.ok(registry, 'the previous test started the registry');
    const ref = `${registry.address}/busybox:1.35`;
    images.push(ref);
    await docker('pull', '-q', ref);
    const name = `minik8s-test-busybox-${suffix}`;
    containers.push(name);
    assert.equal(await docker('run', '--name', name, ref, 'sh', '-c', 'echo hello from busybox; test -d /tmp'), 'hello from busybox');
  });

  it('python and nginx images run their programs', async () => {
    const py = `minik8s-test-python-${suffix}`;
    containers.push(py);
    assert.match(await docker('run', '--name', py, `${LOCAL_REGISTRY}/python:3.11`, 'python', '-c', 'import sys; print(sys.version)'), /^3\.11\./);
    const ngx = `minik8s-test-nginx-${suffix}`;
    containers.push(ngx);
    // Served through the container's own loopback: no port publishing or bridge address needed.
    await docker('run', '-d', '--name', ngx, `${LOCAL_REGISTRY}/nginx:1.22`);
    const probe = `minik8s-test-probe-${suffix}`;
    containers.push(probe);
    await docker('run', '-d', '--name', probe, '--network', `container:${ngx}`, `${LOCAL_REGISTRY}/python:3.11`, 'sleep', '60');
    const page = await waitFor(
      async () => {
        const out = await docker('exec', probe, 'python', '-c', 'import urllib.request; print(urllib.request.urlopen("http://127.0.0.1/").read().decode())');
        return out.includes('Welcome to nginx') ? out : undefined;
      },
      { timeoutMs: 15_000, description: 'nginx to serve its index page' },
    );
    assert.match(page, /Welcome to nginx/);
    await waitFor(async () => (await run('docker', ['logs', ngx])).stdout.includes('"GET / HTTP/1.1" 200'), {
      timeoutMs: 5_000,
      description: "the access log on the container's stdout",
    });
  });

  it('pause is PID 1, reaps orphans and exits 0 on SIGTERM', async () => {
    const pause = `minik8s-test-pause-${suffix}`;
    containers.push(pause);
    await docker('run', '-d', '--name', pause, '--ipc', 'shareable', `${LOCAL_REGISTRY}/minik8s/pause:1.0`);
    const app = `minik8s-test-app-${suffix}`;
    containers.push(app);
    await docker('run', '-d', '--name', app, '--pid', `container:${pause}`, `${LOCAL_REGISTRY}/busybox:1.35`, 'sleep', '60');
    // An orphan that exits: its parent (a short-lived shell) is gone, so pause inherits and must reap it.
    await docker('exec', app, 'sh', '-c', 'sh -c "sleep 0.2 &" ; true');
    const table = await waitFor(
      async () => {
        const ps = await docker('exec', app, 'ps', '-o', 'pid,stat,comm');
        return ps.includes('sleep') && ps.split('\n').filter((l) => /\bsleep$/.test(l)).length === 1 ? ps : undefined;
      },
      { timeoutMs: 10_000, description: 'the orphan to be reaped' },
    );
    assert.match(table, /^\s*1 \S+\s+pause$/m, table);
    assert.doesNotMatch(table, /\s+Z\S*\s/, `no zombies:\n${table}`);
    const started = Date.now();
    await docker('stop', '-t', '10', pause);
    assert.ok(Date.now() - started < 5_000, 'pause stops promptly on SIGTERM');
    assert.equal(await docker('inspect', '-f', '{{.State.ExitCode}}', pause), '0');
  });
});
