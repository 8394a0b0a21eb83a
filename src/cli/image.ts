// `minik8s image import FILE.tar NAME[:TAG] [--registry HOST:PORT]`: loads a docker save tarball or imports a root filesystem tar, then pushes it to the cluster's registry.
import { createReadStream, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { createGunzip } from 'node:zlib';
import { CliError } from './cli-error.js';
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

/**
 * The registry to push to: --registry, else a host named in NAME, else $MINIK8S_REGISTRY,
 * else the API server's host with the registry's default port (the master runs both).
 */
export function chooseRegistry(options: { flag?: string; fromName?: string; env?: string; server: () => string }): string {
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
  return `${host}:${DEFAULT_REGISTRY_PORT}`;
}

// ---------------------------------------------------------------- tar reading

export interface TarHeader {
  name: string;
  size: number;
  /** The type flag: '0' file, '5' directory, 'x' pax header, 'L' GNU long name, ... */
  type: string;
}

function cString(block: Buffer, start: number, length: number): string {
  const end = block.indexOf(0, start);
  return block.toString('utf8', start, end < 0 || end > start + length ? start + length : end);
}

function octal(block: Buffer, start: number, length: number): number {
  // GNU base-256 for sizes of 8 GiB and more: high bit set, big-endian binary.
  if (block[start]! & 0x80) {
    let n = block[start]! & 0x7f;
    for (let i = 1; i < length; i++) n = n * 256 + block[start + i]!;
    return n;
  }
  const text = cString(block, start, length).trim();
  return text === '' ? 0 : Number.parseInt(text, 8);
}

/** Reads one 512-byte tar header block: the entry, 'end' for a zero block, 'invalid' when the checksum does not match. */
export function parseTarHeader(block: Buffer): TarHeader | 'end' | 'invalid' {
  if (block.length < 512) return 'invalid';
  if (block.subarray(0, 512).every((b) => b === 0)) return 'end';
  let sum = 0;
  for (let i = 0; i < 512; i++) sum += i >= 148 && i < 156 ? 0x20 : block[i]!;
  const recorded = octal(block, 148, 8);
  if (!Number.isFinite(recorded) || recorded !== sum) return 'invalid';
  let name = cString(block, 0, 100);
  if (block.toString('latin1', 257, 262) === 'ustar') {
    const prefix = cString(block, 345, 155);
    if (prefix) name = `${prefix}/${name}`;
  }
  const size = octal(block, 124, 12);
  if (!Number.isFinite(size) || size < 0) return 'invalid';
  return { name, size, type: String.fromCharCode(block[156]!) || '0' };
}

/** The `path` of a pax extended header, which overrides the next entry's name. */
export function paxPath(data: Buffer): string | undefined {
  let pos = 0;
  let path: string | undefined;
  while (pos < data.length) {
    const space = data.indexOf(0x20, pos);
    if (space < 0) break;
    const length = Number.parseInt(data.toString('latin1', pos, space), 10);
    if (!Number.isFinite(length) || length <= 0) break;
    const record = data.toString('utf8', space + 1, pos + length - 1);
    const eq = record.indexOf('=');
    if (record.slice(0, eq) === 'path') path = record.slice(eq + 1);
    pos += length;
  }
  return path;
}

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

/**
 * Reads a tar stream chunk by chunk, keeping only headers (and a manifest.json): tells a docker
 * save tarball from a root filesystem tar without unpacking it, and rejects what is no tar at all.
 */
export class TarScanner {
  #pending = Buffer.alloc(0);
  #skip = 0;
  #collect: { kind: 'manifest' | 'pax' | 'longname'; size: number; parts: Buffer[]; got: number } | undefined;
  #nextName: string | undefined;
  #offset = 0;
  #done = false;
  #entries = 0;
  #manifest: Buffer | undefined;

  push(chunk: Buffer): void {
    let data = chunk;
    while (data.length > 0 && !this.#done) {
      if (this.#skip > 0) {
        const n = Math.min(this.#skip, data.length);
        if (this.#collect) {
          const want = Math.min(n, this.#collect.size - this.#collect.got);
          if (want > 0) this.#collect.parts.push(data.subarray(0, want));
          this.#collect.got += want;
        }
        this.#skip -= n;
        this.#offset += n;
        data = data.subarray(n);
        if (this.#skip === 0 && this.#collect) this.#finishCollect();
        continue;
      }
      const need = 512 - this.#pending.length;
      this.#pending = Buffer.concat([this.#pending, data.subarray(0, need)]);
      data = data.subarray(need);
      if (this.#pending.length < 512) return;
      const header = parseTarHeader(this.#pending);
      this.#pending = Buffer.alloc(0);
      if (header === 'invalid') {
        throw new CliError(this.#offset === 0 ? 'not a tar archive' : `a corrupt tar archive (bad header at byte ${this.#offset})`);
      }
      this.#offset += 512;
      if (header === 'end') {
        this.#done = true;
        return;
      }
      this.#startEntry(header);
    }
  }

  #startEntry(header: TarHeader): void {
    const padded = Math.ceil(header.size / 512) * 512;
    let name = this.#nextName ?? header.name;
    if (header.type === 'x' || header.type === 'L') {
      this.#collect = { kind: header.type === 'x' ? 'pax' : 'longname', size: header.size, parts: [], got: 0 };
    } else {
      this.#nextName = undefined;
      this.#entries++;
      name = name.replace(/^(\.\/)+/, '');
      if (name === 'manifest.json' && (header.type === '0' || header.type === '\0') && header.size <= MAX_MANIFEST_BYTES) {
        this.#collect = { kind: 'manifest', size: header.size, parts: [], got: 0 };
      }
    }
    this.#skip = padded;
    if (padded === 0 && this.#collect) this.#finishCollect();
  }

  #finishCollect(): void {
    const collected = this.#collect!;
    this.#collect = undefined;
    const data = Buffer.concat(collected.parts);
    if (collected.kind === 'manifest') this.#manifest = data;
    else if (collected.kind === 'pax') this.#nextName = paxPath(data) ?? this.#nextName;
    else this.#nextName = cString(data, 0, data.length);
  }

  /** Call after the last chunk. */
  finish(): TarSummary {
    if (this.#offset === 0 && this.#pending.length < 512 && !this.#done) throw new CliError(this.#pending.length === 0 ? 'an empty file, not a tar archive' : 'not a tar archive');
    if (this.#skip > 0 || this.#pending.length > 0) throw new CliError('a truncated tar archive');
    const summary: TarSummary = { entries: this.#entries };
    if (this.#manifest) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(this.#manifest.toString('utf8'));
      } catch {
        throw new CliError('a tar with a manifest.json that is not JSON (not a docker save tarball)');
      }
      if (!Array.isArray(parsed) || parsed.some((m) => typeof m?.Config !== 'string')) throw new CliError('a tar with a manifest.json that is not a docker save manifest');
      summary.manifest = parsed as SaveManifestEntry[];
    }
    return summary;
  }
}

/** The image ID a docker save manifest's Config path names: `blobs/sha256/HEX` (OCI layout) or `HEX.json` (older Docker). */
export function imageIdFromConfigPath(config: string): string | undefined {
  const m = /^(?:blobs\/sha256\/([0-9a-f]{64})|([0-9a-f]{64})\.json)$/.exec(config);
  const hex = m?.[1] ?? m?.[2];
  return hex ? `sha256:${hex}` : undefined;
}

/** Reads the file once through a TarScanner (gunzipping when it is gzip). */
async function scanFile(path: string): Promise<TarSummary> {
  const head = Buffer.alloc(2);
  const fd = await open(path, 'r');
  try {
    await fd.read(head, 0, 2, 0);
  } finally {
    await fd.close();
  }
  const scanner = new TarScanner();
  const raw = createReadStream(path);
  const stream = head[0] === 0x1f && head[1] === 0x8b ? raw.pipe(createGunzip()) : raw;
  try {
    for await (const chunk of stream) scanner.push(chunk as Buffer);
  } catch (err) {
    raw.destroy();
    if (err instanceof CliError) throw err;
    throw new CliError(`cannot read it: ${(err as Error).message}`);
  }
  return scanner.finish();
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

async function registryAnswers(registry: string): Promise<string | undefined> {
  try {
    const res = await fetch(`http://${registry}/v2/`, { signal: AbortSignal.timeout(5_000) });
    await res.arrayBuffer();
    return res.status === 200 || res.status === 401 ? undefined : `HTTP ${res.status}`;
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    return cause?.code ?? cause?.message ?? (err as Error).message;
  }
}

export async function runImageImport(ctx: CliContext, args: ImageImportArgs): Promise<number> {
  if (!args.file) throw new CliError('image import needs a FILE: minik8s image import FILE.tar NAME[:TAG]');
  if (!args.name) throw new CliError('image import needs a NAME[:TAG]: minik8s image import FILE.tar NAME[:TAG]');
  const name = parseImageName(args.name);
  const registry = chooseRegistry({
    flag: args.registry, fromName: name.registry, env: process.env.MINIK8S_REGISTRY || undefined,
    server: () => ctx.client().server.toString(),
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

  const unreachable = await registryAnswers(registry);
  if (unreachable) throw new CliError(`cannot reach the image registry at http://${registry}/v2/ (${unreachable}): is the master running? pass --registry HOST:PORT`);

  const { default: Docker } = await import('dockerode');
  const docker = new Docker();
  const follow = (stream: NodeJS.ReadableStream, onEvent: (e: ProgressEvent) => void) => new Promise<void>((resolve, reject) => {
    docker.modem.followProgress(stream, (err: Error | null) => (err ? reject(err) : resolve()), (event: ProgressEvent) => {
      try {
        onEvent(event);
      } catch (e) {
        reject(e);
      }
    });
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
