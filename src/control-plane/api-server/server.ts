// The API server: a Hono app (authentication, authorization, health, special routes, discovery, resources) and its HTTP listener.
import type { Server as HttpServer } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { serveUpgrades } from '../../core/lifecycle/http-upgrades.js';
import { serve, type HttpBindings, type ServerType } from '@hono/node-server';
import { Hono, type Context } from 'hono';
import { namespaceKind } from '../../core/api/namespace.js';
import { Informer } from '../../core/controller/informer.js';
import type { InformerFactory } from '../../core/controller/informer-factory.js';
import { AlreadyExistsError, NotFoundError, UnauthorizedError } from '../../core/errors.js';
import type { Store } from '../../core/store/store.js';
import { applyListenerLimits, defaultListenerLimits, listenerServeOptions, type ListenerLimits } from '../../core/lifecycle/listener-limits.js';
import { versionInfo } from '../../core/version.js';
import { auditMiddleware, type AuditSink } from './audit-log.js';
import { type Authenticator, type UserInfo, userFromCertificate } from './auth.js';
import { authorizationMiddleware } from './authorize-request.js';
import { impersonationMiddleware } from './impersonation.js';
import type { RbacIndex } from '../rbac/rbac-authorizer.js';
import { rbacChain } from '../rbac/rbac-chain.js';
import type { NodeAddressPolicy } from './node-restriction.js';
import { apiGroupList, apiResourceList, coreVersions } from './discovery.js';
import { DEFAULT_MAX_MUTATING_REQUESTS_IN_FLIGHT, DEFAULT_MAX_REQUESTS_IN_FLIGHT, maxInFlightMiddleware } from './max-in-flight.js';
import { ObjectService, SYSTEM_NAMESPACES } from './object-service.js';
import { checkRequestTarget } from './paths.js';
import { mountOpenApiRoutes } from './openapi-routes.js';
import { METRICS_PATH, metricsResponse, requestCountingMiddleware } from './request-metrics-routes.js';
import { handleResource, statusResponse } from './resource-routes.js';

export type ApiHono = Hono<{ Variables: { user: UserInfo }; Bindings: Partial<HttpBindings> }>;

/** Adds routes served after authentication and authorization, ahead of discovery and the generic resource routes. */
export type ApiRoutes = (app: ApiHono, context: { service: ObjectService }) => void;

export interface ApiAppOptions {
  store: Store;
  authenticator: Authenticator;
  /** The object service to serve (default: a new one over `store`), for callers that need it before the app exists. */
  service?: ObjectService;
  /** Special routes (node proxy, join, token review), registered in this order. */
  routes?: readonly ApiRoutes[];
  /** Idle watches get a BOOKMARK this often (Kubernetes guarantees at least once a minute). */
  bookmarkIntervalMs?: number;
  /** Where each request's audit event goes (--audit-log-path); no audit log without it. */
  audit?: AuditSink;
  /** Bytes each watch stream may hold for a client that does not read (default 1 MiB). */
  watchBufferBytes?: number;
  /** How long a watch waits for its client to read before ending (default 10 s; the client re-lists). */
  slowWatcherTimeoutMs?: number;
  /** Non-mutating requests served at once (--max-requests-inflight, default 400; 0 for no limit). Watches, logs and exec do not count. */
  maxRequestsInFlight?: number;
  /** Mutating requests served at once (--max-mutating-requests-inflight, default 200; 0 for no limit). */
  maxMutatingRequestsInFlight?: number;
  now?: () => Date;
  /** Which addresses nodes may report for themselves (node restriction); default: none loopback, none shared. */
  nodeAddresses?: NodeAddressPolicy;
  /** The cluster CA (PEM), served to anyone at GET /cacerts: workers check it against their pinned join token. */
  caPem?: string;
  /** RBAC's roles and bindings (the master's, fed by its informers): the chain's last link and the escalation check. Absent: Node rules and masters only. */
  rbac?: RbacIndex;
}

export interface ApiApp {
  app: ApiHono;
  service: ObjectService;
}

const PUBLIC_PATHS = new Set(['/healthz', '/livez', '/readyz', '/version', '/cacerts']);

