// `minik8s image import FILE.tar NAME[:TAG] [--registry HOST:PORT]`: loads a docker save tarball or imports a root filesystem tar, then pushes it to the cluster's registry.
import { createReadStream, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { createGunzip } from 'node:zlib';
import { extract as tarExtract } from 'tar-stream';
import { REGISTRY_INFO_PATH } from '../core/api/activator-paths.js';
import { ApiError } from '../core/errors.js';
import { CliError } from './cli-error.js';
import { clusterCa, requestTrustingCa } from './cluster-https.js';
import type { CliContext } from './context.js';

export interface ImageImportArgs {
  file?: string;
  name?: string;
  registry?: string;
}

/** The port the master's registry listens on unless told otherwise. */
export const DEFAULT_REGISTRY_PORT = 5000;

export interface ImageName {
  /** A registry host named inside NAME (`10.0.0.1:5000/app`), if any. */
  registry?: string;
  /** The repository path without registry and tag (`team/app`). */
  repository: string;
  tag: string;
}

// Docker's reference grammar: lowercase path components separated by `/`, an optional tag.
const COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
const TAG = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;

/** Parses NAME[:TAG] (default tag `latest`), with an optional leading registry host; throws a CliError for what Docker would refuse. */
export function parseImageName(text: string): ImageName {
  if (!text) throw new CliError('image import needs a NAME[:TAG] for the image');
  if (text.includes('@')) throw new CliError(`invalid image name "${text}": give a tag (NAME:TAG), not a digest`);
  const parts = text.split('/');
  let registry: string | undefined;
  // As in Docker: a first component with a dot, a port or `localhost` is a registry host.
  if (parts.length > 1 && (/[.:]/.test(parts[0]!) || parts[0] === 'localhost')) registry = parts.shift();
  let tag = 'latest';
  const last = parts[parts.length - 1]!;
  const colon = last.lastIndexOf(':');
  if (colon >= 0) {
    tag = last.slice(colon + 1);
    parts[parts.length - 1] = last.slice(0, colon);
    if (!TAG.test(tag)) throw new CliError(`invalid image name "${text}": the tag "${tag}" may hold only letters, digits, _ . and - (at most 128)`);
  }
  for (const part of parts) {
    if (part !== part.toLowerCase()) throw new CliError(`invalid image name "${text}": the repository name must be lowercase`);
    if (!COMPONENT.test(part)) throw new CliError(`invalid image name "${text}": use lowercase letters, digits and single . _ - between them, separated by /`);
  }
  return { registry, repository: parts.join('/'), tag };
}

/** `HOST:PORT` from a URL-ish server address, or undefined when it has no host. */
function hostOf(server: string): string | undefined {
  try {
    const url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(server) ? server : `http://${server}`);
    return url.hostname || undefined;
  } catch {
    return undefined;
  }
}

/** The port the master says its registry listens on; undefined from a master too old to say (the default is then tried). */
async function masterRegistryPort(ctx: CliContext): Promise<number | undefined> {
  let info: { port?: unknown };
  try {
    info = (await ctx.client().request('GET', REGISTRY_INFO_PATH)) as { port?: unknown };
  } catch (err) {
    if (err instanceof ApiError && err.code === 404 && /no image registry/.test(err.message)) {
      throw new CliError('the master runs no image registry (it was started with --no-registry); pass --registry HOST:PORT');
    }
    if (err instanceof ApiError && err.code === 404) return undefined;
    throw err;
  }
  return typeof info.port === 'number' ? info.port : undefined;
}

/**
 * The registry to push to: --registry, else a host named in NAME, else $MINIK8S_REGISTRY,
 * else the API server's host with the port the master says its registry has (or the default).
 */
