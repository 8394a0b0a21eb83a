// What an image build is made of: the build-inputs hash, the generated Dockerfile and the tar context Docker's build API takes.
import { createHash } from 'node:crypto';
import { pack } from 'tar-stream';
import { BUILD_FIELDS, type FunctionSpec } from '../../core/api/function.js';
import type { CodeFile } from '../../core/api/code-archive.js';

/** Where things go in the image (the runtime template's README names the same places). */
export const APP_DIR = '/app';
export const RUNTIME_DIR = '/app/runtime';
export const FUNCTION_DIR = '/app/function';
export const DEPS_DIR = '/app/deps';
export const FUNCTION_PORT = 8080;

/** Stable JSON: object keys sorted, so equal values hash alike whatever order they were written in. */
function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${stableJson((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * SHA-256 of what an image is built from: runtime, handler, code and requirements, plus the
 * runtime template's own hash (a master with a new server.py builds new images). Versions
 * with equal hashes share one image.
 */
export function buildInputsHash(spec: Pick<FunctionSpec, (typeof BUILD_FIELDS)[number]>, templateHash: string): string {
  const inputs: Record<string, unknown> = { template: templateHash };
  for (const field of BUILD_FIELDS) inputs[field] = field === 'requirements' ? normalizeRequirements(spec.requirements) : spec[field];
  return createHash('sha256').update(stableJson(inputs)).digest('hex');
}

/** Requirements without blank lines and comments (they change nothing pip does); empty when there are none. */
export function normalizeRequirements(text: string | undefined): string {
  return (text ?? '')
    .split('\n')
    .map((l) => l.replace(/(^|\s)#.*$/, '').trim())
    .filter(Boolean)
    .join('\n');
}

/** SHA-256 over the runtime template's files (name and content), in name order. */
export function templateHash(files: readonly { path: string; data: Buffer }[]): string {
  const h = createHash('sha256');
  for (const f of [...files].sort((a, b) => (a.path < b.path ? -1 : 1))) h.update(`${f.path}\0${f.data.length}\0`).update(f.data);
  return h.digest('hex');
}

export interface DockerfileOptions {
  /** The python base image as the building engine names it, e.g. `127.0.0.1:5000/python:3.11`. */
  baseImage: string;
  handler: string;
  /** True when requirements.txt has something to install (otherwise no RUN step: a build with no container is quick). */
  hasRequirements: boolean;
  /** The context carries a pip.conf (the master's index settings) for the dependency stage. */
  pipConf?: boolean;
  /** Labels set first, on every layer (stable per function: the cache still works across its versions), so its images can be found, intermediate ones too. */
  baseLabels?: Record<string, string>;
  labels: Record<string, string>;
}

/** Single-quotes a word for /bin/sh. */
function shellQuote(s: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** Where the dependency stage puts the context's pip.conf. */
export const PIP_CONF_PATH = `${APP_DIR}/pip.conf`;

/** The pip command of the requirements step: no colours or progress bars (the output reaches status and the CLI as text), the index from the pip.conf when there is one. */
export function pipInstallCommand(options: { pipConf?: boolean }): string {
  const args = [
    ...(options.pipConf ? [`PIP_CONFIG_FILE=${PIP_CONF_PATH}`] : []),
    'python3',
    '-m',
    'pip',
    'install',
    '--no-cache-dir',
    '--disable-pip-version-check',
    '--no-input',
    '--no-warn-script-location',
    '--no-color',
    '--progress-bar',
    'off',
    // Fail fast when no index answers rather than retrying for minutes; the message says what to do.
    '--retries',
    '1',
    '--timeout',
    '15',
    '--target',
    DEPS_DIR,
  ];
  args.push('-r', `${APP_DIR}/requirements.txt`);
  return args.map(shellQuote).join(' ');
}

/**
 * The Dockerfile: requirements install in a stage of their own, whose /app/deps alone is copied
 * into the image (the index settings, which may carry a password, stay behind in that stage and
 * are in no layer of the function image); then the runtime, then the code, so the dependency
 * layer survives code changes. JSON-form instructions need no shell quoting of values.
 */
export function renderDockerfile(options: DockerfileOptions): string {
  const render = (map: Record<string, string> | undefined) =>
    Object.entries(map ?? {})
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, v]) => `${JSON.stringify(k)}=${JSON.stringify(v)}`)
      .join(' ');
  const labels = render(options.labels);
  const baseLabels = render(options.baseLabels);
  const stageStart = (as?: string) => [
    `FROM ${options.baseImage}${as ? ` AS ${as}` : ''}`,
    ...(baseLabels ? [`LABEL ${baseLabels}`] : []),
    `WORKDIR ${APP_DIR}`,
  ];
  const lines = ['# Generated by the minik8s image factory.'];
  if (options.hasRequirements) {
    lines.push(...stageStart('deps'), `COPY requirements.txt ${APP_DIR}/requirements.txt`);
    if (options.pipConf) lines.push(`COPY pip.conf ${PIP_CONF_PATH}`);
    lines.push(`RUN ${pipInstallCommand(options)}`);
  }
  lines.push(...stageStart());
  if (options.hasRequirements) lines.push(`COPY --from=deps ${DEPS_DIR}/ ${DEPS_DIR}/`);
  lines.push(
    `COPY runtime/ ${RUNTIME_DIR}/`,
    `COPY function/ ${FUNCTION_DIR}/`,
    `ENV PYTHONPATH=${DEPS_DIR}:${FUNCTION_DIR} PYTHONUNBUFFERED=1 MINIK8S_HANDLER=${JSON.stringify(options.handler)}`,
    ...(labels ? [`LABEL ${labels}`] : []),
    `EXPOSE ${FUNCTION_PORT}`,
    `CMD ["python3", "${RUNTIME_DIR}/server.py"]`,
  );
  return `${lines.join('\n')}\n`;
}

export interface ContextFile {
  path: string;
  data: Buffer;
  mode?: number;
}

/** The files of the build context: Dockerfile, requirements.txt, pip.conf (when given), runtime/ and function/. */
export function contextFiles(options: {
  dockerfile: string;
  requirements: string;
  pipConf?: string;
  runtime: readonly ContextFile[];
  code: readonly CodeFile[];
}): ContextFile[] {
  return [
    { path: 'Dockerfile', data: Buffer.from(options.dockerfile) },
    { path: 'requirements.txt', data: Buffer.from(options.requirements ? `${options.requirements}\n` : '') },
    // Readable by the builder only: it may hold an index password.
    ...(options.pipConf !== undefined ? [{ path: 'pip.conf', data: Buffer.from(options.pipConf), mode: 0o600 }] : []),
    ...options.runtime.map((f) => ({ ...f, path: `runtime/${f.path}` })),
    ...options.code.map((f) => ({ path: `function/${f.path}`, data: f.data, mode: f.mode })),
  ];
}

/** A tar of the files (fixed times and owners, so the same inputs give the same context). */
export async function contextTar(files: readonly ContextFile[]): Promise<Buffer> {
  const archive = pack();
  const chunks: Buffer[] = [];
  archive.on('data', (c: unknown) => {
    chunks.push(c as Buffer);
  });
  const ended = new Promise<void>((resolve, reject) => {
    archive.on('end', () => resolve());
    archive.on('error', reject);
  });
  const dirs = new Set<string>();
  const mtime = new Date(0);
  for (const f of files) {
    const parts = f.path.split('/');
    for (let i = 1; i < parts.length; i++) {
      const dir = parts.slice(0, i).join('/');
      if (dirs.has(dir)) continue;
      dirs.add(dir);
      archive.entry({ name: `${dir}/`, type: 'directory', mode: 0o755, mtime, uid: 0, gid: 0 });
    }
    archive.entry({ name: f.path, size: f.data.length, mode: f.mode ?? 0o644, mtime, uid: 0, gid: 0 }, f.data);
  }
  // Empty directories still have to exist for `COPY function/ ...`.
  for (const dir of ['runtime', 'function']) if (!dirs.has(dir)) archive.entry({ name: `${dir}/`, type: 'directory', mode: 0o755, mtime, uid: 0, gid: 0 });
  archive.finalize();
  await ended;
  return Buffer.concat(chunks);
}
