// The image factory: builds a function version into an image with Docker's build API (the python runtime template as context), pushes it to the master's registry and answers its digest.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import Docker from 'dockerode';
import type { FunctionSpec } from '../../core/api/function.js';
import { dockerConnectOptions } from '../docker-provider.js';
import { contextFiles, contextTar, normalizeRequirements, renderDockerfile, templateHash, type ContextFile } from './build-context.js';
import { BuildLog, type DockerStreamEvent } from './build-progress.js';
import { CodeError, codeFiles, type CodeFile } from '../../core/api/code-archive.js';
import { isDefaultPip, readPipSettings, renderPipConf, type PipIndexSettings } from './pip-config.js';
import { isLoopbackHost, startLoopbackForwarder, type LoopbackForwarder } from './loopback-forwarder.js';

/** The runtime template shipped with minik8s: templates/python-function/ at the project root (from src/ or dist/src/). */
export function defaultTemplateDir(): string {
  const up = import.meta.url.includes('/dist/') ? '../../../../' : '../../../';
  return fileURLToPath(new URL(`${up}templates/python-function/`, import.meta.url));
}

/** The python base image in the master's registry (scripts/build-images.sh makes it, with pip). */
export const DEFAULT_BASE_IMAGE = 'python:3.11';

/** A build that failed for a reason the user can act on; the message says what and why. */
export class BuildError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BuildError';
  }
}

export interface ImageFactoryOptions {
  /** The engine that builds (default: DOCKER_HOST or the local socket); it must be on the master's machine (loopback is how it reaches the registry). */
  dockerHost?: string;
  /** Where this machine reaches the master's registry, e.g. `http://127.0.0.1:5000`. */
  registryEndpoint: string;
  templateDir?: string;
  /** pip's --index-url for requirements; without it, pip's own configuration where the master runs (PIP_INDEX_URL, pip.conf), else pip's default index. */
  pipIndexUrl?: string;
  /** The index settings as resolved (tests); default: read from this process's environment and pip.conf files at create. */
  pipSettings?: PipIndexSettings;
  baseImage?: string;
  /** Builds at once; more wait their turn (a build is mostly the engine's CPU and disk). */
  concurrency?: number;
  log?: (message: string) => void;
}

export interface BuildRequest {
  namespace: string;
  name: string;
  version: number;
  spec: FunctionSpec;
  buildHash: string;
  /** Called as the build moves: `waiting for another build`, `3/7 RUN ...`, `pushing ...`. */
  onProgress?(step: string): void;
  signal?: AbortSignal;
}

export interface BuiltImage {
  /** What pods run: `functions/NS-NAME@sha256:...`, without a registry host, which each kubelet fills in with the master's registry as it reaches it. */
  image: string;
  /** The tag pushed for people: `functions/NS-NAME:vN`. */
  tag: string;
  digest: string;
}

/** `functions/NS-NAME`: a valid repository path (namespaces are DNS labels, names DNS subdomains). */
export function repositoryFor(namespace: string, name: string): string {
  return `functions/${namespace}-${name}`;
}

/** The runtime template's files: its Python sources (README and tests stay out). */
export async function readTemplate(dir: string): Promise<ContextFile[]> {
  let names: string[];
  try {
    names = (await readdir(dir, { withFileTypes: true })).filter((e) => e.isFile()).map((e) => e.name);
  } catch (err) {
    throw new Error(`the function runtime template ${dir} cannot be read: ${(err as Error).message}`);
  }
  const wanted = names.filter((n) => n.endsWith('.py') && !/^test_|_test\.py$|\.test\./.test(n)).sort();
  if (!wanted.includes('server.py')) throw new Error(`the function runtime template ${dir} has no server.py`);
  return Promise.all(wanted.map(async (n) => ({ path: n, data: await readFile(join(dir, n)), mode: 0o644 })));
}

/** Reads a Docker JSON stream to its end, handing each message over. */
function follow(docker: Docker, stream: NodeJS.ReadableStream, onEvent: (e: DockerStreamEvent) => void, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const abort = () => {
      (stream as Readable).destroy?.();
      reject(signal?.reason instanceof Error ? signal.reason : new Error('the build was cancelled'));
    };
    if (signal?.aborted) return abort();
    signal?.addEventListener('abort', abort, { once: true });
    docker.modem.followProgress(
      stream,
      (err: Error | null) => {
        signal?.removeEventListener('abort', abort);
        if (err) reject(err);
        else resolve();
      },
      onEvent,
    );
  });
}

export class ImageFactory {
  readonly #docker: Docker;
  readonly #options: ImageFactoryOptions;
  readonly #log: (message: string) => void;
  readonly #template: ContextFile[];
  /** The pip.conf every dependency stage gets; undefined when pip's defaults apply. */
  readonly #pipConf: string | undefined;
  readonly templateHash: string;
  #registry: Promise<{ address: string; forwarder?: LoopbackForwarder }> | undefined;
  #running = 0;
  readonly #waiting: (() => void)[] = [];

  private constructor(options: ImageFactoryOptions, template: ContextFile[], pip: PipIndexSettings) {
    this.#options = options;
    this.#pipConf = isDefaultPip(pip) ? undefined : renderPipConf(pip);
    this.#docker = new Docker(dockerConnectOptions(options.dockerHost ?? process.env.DOCKER_HOST));
    this.#log = options.log ?? (() => {});
    this.#template = template;
    this.templateHash = templateHash(template);
  }

