// Base images for simulated clusters and tests: makes sure the local Docker engine and the prebuilt registry store hold them, and seeds a new master's registry store from it.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The registry address the base images are named with on a one-machine cluster. */
export const LOCAL_REGISTRY = '127.0.0.1:5000';

/** Every base image, as `NAME:TAG` in the registry (scripts/build-images.sh makes them). */
export const BASE_IMAGES = ['minik8s/pause:1.0', 'busybox:1.35', 'busybox:latest', 'python:3.11', 'python:latest', 'nginx:1.22', 'nginx:latest'] as const;

/** The script, from dist/scripts/sim/base-images.js (or scripts/sim/base-images.ts under a loader). */
const BUILD_SCRIPT = fileURLToPath(new URL(import.meta.url.includes('/dist/') ? '../../../scripts/build-images.sh' : '../build-images.sh', import.meta.url));

/** Where build-images.sh keeps the prebuilt registry store (the default master's own store). */
export function prebuiltRegistryStore(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.MINIK8S_DATA_DIR || '/var/lib/minik8s', 'registry');
}

/** The files a registry store holds for NAME:TAG: present once the tag has been pushed there. */
export function tagLinkPath(store: string, image: string): string {
  const colon = image.lastIndexOf(':');
  return join(store, 'docker/registry/v2/repositories', image.slice(0, colon), '_manifests/tags', image.slice(colon + 1), 'current/link');
}

/** The base images missing from the local engine or the store (empty: nothing to build). */
export async function missingBaseImages(store = prebuiltRegistryStore()): Promise<string[]> {
  const missing: string[] = [];
  for (const image of BASE_IMAGES) {
    let local = true;
    try {
      await run('docker', ['image', 'inspect', '--format', '{{.Id}}', `${LOCAL_REGISTRY}/${image}`]);
    } catch {
      local = false;
    }
    if (!local || !existsSync(tagLinkPath(store, image))) missing.push(image);
  }
  return missing;
}

let ensured: Promise<{ registryStore: string }> | undefined;

/**
 * Makes sure the base images exist, running scripts/build-images.sh when any is missing (cached:
 * seconds when they exist, about two minutes on a fresh machine). Once per process.
 */
export function ensureBaseImages(): Promise<{ registryStore: string }> {
  ensured ??= (async () => {
    const registryStore = prebuiltRegistryStore();
    if ((await missingBaseImages(registryStore)).length > 0) {
      try {
        await run('bash', [BUILD_SCRIPT], { maxBuffer: 16 * 1024 * 1024, timeout: 15 * 60_000 });
      } catch (err) {
        const e = err as { stdout?: string; stderr?: string; message: string };
        throw new Error(`scripts/build-images.sh failed: ${(e.stderr || e.stdout || e.message).trim().split('\n').slice(-5).join('\n')}`);
      }
      const still = await missingBaseImages(registryStore);
      if (still.length > 0) throw new Error(`scripts/build-images.sh ran but these base images are still missing: ${still.join(', ')}`);
    }
    return { registryStore };
  })();
  ensured.catch(() => {
    ensured = undefined;
  });
  return ensured;
}

/**
 * Gives a new master's data dir a registry store that already holds the base images, without a
 * push: blobs are hard links (content-addressed, never rewritten), the small per-repository link
 * files are real copies, because the registry rewrites those in place when a tag is pushed again.
 */
export async function seedRegistryStore(targetDataDir: string, source = prebuiltRegistryStore()): Promise<string> {
  const target = join(targetDataDir, 'registry');
  const v2 = 'docker/registry/v2';
  if (!existsSync(join(source, v2))) throw new Error(`no prebuilt registry store at ${source}: call ensureBaseImages() first`);
  mkdirSync(join(target, v2), { recursive: true });
  try {
    await run('cp', ['-al', join(source, v2, 'blobs'), join(target, v2)]);
  } catch {
    // Another filesystem (no hard links across devices): a real copy works, only slower.
    rmSync(join(target, v2, 'blobs'), { recursive: true, force: true });
    await run('cp', ['-a', join(source, v2, 'blobs'), join(target, v2)]);
  }
  await run('cp', ['-a', join(source, v2, 'repositories'), join(target, v2)]);
  return target;
}
