// Integration test of `minik8s image import` on the real Docker engine and a real managed registry: a root filesystem tar and a docker save tarball go into the registry and run from there; a non-tar file and an unreachable registry fail clearly.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { formatError } from '../src/cli/cli-error.js';
import type { CliContext } from '../src/cli/context.js';
import { runImageImport } from '../src/cli/image.js';
import { COMMANDS } from '../src/cli/main.js';
import { waitFor } from '../src/core/wait-for.js';
import { startManagedRegistry, type ManagedRegistry } from '../src/control-plane/registry/managed-registry.js';
import { findExecutable } from '../src/control-plane/supervisor/supervised-process.js';
import { ensureBaseImages, LOCAL_REGISTRY } from './helpers/images.js';
import { BINARY, freePort } from './helpers/master.js';

const run = promisify(execFile);
const docker = async (...args: string[]) => (await run('docker', args, { maxBuffer: 16 * 1024 * 1024, timeout: 120_000 })).stdout.trim();

async function dockerWorks(): Promise<boolean> {
  try {
    await docker('info', '--format', '{{.ID}}');
    return process.getuid?.() === 0 && findExecutable('docker-registry') !== undefined;
  } catch {
    return false;
  }
}

const skip = (await dockerWorks()) ? false : 'needs root, a Docker engine and docker-registry';
const BUSYBOX = `${LOCAL_REGISTRY}/busybox:1.35`;
/** Until main.ts registers `image`, the test calls runImageImport in-process, the way main would. */
const VIA_BINARY = (COMMANDS as readonly string[]).includes('image');
const IMPORT_TIMEOUT_MS = 180_000;

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the compiled CLI as a user would, killing it (by its own PID) if it overruns. */
function runBinary(args: string[]): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BINARY, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, MINIK8S_REGISTRY: '' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), IMPORT_TIMEOUT_MS);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? (signal ? 128 : 1), stdout, stderr: signal ? `${stderr}killed by ${signal}\n` : stderr });
    });
  });
}

/** The same command in-process: output through a CliContext, an error printed as main prints it, exit code 1. */
async function runInProcess(file: string, name: string, registry: string): Promise<Result> {
  let stdout = '';
  let stderr = '';
  const ctx: CliContext = {
    namespace: 'default',
    namespaceExplicit: false,
    client: () => {
      throw new Error('image import with --registry needs no API server');
    },
    out: (t) => {
      stdout += t;
    },
    err: (t) => {
      stderr += t;
    },
    stdin: process.stdin,
    now: () => new Date(),
  };
  try {
    const code = await runImageImport(ctx, { file, name, registry });
    return { code, stdout, stderr };
  } catch (err) {
    return { code: 1, stdout, stderr: stderr + formatError(err, {}) };
  }
}

function imageImport(file: string, name: string, registry: string): Promise<Result> {
  return VIA_BINARY ? runBinary(['image', 'import', file, name, '--registry', registry]) : runInProcess(file, name, registry);
}

async function tagsOf(endpoint: string, repository: string): Promise<string[]> {
  const res = await fetch(`${endpoint}/v2/${repository}/tags/list`, { signal: AbortSignal.timeout(5_000) });
  const body = (await res.json()) as { tags?: string[] | null };
  return res.ok ? (body.tags ?? []) : [];
}

const suffix = `${process.pid}-${Date.now()}`;
const containers: string[] = [];
/** Local image references this test made (tags on the engine), removed at the end. */
const images = new Set<string>();
let dir = '';
let controller: AbortController | undefined;
let registry: ManagedRegistry | undefined;

