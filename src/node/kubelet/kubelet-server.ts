// The kubelet's HTTP API (port 10250): container logs, exec, the stats Summary, health; callers must be cluster admins.
import { KUBELET_API_ADMIN_GROUP } from '../../core/api/kubelet-client.js';
import type { Server as HttpServer } from 'node:http';
import type { Readable } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import { serve, type HttpBindings, type ServerType } from '@hono/node-server';
import { userFromCertificate } from '../../core/pki/peer-user.js';
import { Hono, type Context } from 'hono';
import type { Pod } from '../../core/api/pod.js';
import { parseQueryBool } from '../../core/api/query-bool.js';
import { ApiError, BadRequestError, ForbiddenError, NotFoundError, ServiceUnavailableError, UnauthorizedError, toApiError } from '../../core/errors.js';
import type { ContainerStats, PodProvider, PodRef, RuntimeContainer } from '../../runtime/provider.js';
import type { KubeletUser } from './token-review.js';
import { serveUpgrades } from '../../core/lifecycle/http-upgrades.js';
import { registerStreamRoutes } from './exec-stream.js';
import { applyListenerLimits, defaultListenerLimits, listenerServeOptions } from '../../core/lifecycle/listener-limits.js';

/** The group whose members may use the kubelet API (the API server's proxy credential is one). */
export const KUBELET_API_GROUP = 'system:masters';

export interface KubeletAppOptions {
  provider: PodProvider;
  /** The pod as the kubelet knows it from the API (its informer's cache). */
  findPod(namespace: string, name: string): Pod | undefined;
  authenticate(token: string): Promise<KubeletUser | undefined>;
  nodeName: string;
  /** Whole-node usage; without it the node's figures are the sum of its pods'. */
  nodeStats?(): Promise<{ cpuCores: number; memoryBytes: number }>;
  now?: () => Date;
}

export interface StartKubeletServerOptions extends KubeletAppOptions {
  address: string;
  port: number;
  signal: AbortSignal;
  /**
   * Serve HTTPS with this node's certificate (issued by the cluster CA for the node's name);
   * client certificates the CA signed authenticate (the master's kubelet-client one), tokens
   * still go through TokenReview. Absent: plain HTTP.
   */
  tls?: { cert: string; key: string; ca: string };
}

export interface RunningKubeletServer {
  port: number;
  /** Resolves once the listener has closed after the signal aborted. */
  closed: Promise<void>;
}

/** Kubelet Summary API figures (k8s.io/kubelet/pkg/apis/stats/v1alpha1), the fields we fill. */
export interface CpuStats {
  time: string;
  usageNanoCores: number;
}

export interface MemoryStats {
  time: string;
  workingSetBytes: number;
}

export interface PodStatsSummary {
  podRef: { name: string; namespace: string; uid: string };
  cpu: CpuStats;
  memory: MemoryStats;
  containers: { name: string; cpu: CpuStats; memory: MemoryStats }[];
}

export interface StatsSummary {
  node: { nodeName: string; cpu: CpuStats; memory: MemoryStats };
  pods: PodStatsSummary[];
}

/** Builds the Summary from per-pod container stats; node figures are given or summed from the pods. */
export function buildSummary(options: {
  nodeName: string;
  time: string;
  pods: { ref: PodRef; containers: ContainerStats[] }[];
  node?: { cpuCores: number; memoryBytes: number };
}): StatsSummary {
  const { time } = options;
  const cpu = (cores: number): CpuStats => ({ time, usageNanoCores: Math.max(0, Math.round(cores * 1e9)) });
  const memory = (bytes: number): MemoryStats => ({ time, workingSetBytes: Math.max(0, Math.round(bytes)) });
  let nodeCores = 0;
  let nodeBytes = 0;
  const pods = options.pods.map(({ ref, containers }) => {
    const cores = containers.reduce((sum, c) => sum + c.cpuCores, 0);
    const bytes = containers.reduce((sum, c) => sum + c.memoryBytes, 0);
    nodeCores += cores;
    nodeBytes += bytes;
    return {
      podRef: { name: ref.name, namespace: ref.namespace, uid: ref.uid },
      cpu: cpu(cores),
      memory: memory(bytes),
      containers: containers.map((c) => ({ name: c.name, cpu: cpu(c.cpuCores), memory: memory(c.memoryBytes) })),
    };
  });
  const node = options.node ?? { cpuCores: nodeCores, memoryBytes: nodeBytes };
  return { node: { nodeName: options.nodeName, cpu: cpu(node.cpuCores), memory: memory(node.memoryBytes) }, pods };
}

function statusJson(c: Context, err: unknown): Response {
  const apiError = toApiError(err);
  return c.body(JSON.stringify(apiError.toStatus()), apiError.code as 500, { 'content-type': 'application/json' });
}