export function chooseRegistry(options: { flag?: string; fromName?: string; env?: string; server: () => string; masterRegistryPort?: number }): string {
  if (options.flag && options.fromName && options.flag !== options.fromName) {
    throw new CliError(`the image name names registry ${options.fromName} but --registry says ${options.flag}; give one of them`);
  }
  const chosen = options.flag || options.fromName || options.env;
  if (chosen) {
    if (/^[a-z]+:\/\//i.test(chosen) || chosen.includes('/')) throw new CliError(`invalid registry "${chosen}": give HOST:PORT, e.g. 127.0.0.1:5000`);
    return chosen;
  }
  const server = options.server();
  const host = hostOf(server);
  if (!host) throw new CliError(`cannot tell the registry from the API server address "${server}"; pass --registry HOST:PORT`);
  return `${host}:${options.masterRegistryPort ?? DEFAULT_REGISTRY_PORT}`;
}

// ---------------------------------------------------------------- tar reading

export interface SaveManifestEntry {
  Config: string;
  RepoTags?: string[] | null;
  Layers?: string[];
}

export interface TarSummary {
  /** How many entries (files, dirs, links) the archive holds. */
  entries: number;
  /** The top-level manifest.json of a `docker save` tarball, when there is one. */
  manifest?: SaveManifestEntry[];
}

const MAX_MANIFEST_BYTES = 4 * 1024 * 1024;

/** Checks a docker save manifest.json's text: an array of entries, each naming its Config. */
function parseSaveManifest(text: string): SaveManifestEntry[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new CliError('a tar with a manifest.json that is not JSON (not a docker save tarball)');
  }
  if (!Array.isArray(parsed) || parsed.some((m) => typeof m?.Config !== 'string'))
    throw new CliError('a tar with a manifest.json that is not a docker save manifest');
  return parsed as SaveManifestEntry[];
}

/**
 * Reads a tar stream through tar-stream's extract, keeping only headers (and a small top-level
 * manifest.json) and draining every other entry: tells a docker save tarball from a root
 * filesystem tar without unpacking it, and rejects what is no tar at all, an empty file, a
 * truncated or corrupt archive, and a manifest.json that is not a docker save manifest.
 * Errors from `source` itself (a read or gunzip failure) come out as `cannot read it: ...`.
 */
export async function scanTar(source: AsyncIterable<Uint8Array>): Promise<TarSummary> {
  const extract = tarExtract();
  let bytes = 0;
  let entries = 0;
  let manifestText: string | undefined;
  /** Where the header after the last entry's data begins. */
  let nextHeaderAt = 0;
  let sourceError: unknown;

  const feed = (async () => {
    try {
      for await (const chunk of source) {
        if (extract.destroyed) return;
        bytes += chunk.length;
        if (!extract.write(chunk)) {
          await new Promise<void>((resolve) => {
            const done = () => {
              extract.off('drain', done);
              extract.off('close', done);
              resolve();
            };
            extract.on('drain', done);
            extract.on('close', done);
            if (extract.destroyed) done();
          });
        }
      }
      if (!extract.destroyed) extract.end(undefined);
    } catch (err) {
      sourceError = err;
      extract.destroy(err as Error);
    }
  })();

  try {
    for await (const entry of extract) {
      entries++;
      const { header } = entry;
      const size = header.size;
      // entry.offset: where its own header block begins (after any pax or GNU long-name header).
      nextHeaderAt = entry.offset + 512 + Math.ceil(size / 512) * 512;
      const name = header.name.replace(/^(\.\/)+/, '');
      if (name === 'manifest.json' && header.type === 'file' && size <= MAX_MANIFEST_BYTES) {
        const parts: Buffer[] = [];
        for await (const chunk of entry) parts.push(chunk as Buffer);
        manifestText = Buffer.concat(parts).toString('utf8');
      } else {
        // Drain it: the extractor reads on only once this entry's data is consumed.
        entry.resume();
      }
    }
  } catch (err) {
    await feed;
    if (sourceError !== undefined) throw new CliError(`cannot read it: ${(sourceError as Error).message}`);
    const message = (err as Error).message ?? String(err);
    if (bytes === 0) throw new CliError('an empty file, not a tar archive');
    if (entries === 0 && (bytes < 512 || !/Unexpected end of data/.test(message))) throw new CliError('not a tar archive');
    if (/Unexpected end of data/.test(message)) throw new CliError('a truncated tar archive');
    throw new CliError(`a corrupt tar archive (bad header at byte ${nextHeaderAt})`);
  }
  await feed;
  if (sourceError !== undefined) throw new CliError(`cannot read it: ${(sourceError as Error).message}`);
  if (bytes === 0) throw new CliError('an empty file, not a tar archive');
  const summary: TarSummary = { entries };
  if (manifestText !== undefined) summary.manifest = parseSaveManifest(manifestText);
  return summary;
}

/** The image ID a docker save manifest's Config path names: `blobs/sha256/HEX` (OCI layout) or `HEX.json` (older Docker). */
export function imageIdFromConfigPath(config: string): string | undefined {
  const m = /^(?:blobs\/sha256\/([0-9a-f]{64})|([0-9a-f]{64})\.json)$/.exec(config);
  const hex = m?.[1] ?? m?.[2];
  return hex ? `sha256:${hex}` : undefined;
}