describe('minik8s image import', { skip }, () => {
  before(
    async () => {
      await ensureBaseImages();
      dir = mkdtempSync(join(tmpdir(), 'minik8s-image-import-test-'));
      controller = new AbortController();
      registry = await startManagedRegistry({
        dataDir: join(dir, 'data'),
        port: await freePort(),
        address: '127.0.0.1',
        signal: controller.signal,
        log: () => {},
      });
    },
    { timeout: 15 * 60_000 },
  );

  after(async () => {
    for (const c of containers) await docker('rm', '-f', c).catch(() => '');
    for (const i of images) await docker('rmi', i).catch(() => '');
    controller?.abort();
    await registry?.stopped;
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** Imports FILE as NAME:TAG, checks the output, the registry's tag list, and that Docker runs it from the registry. */
  async function importAndRun(file: string, repository: string, tag: string, kind: RegExp): Promise<void> {
    const target = `${registry!.address}/${repository}:${tag}`;
    images.add(target);
    const result = await imageImport(file, `${repository}:${tag}`, registry!.address);
    assert.equal(result.code, 0, `exit code; stdout:\n${result.stdout}\nstderr:\n${result.stderr}`);
    assert.match(result.stdout, kind);
    assert.match(result.stdout, new RegExp(`^tagged ${target}$`, 'm'));
    assert.match(result.stdout, new RegExp(`^pushing ${target}$`, 'm'));
    assert.match(result.stdout, /^ {2}layer [0-9a-f]{12}: (pushed|layer already exists|mounted from [a-z0-9/._-]+)$/m);
    assert.match(result.stdout, /^digest sha256:[0-9a-f]{64} \(manifest \d+ bytes\)$/m);
    const lines = result.stdout.trimEnd().split('\n');
    assert.equal(lines[lines.length - 1], `${target} is in the registry: use image: ${target}`);

    // The registry lists the tag once the push's manifest PUT is done: no wait should be needed, but allow a moment.
    await waitFor(async () => (await tagsOf(registry!.endpoint, repository)).includes(tag), {
      timeoutMs: 10_000,
      description: `${repository}:${tag} in the registry's tag list`,
    });
    assert.deepEqual(await tagsOf(registry!.endpoint, repository), [tag]);

    // Without the local copy, `docker run` has to pull it from the registry.
    await docker('rmi', target);
    await assert.rejects(docker('image', 'inspect', target), 'the local copy is gone');
    const name = `minik8s-image-import-${suffix}-${containers.length}`;
    containers.push(name);
    const { stdout, stderr } = await run('docker', ['run', '--rm', '--name', name, target, 'echo', 'ok'], { timeout: 120_000 });
    assert.equal(stdout.trim(), 'ok', stderr);
    assert.match(stderr, new RegExp(`Pulling from ${repository}|Downloaded newer image for ${target.replace(/[.]/g, '\\.')}`));
  }

  it('imports a root filesystem tar (docker export) and runs it from the registry', { timeout: 5 * 60_000 }, async () => {
    const file = join(dir, 'rootfs.tar');
    const container = await docker('create', BUSYBOX, 'true');
    containers.push(container);
    await docker('export', '-o', file, container);
    await docker('rm', container);
    await importAndRun(
      file,
      'import-test/rootfs',
      'v1',
      /^importing .*rootfs\.tar \(root filesystem tar, \d+ entries, [\d.]+ MB\) into the local Docker engine$/m,
    );
  });

  it('loads a docker save tarball and runs it from the registry', { timeout: 5 * 60_000 }, async () => {
    const file = join(dir, 'saved.tar');
    await docker('save', '-o', file, BUSYBOX);
    await importAndRun(file, 'import-test/saved', 'v1', /^loading .*saved\.tar \(docker save tarball, [\d.]+ MB\) into the local Docker engine$/m);
  });

  it('refuses a file that is not a tar, saying so', async () => {
    const file = join(dir, 'notes.txt');
    writeFileSync(file, 'these are notes, not an image\n'.repeat(40));
    const result = await imageImport(file, 'import-test/notes:v1', registry!.address);
    assert.notEqual(result.code, 0);
    assert.equal(result.stderr, `error: ${file}: not a tar archive (expected a docker save tarball or a root filesystem tar)\n`);
    assert.equal(result.stdout, '');
    assert.deepEqual(await tagsOf(registry!.endpoint, 'import-test/notes'), []);
  });

  it('says when the registry cannot be reached', async () => {
    const file = join(dir, 'tiny.tar');
    // A tiny root filesystem tar made by the system's tar.
    const tree = join(dir, 'tree');
    await run('mkdir', ['-p', join(tree, 'etc')]);
    writeFileSync(join(tree, 'etc', 'hello'), 'hello\n');
    await run('tar', ['-C', tree, '-cf', file, '.']);
    const port = await freePort();
    const result = await imageImport(file, 'import-test/tiny:v1', `127.0.0.1:${port}`);
    assert.notEqual(result.code, 0);
    assert.equal(
      result.stderr,
      `error: cannot reach the image registry at https://127.0.0.1:${port}/v2/ (ECONNREFUSED): is the master running? pass --registry HOST:PORT\n`,
    );
    await assert.rejects(docker('image', 'inspect', `127.0.0.1:${port}/import-test/tiny:v1`), 'nothing was imported into the engine');
  });
});