  /** Reads the runtime template (the build inputs hash covers it) and pip's index settings (read once: a change needs a master restart). */
  static async create(options: ImageFactoryOptions): Promise<ImageFactory> {
    const pip = options.pipSettings ?? (await readPipSettings({ flagIndexUrl: options.pipIndexUrl }));
    // Where from, never the URLs themselves: they may carry a password.
    if (pip.sources.length) options.log?.(`image factory: requirements install with the package index settings of ${pip.sources.join(', ')}`);
    return new ImageFactory(options, await readTemplate(options.templateDir ?? defaultTemplateDir()), pip);
  }

  /** The registry as the building engine names it: itself when on loopback, else through a loopback forwarder. */
  #engineRegistry(): Promise<{ address: string; forwarder?: LoopbackForwarder }> {
    this.#registry ??= (async () => {
      const url = new URL(this.#options.registryEndpoint);
      const port = Number(url.port || 80);
      if (isLoopbackHost(url.hostname)) return { address: url.host };
      const forwarder = await startLoopbackForwarder({ host: url.hostname.replace(/^\[(.*)\]$/, '$1'), port });
      this.#log(`image factory: the engine reaches the registry ${url.host} through ${forwarder.address}`);
      return { address: forwarder.address, forwarder };
    })();
    this.#registry.catch(() => {
      this.#registry = undefined;
    });
    return this.#registry;
  }

  async #slot(onProgress?: (step: string) => void): Promise<() => void> {
    const limit = this.#options.concurrency ?? 2;
    if (this.#running >= limit) {
      onProgress?.('waiting for another build to finish');
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    } else this.#running++;
    return () => {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#running--;
    };
  }

  /** Builds, tags `REGISTRY/functions/NS-NAME:vN` and pushes; throws BuildError with the reason when it fails. */
  async build(request: BuildRequest): Promise<BuiltImage> {
    const release = await this.#slot(request.onProgress);
    try {
      return await this.#build(request);
    } finally {
      release();
    }
  }

  async #build(request: BuildRequest): Promise<BuiltImage> {
    const { spec, onProgress, signal } = request;
    const repository = repositoryFor(request.namespace, request.name);
    const tag = `${repository}:v${request.version}`;
    onProgress?.('preparing the build context');
    let code: CodeFile[];
    try {
      code = await codeFiles(spec.code, spec.handler);
    } catch (err) {
      if (err instanceof CodeError) throw new BuildError(err.message);
      throw err;
    }
    const registry = await this.#engineRegistry();
    const requirements = normalizeRequirements(spec.requirements);
    const dockerfile = renderDockerfile({
      baseImage: `${registry.address}/${this.#options.baseImage ?? DEFAULT_BASE_IMAGE}`,
      handler: spec.handler,
      hasRequirements: requirements !== '',
      pipConf: requirements !== '' && this.#pipConf !== undefined,
      baseLabels: {
        'minik8s.io/function': `${request.namespace}/${request.name}`,
        // Which registry (so which cluster) the image was made for: one engine may build for several.
        'minik8s.io/registry': new URL(this.#options.registryEndpoint).host,
      },
      labels: {
        'minik8s.io/function-version': String(request.version),
        'minik8s.io/build-hash': request.buildHash,
      },
    });
    const context = await contextTar(
      contextFiles({ dockerfile, requirements, pipConf: requirements !== '' ? this.#pipConf : undefined, runtime: this.#template, code }),
    );
    const local = `${registry.address}/${tag}`;
    const log = new BuildLog();
    const started = Date.now();
    let stream: NodeJS.ReadableStream;
    try {
      // Host networking lets pip reach an index on this machine's loopback (--pip-index-url http://127.0.0.1:...).
      stream = await this.#docker.buildImage(Readable.from([context]), { t: local, networkmode: 'host', rm: true, forcerm: true });
    } catch (err) {
      throw new BuildError(`the Docker engine refused the build: ${(err as Error).message}`);
    }
    await follow(
      this.#docker,
      stream,
      (event) => {
        if (log.feed(event) && log.step) onProgress?.(log.step);
      },
      signal,
    );
    if (log.error) throw new BuildError(log.failureMessage());
    onProgress?.(`pushing ${tag}`);
    let digest: string | undefined;
    let pushError: string | undefined;
    try {
      await follow(
        this.#docker,
        await this.#docker.getImage(local).push({ authconfig: {} }),
        (event) => {
          if (event.aux?.Digest) digest = event.aux.Digest;
          if (event.error || event.errorDetail?.message) pushError = event.errorDetail?.message ?? event.error;
          const m = /digest: (sha256:[0-9a-f]{64})/.exec(event.status ?? '');
          if (m) digest ??= m[1];
        },
        signal,
      );
    } catch (err) {
      pushError ??= (err as Error).message;
    }
    if (pushError) throw new BuildError(`pushing ${tag} to the registry failed: ${pushError}`);
    if (!digest) throw new BuildError(`pushing ${tag} to the registry gave no digest`);
    this.#log(`image factory: built and pushed ${tag} (${digest.slice(0, 19)}) in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return { image: `${repository}@${digest}`, tag, digest };
  }

  async close(): Promise<void> {
    const registry = await this.#registry?.catch(() => undefined);
    await registry?.forwarder?.close();
  }
}