/** Reads the file once through scanTar (gunzipping when it is gzip). */
async function scanFile(path: string): Promise<TarSummary> {
  const head = Buffer.alloc(2);
  const fd = await open(path, 'r');
  try {
    await fd.read(head, 0, 2, 0);
  } finally {
    await fd.close();
  }
  const raw = createReadStream(path);
  const gzip = head[0] === 0x1f && head[1] === 0x8b;
  const stream = gzip ? raw.pipe(createGunzip()) : raw;
  // pipe() does not pass the file's own errors on to the gunzip stream.
  if (gzip) raw.once('error', (err) => stream.destroy(err));
  try {
    return await scanTar(stream);
  } finally {
    raw.destroy();
  }
}

// ---------------------------------------------------------------- docker

export interface ProgressEvent {
  id?: string;
  status?: string;
  stream?: string;
  progress?: string;
  error?: string;
  errorDetail?: { message?: string };
  aux?: { Digest?: string; Size?: number; Tag?: string };
}

/** What to print for one push progress event (each layer's final state, the digest); an error event throws. */
export function pushProgress(event: ProgressEvent): { line?: string; digest?: string } {
  if (event.error || event.errorDetail?.message) throw new Error(event.errorDetail?.message ?? event.error);
  if (event.aux?.Digest) return { line: `digest ${event.aux.Digest} (manifest ${event.aux.Size ?? '?'} bytes)`, digest: event.aux.Digest };
  if (event.id && event.status && (event.status === 'Pushed' || event.status === 'Layer already exists' || event.status.startsWith('Mounted from'))) {
    return { line: `  layer ${event.id}: ${event.status.toLowerCase()}` };
  }
  return {};
}

/** Turns a Docker engine complaint into a message the user can act on. */
export function explainPushError(message: string, registry: string): string {
  if (/server gave HTTP response to HTTPS client/.test(message)) {
    return `the Docker engine will not push to ${registry} over plain HTTP: start dockerd with --insecure-registry ${registry} (or add it to insecure-registries in /etc/docker/daemon.json)`;
  }
  if (/connection refused|no such host|i\/o timeout|no route to host/i.test(message)) {
    return `the Docker engine cannot reach the registry at ${registry}: ${message}`;
  }
  return `push to ${registry} failed: ${message}`;
}

function dockerUnreachable(err: unknown): CliError | undefined {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT' || code === 'ECONNREFUSED' || code === 'EACCES') {
    const where = process.env.DOCKER_HOST ?? '/var/run/docker.sock';
    return new CliError(`cannot reach the Docker engine at ${where} (${code}): is dockerd running${code === 'EACCES' ? ' and may you use it' : ''}?`);
  }
  return undefined;
}

/** GET /v2/ of a registry over https (trusting `ca`) or http, within 5 s; resolves the status code. */
async function getV2(url: string, ca: string | undefined): Promise<number> {
  try {
    return (await requestTrustingCa(url, { method: 'GET', ca, signal: AbortSignal.timeout(5_000) })).status;
  } catch (err) {
    if ((err as Error).name === 'AbortError' || (err as Error).name === 'TimeoutError')
      throw Object.assign(new Error('no answer within 5 s'), { code: 'ETIMEDOUT' });
    throw err;
  }
}

/**
 * Whether the registry answers: over https with the cluster CA first (a master serves its
 * registry so unless it runs --insecure-http), then over plain http when the port speaks no TLS.
 * Returns the URL that answered, or why none did.
 */
async function registryAnswers(registry: string, ca: string | undefined): Promise<{ url: string; problem?: string }> {
  const secure = `https://${registry}/v2/`;
  try {
    const status = await getV2(secure, ca);
    return { url: secure, ...(status === 200 || status === 401 ? {} : { problem: `HTTP ${status}` }) };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? '';
    // A plain-HTTP registry answers the TLS hello with HTTP: try it the old way.
    if (code !== 'EPROTO' && !/WRONG_VERSION_NUMBER|PACKET_LENGTH_TOO_LONG/.test(code + (err as Error).message)) {
      return {
        url: secure,
        problem: /CERT|SELF_SIGNED|UNABLE_TO_VERIFY/.test(code) ? `its certificate is not one the cluster CA signed: ${code}` : code || (err as Error).message,
      };
    }
  }
  const plain = `http://${registry}/v2/`;
  try {
    const status = await getV2(plain, undefined);
    return { url: plain, ...(status === 200 || status === 401 ? {} : { problem: `HTTP ${status}` }) };
  } catch (err) {
    return { url: plain, problem: (err as NodeJS.ErrnoException).code ?? (err as Error).message };
  }
}