/** Builds the app without listening, so tests can drive it with `app.request()`. */
export function createApiApp(options: ApiAppOptions): ApiApp {
  const service = options.service ?? new ObjectService({ store: options.store, now: options.now });
  const bookmarkIntervalMs = options.bookmarkIntervalMs ?? 30_000;
  const app: ApiHono = new Hono<{ Variables: { user: UserInfo }; Bindings: Partial<HttpBindings> }>();

  app.onError((err, c) => statusResponse(c, err));
  app.notFound((c) => statusResponse(c, new NotFoundError('the server could not find the requested resource')));

  // Before any route: the Request's URL has already resolved `..` and `%2e%2e`, so judge the target as it came off the socket.
  app.use('*', async (c, next) => {
    const incoming = (c.env as { incoming?: { url?: string } } | undefined)?.incoming;
    if (incoming?.url !== undefined) checkRequestTarget(incoming.url);
    else {
      const url = new URL(c.req.url);
      checkRequestTarget(`${url.pathname}${url.search}`);
    }
    return next();
  });

  app.get('/healthz', (c) => c.text('ok'));
  app.get('/livez', (c) => c.text('ok'));
  app.get('/readyz', async (c) => {
    try {
      await withTimeout(options.store.currentRevision(), 2000);
      return c.text('ok');
    } catch {
      return c.text('store unreachable', 503);
    }
  });
  app.get('/version', (c) => c.json(versionInfo()));
  // Public, as k3s serves it: the CA is no secret, and a joining worker must see it before it may trust the server.
  const caPem = options.caPem;
  if (caPem) app.get('/cacerts', (c) => c.text(caPem));

  // Ahead of authentication, so that refused credentials are recorded too; it reads the user once the request is answered.
  if (options.audit) app.use('*', auditMiddleware({ sink: options.audit, skipPaths: PUBLIC_PATHS }));
  app.use('*', async (c, next) => {
    if (PUBLIC_PATHS.has(c.req.path)) return next();
    // A client certificate the cluster CA signed (the TLS layer verified it) names the user first,
    // as Kubernetes' x509 authenticator does; otherwise the bearer token.
    let user = userFromCertificate(c.env?.incoming?.socket as TLSSocket | undefined);
    if (!user) {
      const header = c.req.header('authorization') ?? '';
      const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
      user = match ? await options.authenticator.authenticate(match[1]!) : undefined;
    }
    if (!user) return statusResponse(c, new UnauthorizedError());
    c.set('user', user);
    return next();
  });
  const rbac = options.rbac ? rbacChain(options.rbac) : undefined;
  app.use('*', impersonationMiddleware({ rbac }));
  // Counted into the service's counters, where its client views count the in-process controllers' calls.
  app.use('*', requestCountingMiddleware(service.requests));
  // After counting, so that the 429s are counted as kube-apiserver counts them.
  app.use(
    '*',
    maxInFlightMiddleware({
      maxRequestsInFlight: options.maxRequestsInFlight ?? DEFAULT_MAX_REQUESTS_IN_FLIGHT,
      maxMutatingRequestsInFlight: options.maxMutatingRequestsInFlight ?? DEFAULT_MAX_MUTATING_REQUESTS_IN_FLIGHT,
    }),
  );
  app.use('*', authorizationMiddleware({ service, nodeAddresses: options.nodeAddresses, rbac: options.rbac }));
  app.get(METRICS_PATH, (c) => metricsResponse(c, service.requests));

  for (const routes of options.routes ?? []) routes(app, { service });

  app.get('/api', (c) => c.json(coreVersions()));
  app.get('/apis', (c) => c.json(apiGroupList()));
  const discovery = (c: Context, group: string, version: string) => {
    const list = apiResourceList(group, version);
    if (!list) throw new NotFoundError('the server could not find the requested resource');
    return c.json(list);
  };
  app.get('/api/:version', (c) => discovery(c, '', c.req.param('version')));
  app.get('/apis/:group/:version', (c) => discovery(c, c.req.param('group'), c.req.param('version')));
  mountOpenApiRoutes(app);

  const resources = (c: Context) =>
    handleResource(c, {
      service,
      bookmarkIntervalMs,
      watchBufferBytes: options.watchBufferBytes,
      slowWatcherTimeoutMs: options.slowWatcherTimeoutMs,
    });
  app.all('/api/*', resources);
  app.all('/apis/*', resources);

  return { app, service };
}