/** `tailLines` as a non-negative integer, or undefined for "all". */
export function parseTailLines(value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined;
  if (!/^\d+$/.test(value)) throw new BadRequestError(`tailLines must be a non-negative integer, got "${value}"`);
  return Number(value);
}

/** Who may call: 401 for an unknown token, 403 for a known user outside the admin and kubelet-API groups. */
export function authorize(user: KubeletUser | undefined, path: string): void {
  if (!user) throw new UnauthorizedError();
  // The API server calls with its own kubelet client identity (never an admin's); cluster admins may call directly.
  if (!user.groups.includes(KUBELET_API_GROUP) && !user.groups.includes(KUBELET_API_ADMIN_GROUP)) {
    throw new ForbiddenError(
      `user "${user.name}" is not allowed to use the kubelet API (path ${path}); the ${KUBELET_API_ADMIN_GROUP} or ${KUBELET_API_GROUP} group is required`,
    );
  }
}

/** The pod and its named container as the API describes them; 404 Status when either is unknown. */
function lookup(options: KubeletAppOptions, namespace: string, name: string, container: string): { pod: Pod; ref: PodRef } {
  const pod = options.findPod(namespace, name);
  if (!pod) throw new NotFoundError(`pods "${name}" not found`, { kind: 'pods', name });
  const names = [...(pod.spec.initContainers ?? []), ...pod.spec.containers].map((c) => c.name);
  if (!names.includes(container)) {
    throw new NotFoundError(`container "${container}" not found in pod "${name}"; its containers are: [${names.join(' ')}]`, { kind: 'pods', name });
  }
  return { pod, ref: { uid: pod.metadata.uid ?? '', namespace, name } };
}

/** The runtime's newest instance of the container, if one has ever been started. */
async function runtimeContainer(provider: PodProvider, ref: PodRef, container: string): Promise<RuntimeContainer | undefined> {
  const running = await provider.getPod(ref.uid);
  return running?.containers.find((c) => c.name === container);
}

/** Turns a Node stream into a web stream; `release` runs once it ends or the client goes away. */
function webStream(source: Readable, release: () => void): ReadableStream<Uint8Array> {
  const iterator = source[Symbol.asyncIterator]() as AsyncIterator<Buffer | string>;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await iterator.next();
        if (!done) {
          controller.enqueue(typeof value === 'string' ? Buffer.from(value) : new Uint8Array(value));
          return;
        }
      } catch {
        // A log source that breaks mid-stream just ends the response: the status line is long sent.
      }
      controller.close();
      release();
    },
    cancel() {
      release();
      source.destroy();
    },
  });
}