export async function runImageImport(ctx: CliContext, args: ImageImportArgs): Promise<number> {
  if (!args.file) throw new CliError('image import needs a FILE: minik8s image import FILE.tar NAME[:TAG]');
  if (!args.name) throw new CliError('image import needs a NAME[:TAG]: minik8s image import FILE.tar NAME[:TAG]');
  const name = parseImageName(args.name);
  const env = process.env.MINIK8S_REGISTRY || undefined;
  const registry = chooseRegistry({
    flag: args.registry,
    fromName: name.registry,
    env,
    server: () => ctx.client().server.toString(),
    masterRegistryPort: args.registry || name.registry || env ? undefined : await masterRegistryPort(ctx),
  });
  const target = `${registry}/${name.repository}:${name.tag}`;

  let size: number;
  try {
    const st = statSync(args.file);
    if (st.isDirectory()) throw new CliError(`${args.file} is a directory; make a tar of it first (tar -C DIR -cf FILE.tar .)`);
    size = st.size;
  } catch (err) {
    if (err instanceof CliError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    throw new CliError(code === 'ENOENT' ? `${args.file}: no such file` : `cannot read ${args.file}: ${(err as Error).message}`);
  }
  let summary: TarSummary;
  try {
    summary = await scanFile(args.file);
  } catch (err) {
    throw new CliError(`${args.file}: ${(err as Error).message} (expected a docker save tarball or a root filesystem tar)`);
  }

  const answer = await registryAnswers(registry, clusterCa(ctx));
  if (answer.problem)
    throw new CliError(`cannot reach the image registry at ${answer.url} (${answer.problem}): is the master running? pass --registry HOST:PORT`);

  const { default: Docker } = await import('dockerode');
  const docker = new Docker();
  const follow = (stream: NodeJS.ReadableStream, onEvent: (e: ProgressEvent) => void) =>
    new Promise<void>((resolve, reject) => {
      docker.modem.followProgress(
        stream,
        (err: Error | null) => (err ? reject(err) : resolve()),
        (event: ProgressEvent) => {
          try {
            onEvent(event);
          } catch (e) {
            reject(e);
          }
        },
      );
    });
  const mb = (size / 1e6).toFixed(1);

  try {
    if (summary.manifest) {
      if (summary.manifest.length !== 1) throw new CliError(`${args.file} holds ${summary.manifest.length} images; save one image per tarball`);
      const id = imageIdFromConfigPath(summary.manifest[0]!.Config);
      if (!id) throw new CliError(`${args.file}: cannot tell the image ID from its manifest (Config "${summary.manifest[0]!.Config}")`);
      ctx.out(`loading ${args.file} (docker save tarball, ${mb} MB) into the local Docker engine\n`);
      let failure: string | undefined;
      await follow(await docker.loadImage(args.file), (e) => {
        if (e.error || e.errorDetail?.message) failure = e.errorDetail?.message ?? e.error;
      });
      if (failure) throw new CliError(`the Docker engine could not load ${args.file}: ${failure}`);
      await docker.getImage(id).tag({ repo: `${registry}/${name.repository}`, tag: name.tag });
    } else {
      ctx.out(`importing ${args.file} (root filesystem tar, ${summary.entries} entries, ${mb} MB) into the local Docker engine\n`);
      let failure: string | undefined;
      await follow(await docker.importImage(args.file, { repo: `${registry}/${name.repository}`, tag: name.tag }), (e) => {
        if (e.error || e.errorDetail?.message) failure = e.errorDetail?.message ?? e.error;
      });
      if (failure) throw new CliError(`the Docker engine could not import ${args.file}: ${failure}`);
    }
    ctx.out(`tagged ${target}\npushing ${target}\n`);
    let digest: string | undefined;
    try {
      // An empty auth header: without one the engine refuses the request ("missing X-Registry-Auth").
      const stream = await docker.getImage(`${registry}/${name.repository}`).push({ tag: name.tag, authconfig: {} });
      await follow(stream, (e) => {
        const progress = pushProgress(e);
        digest ??= progress.digest;
        if (progress.line) ctx.out(`${progress.line}\n`);
      });
    } catch (err) {
      if (err instanceof CliError) throw err;
      throw new CliError(explainPushError((err as Error).message, registry));
    }
    if (!digest) throw new CliError(`push to ${registry} ended without a digest; see dockerd's log`);
    ctx.out(`${target} is in the registry: use image: ${target}\n`);
    return 0;
  } catch (err) {
    throw dockerUnreachable(err) ?? err;
  }
}