/** Creates the namespaces that always exist (idempotent). */
export async function ensureSystemNamespaces(service: ObjectService): Promise<void> {
  for (const name of SYSTEM_NAMESPACES) {
    try {
      await service.create(namespaceKind, undefined, { metadata: { name } });
    } catch (err) {
      if (!(err instanceof AlreadyExistsError)) throw err;
    }
  }
}

export interface StartApiServerOptions extends ApiAppOptions {
  address: string;
  port: number;
  signal: AbortSignal;
  /**
   * The process's shared informers (the master's): creates check their namespace in its
   * Namespace informer. Without it (tests), the server runs a Namespace informer of its own.
   */
  informers?: InformerFactory;
  /** Connection cap and timeouts of the listener (default: defaultListenerLimits(), sized under the fd limit). */
  listenerLimits?: Partial<ListenerLimits>;
  /**
   * Serve HTTPS with this serving certificate and key (PEM); client certificates are requested
   * and, when `ca` signed them, authenticate their user. Absent: plain HTTP (--insecure-http).
   */
  tls?: { cert: string; key: string; ca: string };
}

export interface RunningApiServer {
  url: string;
  port: number;
  service: ObjectService;
  /** Resolves once the listener has closed after the signal aborted. */
  closed: Promise<void>;
}

/** Listens on address:port; rejects with an error whose `code` is EADDRINUSE when the port is taken. */
export async function startApiServer(options: StartApiServerOptions): Promise<RunningApiServer> {
  const { app, service } = createApiApp({ ...options, caPem: options.caPem ?? options.tls?.ca });
  await ensureSystemNamespaces(service);
  const limits: ListenerLimits = { ...defaultListenerLimits(), ...options.listenerLimits };
  const server = await new Promise<ServerType>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, hostname: options.address, port: options.port, ...listenerServeOptions(limits, options.tls) }, () => resolve(s));
    s.once('error', reject);
  });
  // A cap under the fd limit, so that a flood of idle connections cannot use every descriptor the
  // master has; headers within 10 s (slowloris); a long keep-alive, since Node closes an idle
  // kept-alive connection after 5 s and a client reusing it at that moment (a kubelet between
  // heartbeats, a busy CLI) sees its request fail unsent.
  applyListenerLimits(server, limits);
  // Exec, attach and port-forward upgrades go through the app (authentication first) like any request.
  const closeUpgraded = serveUpgrades(server as HttpServer, app.fetch as never, { scheme: options.tls ? 'https' : 'http' });
  let informerDone: Promise<void> = Promise.resolve();
  if (options.informers) {
    // The factory starts later (with the controllers): until its first list the cache is empty,
    // and a namespace missing from it is read from the store, so waiting for it here buys nothing.
    service.useNamespaceCache(options.informers.informer(namespaceKind));
  } else {
    // Only once listening: a failed start must leave nothing running that would keep the process alive.
    const namespaces = new Informer({ source: service.listWatcher(namespaceKind), name: 'api-namespaces' });
    informerDone = namespaces.start(options.signal);
    await namespaces.whenSynced();
    service.useNamespaceCache(namespaces);
  }
  // Keep-alive connections from watchers would hold close() forever: end them on shutdown.
  const closed = new Promise<void>((resolve) => {
    const stop = () => {
      server.close(() => void informerDone.then(() => resolve()));
      closeUpgraded();
      (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
    };
    if (options.signal.aborted) stop();
    else options.signal.addEventListener('abort', stop, { once: true });
  });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : options.port;
  const host = options.address === '0.0.0.0' || options.address === '::' ? '127.0.0.1' : options.address;
  const scheme = options.tls ? 'https' : 'http';
  return { url: `${scheme}://${host.includes(':') ? `[${host}]` : host}:${port}`, port, service, closed };
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error('timeout')), ms);
    }),
  ]);
}