/** Builds the app without listening, so tests can drive it with `app.request()`. */
export function createKubeletApp(options: KubeletAppOptions): Hono {
  const { provider } = options;
  const now = options.now ?? (() => new Date());
  const app = new Hono();
  app.onError((err, c) => statusJson(c, err));
  app.notFound((c) => statusJson(c, new NotFoundError('the server could not find the requested resource')));

  app.get('/healthz', (c) => c.text('ok'));

  app.use('*', async (c, next) => {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(c.req.header('authorization') ?? '');
    let user: KubeletUser | undefined = userFromCertificate((c.env as Partial<HttpBindings> | undefined)?.incoming?.socket as TLSSocket | undefined);
    if (!user && match) {
      try {
        user = await options.authenticate(match[1]!);
      } catch (err) {
        if (err instanceof ApiError && err.code < 500) throw err;
        throw new ServiceUnavailableError(`unable to authenticate the request: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    authorize(user, c.req.path);
    return next();
  });

  app.get('/containerLogs/:namespace/:pod/:container', async (c) => {
    const { namespace, pod: name, container } = c.req.param();
    const { ref } = lookup(options, namespace, name, container);
    const previous = parseQueryBool(c.req.query('previous'), 'previous') ?? false;
    const tailLines = parseTailLines(c.req.query('tailLines'));
    const current = await runtimeContainer(provider, ref, container);
    if (!current) throw new BadRequestError(`container "${container}" in pod "${name}" is waiting to start: ContainerCreating`);
    if (previous && !current.previous) throw new BadRequestError(`previous terminated container "${container}" in pod "${name}" not found`);
    const abort = new AbortController();
    const onClientGone = () => abort.abort();
    c.req.raw.signal?.addEventListener('abort', onClientGone, { once: true });
    const release = () => {
      c.req.raw.signal?.removeEventListener('abort', onClientGone);
      abort.abort();
    };
    let source: Readable;
    try {
      source = await provider.logs(ref, container, {
        follow: parseQueryBool(c.req.query('follow'), 'follow') ?? false,
        tailLines,
        previous,
        timestamps: parseQueryBool(c.req.query('timestamps'), 'timestamps') ?? false,
        signal: abort.signal,
      });
    } catch (err) {
      release();
      throw err;
    }
    return c.body(webStream(source, release), 200, { 'content-type': 'text/plain; charset=utf-8' });
  });

  registerStreamRoutes(app, {
    provider,
    runningContainer: async (namespace, name, container) => {
      const { ref } = lookup(options, namespace, name, container);
      const current = await runtimeContainer(provider, ref, container);
      if (current?.state !== 'running') throw new BadRequestError(`container "${container}" in pod "${name}" is not running`);
      return ref;
    },
    podAddress: async (namespace, name) => {
      const pod = options.findPod(namespace, name);
      if (!pod) throw new NotFoundError(`pods "${name}" not found`, { kind: 'pods', name });
      const ip = (pod.metadata.uid ? await provider.getPod(pod.metadata.uid) : undefined)?.sandbox.ip ?? pod.status?.podIP;
      if (!ip) throw new BadRequestError(`pod "${name}" has no IP address yet`);
      return ip;
    },
  });

  app.post('/exec/:namespace/:pod/:container', async (c) => {
    const { namespace, pod: name, container } = c.req.param();
    const { ref } = lookup(options, namespace, name, container);
    const body = parseExecBody(await c.req.text());
    const current = await runtimeContainer(provider, ref, container);
    if (current?.state !== 'running') {
      throw new BadRequestError(`container "${container}" in pod "${name}" is not running`);
    }
    const result = await provider.exec(ref, container, body.command, {
      stdin: body.stdin === undefined ? undefined : Buffer.from(body.stdin),
      timeoutMs: body.timeoutSeconds === undefined ? undefined : body.timeoutSeconds * 1000,
    });
    return c.json({ exitCode: result.exitCode, stdout: result.stdout, stderr: result.stderr });
  });

  app.get('/stats/summary', async (c) => {
    const time = now().toISOString();
    const running = await provider.listPods();
    // A pod that vanishes between list and stats is left out rather than failing the scrape.
    const pods = (
      await Promise.all(
        running.map(async (p) => {
          try {
            const known = options.findPod(p.namespace, p.name);
            return {
              ref: { uid: p.uid, namespace: p.namespace, name: p.name },
              containers: await provider.stats(p, known?.metadata.uid === p.uid ? known : undefined),
            };
          } catch {
            return undefined;
          }
        }),
      )
    ).filter((p): p is NonNullable<typeof p> => p !== undefined);
    const node = options.nodeStats ? await options.nodeStats().catch(() => undefined) : undefined;
    return c.json(buildSummary({ nodeName: options.nodeName, time, pods, node }));
  });

  return app;
}

export interface ExecRequest {
  command: string[];
  stdin?: string;
  timeoutSeconds?: number;
}

/** Checks the exec body: a non-empty command of strings, optional stdin text and a positive timeout. */
export function parseExecBody(text: string): ExecRequest {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new BadRequestError('the exec request body must be JSON: {"command": ["..."]}');
  }
  const b = (body ?? {}) as Record<string, unknown>;
  if (!Array.isArray(b.command) || b.command.length === 0 || !b.command.every((s) => typeof s === 'string')) {
    throw new BadRequestError('you must specify at least one command for the container');
  }
  if (b.stdin !== undefined && typeof b.stdin !== 'string') throw new BadRequestError('stdin must be a string');
  if (b.timeoutSeconds !== undefined && (typeof b.timeoutSeconds !== 'number' || !(b.timeoutSeconds > 0))) {
    throw new BadRequestError('timeoutSeconds must be a positive number');
  }
  return { command: b.command as string[], stdin: b.stdin as string | undefined, timeoutSeconds: b.timeoutSeconds as number | undefined };
}

/** Listens on address:port (0 picks a free port); rejects with `code` EADDRINUSE when the port is taken. */
export async function startKubeletServer(options: StartKubeletServerOptions): Promise<RunningKubeletServer> {
  const app = createKubeletApp(options);
  const limits = defaultListenerLimits();
  const server = await new Promise<ServerType>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, hostname: options.address, port: options.port, ...listenerServeOptions(limits, options.tls) }, () => resolve(s));
    s.once('error', reject);
  });
  // As the API server's listener: a connection cap under the fd limit, headers within 10 s.
  applyListenerLimits(server, limits);
  const closeUpgraded = serveUpgrades(server as HttpServer, app.fetch as never, { scheme: options.tls ? 'https' : 'http' });
  // Followed log streams would hold close() forever: end open connections on shutdown.
  const closed = new Promise<void>((resolve) => {
    const stop = () => {
      server.close(() => resolve());
      closeUpgraded();
      (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
    };
    if (options.signal.aborted) stop();
    else options.signal.addEventListener('abort', stop, { once: true });
  });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : options.port;
  return { port, closed };
}
