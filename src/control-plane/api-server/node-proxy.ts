// API server routes served by kubelets: pods/log and pods/exec proxied to the pod's node, metrics.k8s.io gathered from every node.
import http from 'node:http';
import https from 'node:https';
import { checkServerIdentity, type PeerCertificate } from 'node:tls';
import { Readable } from 'node:stream';
import type { Context, Hono } from 'hono';
import { isNodeReady, type Node, nodeKind } from '../../core/api/node.js';
import { podKind, type Pod } from '../../core/api/pod.js';
import { parseQueryBool } from '../../core/api/query-bool.js';
import { ApiError, BadRequestError, ForbiddenError, NotFoundError, ServiceUnavailableError, errorFromStatus, type Status } from '../../core/errors.js';
import type { UserInfo } from './auth.js';
import { apiGroupList, apiResourceList } from './discovery.js';
import { METRICS_API_VERSION, metricsGroup, metricsList, metricsResourceList, nodeMetrics, podMetrics, type SummaryLike } from '../../core/api/metrics.js';
import type { ObjectService } from './object-service.js';
import { type ClientOptions, WebSocket } from 'ws';
import { EXEC_PROTOCOLS, PORT_FORWARD_PROTOCOLS, V4_CHANNEL_PROTOCOL } from '../../core/api/channel-protocol.js';
import { acceptWebSocket, upgradeOf } from '../../core/lifecycle/http-upgrades.js';
import { kubeletStreamQuery, portForwardPorts, relayWebSockets, spdyPortForwardUpgrade, streamUpgrade } from './stream-proxy.js';

export interface NodeProxyOptions {
  service: ObjectService;
  /** Presented to kubelets without TLS: the master's kubelet client token (never the admin token). */
  kubeletToken: string;
  /**
   * The master's kubelet-client certificate (CN=kube-apiserver-kubelet-client, O=system:kubelet-api-admin)
   * and the cluster CA: with it kubelets are called over HTTPS with that certificate instead of
   * the token, and must present a certificate the CA issued for the node's own name.
   */
  kubeletTls?: KubeletClientTls;
  /** Limit for connecting to a kubelet, and for its first answer where the call is not open-ended (default 5 s). */
  timeoutMs?: number;
  now?: () => Date;
}

/** Who may read logs and run commands in pods. */
export const NODE_PROXY_GROUP = 'system:masters';
export const DEFAULT_KUBELET_PORT = 10250;

export interface KubeletTarget {
  nodeName: string;
  host: string;
  port: number;
}

/** Where a node's kubelet listens: its InternalIP (else Hostname) and daemonEndpoints port. */
export function kubeletTarget(node: Node): KubeletTarget | undefined {
  const addresses = node.status?.addresses ?? [];
  const host = addresses.find((a) => a.type === 'InternalIP')?.address ?? addresses.find((a) => a.type === 'Hostname')?.address;
  if (!host) return undefined;
  const port = node.status?.daemonEndpoints?.kubeletEndpoint?.Port || DEFAULT_KUBELET_PORT;
  return { nodeName: node.metadata.name ?? '', host, port };
}

/**
 * Which container a log or exec request means: the one named (which must exist), else the
 * only one; Kubernetes' wording when the pod has several and none was named.
 */
export function chooseContainer(pod: Pod, requested: string | undefined): string {
  const name = pod.metadata.name ?? '';
  const regular = pod.spec.containers.map((c) => c.name);
  const init = (pod.spec.initContainers ?? []).map((c) => c.name);
  if (requested) {
    if (!regular.includes(requested) && !init.includes(requested)) {
      throw new BadRequestError(`container ${requested} is not valid for pod ${name}`);
    }
    return requested;
  }
  if (regular.length === 1) return regular[0]!;
  const initPart = init.length ? ` or one of the init containers: [${init.join(' ')}]` : '';
  throw new BadRequestError(`a container name must be specified for pod ${name}, choose one of: [${regular.join(' ')}]${initPart}`);
}

/** Query parameters of pods/log as the kubelet's containerLogs takes them. */
export function kubeletLogQuery(query: (key: string) => string | undefined): string {
  const params = new URLSearchParams();
  for (const key of ['follow', 'previous', 'timestamps']) {
    if (parseQueryBool(query(key), key)) params.set(key, 'true');
  }
  const tail = query('tailLines');
  if (tail !== undefined && tail !== '') {
    if (!/^\d+$/.test(tail)) throw new BadRequestError(`tailLines must be a non-negative integer, got "${tail}"`);
    params.set('tailLines', tail);
  }
  const s = params.toString();
  return s ? `?${s}` : '';
}

/** The one-line message for a kubelet that cannot be reached, worded as Kubernetes words it. */
export function dialErrorMessage(target: KubeletTarget, err: unknown): string {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const dial = `dial tcp ${target.host}:${target.port}`;
  if (code === 'ECONNREFUSED') return `error dialing backend: ${dial}: connect: connection refused`;
  if (code === 'EHOSTUNREACH') return `error dialing backend: ${dial}: connect: no route to host`;
  if (code === 'ENETUNREACH') return `error dialing backend: ${dial}: connect: network is unreachable`;
  if (code === 'ETIMEDOUT') return `error dialing backend: ${dial}: i/o timeout`;
  const message = err instanceof Error ? err.message : String(err);
  return `error dialing backend: ${dial}: ${message}`;
}

class TimeoutError extends Error {
  readonly code = 'ETIMEDOUT';
}

export interface KubeletClientTls {
  ca: string;
  cert: string;
  key: string;
}

/**
 * A kubelet's certificate must name its node (DNS SAN = the node name): the address comes from
 * the Node's status, which the node itself writes, so it proves nothing; the name is what the CA
 * bound at join. Kubernetes' kubelet-certificate-authority check, by name rather than address.
 */
export function kubeletIdentityCheck(nodeName: string): (host: string, cert: PeerCertificate) => Error | undefined {
  return (_host, cert) => checkServerIdentity(nodeName, cert);
}

interface KubeletCall {
  method: string;
  path: string;
  token: string;
  /** Call over HTTPS with this client certificate; the token is then not sent at all. */
  tls?: KubeletClientTls;
  body?: string;
  dialTimeoutMs: number;
  /** Limit until the kubelet's response headers arrive; none for calls that may run long (exec). */
  responseTimeoutMs?: number;
  signal?: AbortSignal;
}

/** One request to a kubelet; resolves with its response (any code) or rejects with a 503 ApiError. */
export function callKubelet(target: KubeletTarget, call: KubeletCall): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = call.tls ? {} : { authorization: `Bearer ${call.token}` };
    if (call.body !== undefined) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = String(Buffer.byteLength(call.body));
    }
    // A fresh connection each time (agent: false): log follows are long-lived and pooled sockets to dead nodes linger.
    const base = { host: target.host, port: target.port, method: call.method, path: call.path, headers, agent: false as const };
    const req = call.tls
      ? https.request({
          ...base,
          ca: call.tls.ca,
          cert: call.tls.cert,
          key: call.tls.key,
          checkServerIdentity: kubeletIdentityCheck(target.nodeName),
        })
      : http.request(base);
    let responseTimer: NodeJS.Timeout | undefined;
    const dialTimer = setTimeout(() => req.destroy(new TimeoutError('dial timeout')), call.dialTimeoutMs);
    const clear = () => {
      clearTimeout(dialTimer);
      clearTimeout(responseTimer);
      call.signal?.removeEventListener('abort', onAbort);
    };
    const onAbort = () => req.destroy(new Error('the client went away'));
    if (call.signal?.aborted) onAbort();
    else call.signal?.addEventListener('abort', onAbort, { once: true });
    req.on('socket', (socket) => socket.once('connect', () => clearTimeout(dialTimer)));
    if (call.responseTimeoutMs !== undefined) {
      const ms = call.responseTimeoutMs;
      responseTimer = setTimeout(
        () =>
          req.destroy(new ServiceUnavailableError(`the kubelet on node "${target.nodeName}" (${target.host}:${target.port}) did not answer within ${ms} ms`)),
        ms,
      );
    }
    req.on('response', (res) => {
      clear();
      resolve(res);
    });
    req.on('error', (err) => {
      clear();
      reject(err instanceof ApiError ? err : new ServiceUnavailableError(dialErrorMessage(target, err), { cause: err }));
    });
    req.end(call.body);
  });
}

async function readAll(res: http.IncomingMessage, maxBytes = 1024 * 1024): Promise<string> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of res) {
    total += (chunk as Buffer).length;
    if (total > maxBytes) break;
    chunks.push(chunk as Buffer);
  }
  res.destroy();
  return Buffer.concat(chunks).toString('utf8');
}

/** A kubelet's error answer as the error the API server returns: its own Status, except for credential refusals. */
async function kubeletError(target: KubeletTarget, res: http.IncomingMessage): Promise<ApiError> {
  const code = res.statusCode ?? 500;
  const text = await readAll(res);
  let status: Partial<Status> | undefined;
  try {
    const parsed = JSON.parse(text) as Partial<Status>;
    if (parsed?.kind === 'Status') status = parsed;
  } catch {
    // Not a Status: described below from the code alone.
  }
  const message = status?.message ?? (text.trim().slice(0, 300) || `HTTP ${code}`);
  // The user's own credentials were fine: a 401/403 here means the API server's kubelet token is wrong.
  if (code === 401 || code === 403) {
    return new ServiceUnavailableError(`the kubelet on node "${target.nodeName}" refused the API server's credentials: ${message}`);
  }
  return status ? errorFromStatus(status, code) : new ApiError(code, 'InternalError', message);
}

/** Logs and exec reach into workloads: only cluster admins may use them (we have no RBAC to grant them finer). */
function requireGroup(c: Context, subresource: 'log' | 'exec' | 'attach' | 'portforward'): void {
  const user = c.get('user') as UserInfo | undefined;
  if (user?.groups.includes(NODE_PROXY_GROUP)) return;
  const verb = subresource === 'log' ? 'get' : 'create';
  throw new ForbiddenError(
    `pods "${c.req.param('name')}" is forbidden: User "${user?.name ?? 'system:anonymous'}" cannot ${verb} resource "pods/${subresource}" in API group "" in the namespace "${c.req.param('namespace')}"`,
    { kind: 'pods', name: c.req.param('name') },
  );
}

/**
 * Adds pods/log, pods/exec and metrics.k8s.io (with its discovery) to the API server's app.
 * Must be registered after authentication and before the discovery and generic resource
 * routes, which would otherwise answer these paths first.
 */
export function registerNodeProxyRoutes<E extends { Variables: { user: UserInfo } }>(app: Hono<E>, options: NodeProxyOptions): void {
  const { service } = options;
  const timeoutMs = options.timeoutMs ?? 5000;
  const now = options.now ?? (() => new Date());

  /** The pod and its node's kubelet. */
  const resolvePod = async (c: Context) => {
    const namespace = c.req.param('namespace')!;
    const name = c.req.param('name')!;
    const pod = (await service.get(podKind, namespace, name)) as Pod;
    const nodeName = pod.spec.nodeName;
    if (!nodeName) throw new BadRequestError(`pod "${name}" does not have a host assigned`);
    let node: Node;
    try {
      node = (await service.get(nodeKind, undefined, nodeName)) as Node;
    } catch (err) {
      if (err instanceof NotFoundError) throw new ServiceUnavailableError(`node "${nodeName}" of pod "${name}" is not registered`);
      throw err;
    }
    const target = kubeletTarget(node);
    if (!target) throw new ServiceUnavailableError(`node "${nodeName}" has no address for its kubelet`);
    return { pod, target, namespace, name };
  };
  /** The pod, the container meant, and its node's kubelet. */
  const resolve = async (c: Context) => {
    const { pod, target, namespace, name } = await resolvePod(c);
    const container = chooseContainer(pod, c.req.query('container') || undefined);
    const path = `/${[namespace, name, container].map(encodeURIComponent).join('/')}`;
    return { target, path };
  };
  const dialOptions = { token: options.kubeletToken, tls: options.kubeletTls, timeoutMs };

  // Streams (kubectl exec/attach/port-forward): a WebSocket upgrade, joined to one opened to
  // the kubelet with the master's own kubelet credential.
  const streamRoute = (subresource: 'exec' | 'attach', kubeletPath: string) => async (c: Context) => {
    requireGroup(c, subresource);
    const upgrade = streamUpgrade(c, EXEC_PROTOCOLS);
    const query = kubeletStreamQuery(c, subresource === 'exec');
    const { target, path } = await resolve(c);
    const upstream = await dialKubeletWebSocket(target, `${kubeletPath}${path}?${query}`, upgrade.protocol, dialOptions);
    acceptWebSocket(upgrade.incoming, upgrade.handle, upstream.protocol || upgrade.protocol, (client) => relayWebSockets(client, upstream));
    upgrade.handle.socket.once('close', () => upstream.terminate());
    return c.body(null, 200);
  };
  app.get('/api/v1/namespaces/:namespace/pods/:name/exec', streamRoute('exec', '/exec'));
  app.get('/api/v1/namespaces/:namespace/pods/:name/attach', streamRoute('attach', '/attach'));
  app.post('/api/v1/namespaces/:namespace/pods/:name/attach', streamRoute('attach', '/attach'));
  const portForward = async (c: Context) => {
    requireGroup(c, 'portforward');
    // kubectl's SPDY session (tunnelled in a WebSocket, or on a SPDY upgrade): its ports come in stream headers.
    const spdy = spdyPortForwardUpgrade(c);
    if (spdy) {
      const { target, namespace, name } = await resolvePod(c);
      const dial = (port: number) =>
        dialKubeletWebSocket(
          target,
          `/portForward/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}?ports=${port}`,
          V4_CHANNEL_PROTOCOL,
          dialOptions,
        );
      spdy.start({ dial, podName: `${namespace}/${name}` });
      return c.body(null, 200);
    }
    const upgrade = streamUpgrade(c, PORT_FORWARD_PROTOCOLS);
    const ports = portForwardPorts(c);
    const { target, namespace, name } = await resolvePod(c);
    const query = new URLSearchParams(ports.map((p) => ['ports', String(p)])).toString();
    const path = `/portForward/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}?${query}`;
    const upstream = await dialKubeletWebSocket(target, path, upgrade.protocol, dialOptions);
    acceptWebSocket(upgrade.incoming, upgrade.handle, upstream.protocol || upgrade.protocol, (client) => relayWebSockets(client, upstream));
    upgrade.handle.socket.once('close', () => upstream.terminate());
    return c.body(null, 200);
  };
  app.get('/api/v1/namespaces/:namespace/pods/:name/portforward', portForward);
  app.post('/api/v1/namespaces/:namespace/pods/:name/portforward', portForward);

  app.get('/api/v1/namespaces/:namespace/pods/:name/log', async (c) => {
    requireGroup(c, 'log');
    const { target, path } = await resolve(c);
    const query = kubeletLogQuery((k) => c.req.query(k));
    const res = await callKubelet(target, {
      method: 'GET',
      path: `/containerLogs${path}${query}`,
      token: options.kubeletToken,
      tls: options.kubeletTls,
      dialTimeoutMs: timeoutMs,
      responseTimeoutMs: timeoutMs,
      signal: c.req.raw.signal,
    });
    if ((res.statusCode ?? 500) >= 300) throw await kubeletError(target, res);
    // Readable.toWeb ends the upstream socket when our client goes away (the body is cancelled).
    const body = Readable.toWeb(res) as unknown as ReadableStream<Uint8Array>;
    return c.body(body, 200, { 'content-type': res.headers['content-type'] ?? 'text/plain; charset=utf-8' });
  });

  app.post('/api/v1/namespaces/:namespace/pods/:name/exec', async (c) => {
    requireGroup(c, 'exec');
    // An upgrade (SPDY, kubectl's fallback) is refused rather than run as a one-shot command.
    if (upgradeOf(c.env)) streamUpgrade(c, EXEC_PROTOCOLS);
    const { target, path } = await resolve(c);
    const body = execBody(await c.req.text(), c.req.queries('command') ?? []);
    const res = await callKubelet(target, {
      method: 'POST',
      path: `/exec${path}`,
      token: options.kubeletToken,
      tls: options.kubeletTls,
      body: JSON.stringify(body),
      dialTimeoutMs: timeoutMs,
      // The command may run for as long as it asked for; without a limit, as long as it runs.
      responseTimeoutMs: typeof body.timeoutSeconds === 'number' ? body.timeoutSeconds * 1000 + timeoutMs : undefined,
      signal: c.req.raw.signal,
    });
    if ((res.statusCode ?? 500) >= 300) throw await kubeletError(target, res);
    return c.body(await readAll(res, 64 * 1024 * 1024), 200, { 'content-type': 'application/json' });
  });

  /** Every Ready node's Summary, asked in parallel; a node that fails or is slow is left out. */
  const scrape = async (only?: string): Promise<{ node: Node; summary: SummaryLike }[]> => {
    const nodes = only
      ? [
          (await service.get(nodeKind, undefined, only).catch((err) => {
            if (err instanceof NotFoundError) return undefined;
            throw err;
          })) as Node | undefined,
        ].filter((n): n is Node => n !== undefined)
      : ((await service.list(nodeKind, undefined)).items as Node[]);
    const answers = await Promise.all(
      nodes.map(async (node) => {
        const summary = await fetchKubeletSummary(node, { token: options.kubeletToken, tls: options.kubeletTls, timeoutMs });
        return summary ? { node, summary } : undefined;
      }),
    );
    return answers.filter((a): a is NonNullable<typeof a> => a !== undefined);
  };
  const stamp = () => now().toISOString();

  app.get('/apis/metrics.k8s.io/v1beta1/nodes', async (c) => {
    const items = (await scrape()).map(({ node, summary }) => nodeMetrics(node.metadata.name ?? '', summary, stamp(), node.metadata.labels));
    return c.json(metricsList('NodeMetricsList', items));
  });
  app.get('/apis/metrics.k8s.io/v1beta1/nodes/:name', async (c) => {
    const name = c.req.param('name');
    const found = (await scrape(name))[0];
    if (!found) throw new NotFoundError(`nodemetrics.metrics.k8s.io "${name}" not found`, { kind: 'nodes', group: 'metrics.k8s.io', name });
    return c.json(nodeMetrics(name, found.summary, stamp(), found.node.metadata.labels));
  });
  const pods = async (namespace?: string) => (await scrape()).flatMap(({ summary }) => podMetrics(summary, stamp(), namespace));
  app.get('/apis/metrics.k8s.io/v1beta1/pods', async (c) => c.json(metricsList('PodMetricsList', await pods())));
  app.get('/apis/metrics.k8s.io/v1beta1/namespaces/:namespace/pods', async (c) => c.json(metricsList('PodMetricsList', await pods(c.req.param('namespace')))));
  app.get('/apis/metrics.k8s.io/v1beta1/namespaces/:namespace/pods/:name', async (c) => {
    const { namespace, name } = c.req.param();
    const found = (await pods(namespace)).find((p) => p.metadata.name === name);
    if (!found) throw new NotFoundError(`podmetrics.metrics.k8s.io "${namespace}/${name}" not found`, { kind: 'pods', group: 'metrics.k8s.io', name });
    return c.json(found);
  });

  // Discovery: the generic documents plus what these routes add.
  app.get('/apis', (c) => {
    const list = apiGroupList() as { groups: unknown[] };
    return c.json({ ...list, groups: [...list.groups, metricsGroup()] });
  });
  app.get(`/apis/${METRICS_API_VERSION}`, (c) => c.json(metricsResourceList()));
  app.get('/api/v1', (c) => {
    const list = apiResourceList('', 'v1') as { resources: unknown[] };
    return c.json({
      ...list,
      resources: [
        ...list.resources,
        { name: 'pods/log', singularName: '', namespaced: true, kind: 'Pod', verbs: ['get'] },
        { name: 'pods/exec', singularName: '', namespaced: true, kind: 'PodExecOptions', verbs: ['create', 'get'] },
        { name: 'pods/attach', singularName: '', namespaced: true, kind: 'PodAttachOptions', verbs: ['create', 'get'] },
        { name: 'pods/portforward', singularName: '', namespaced: true, kind: 'PodPortForwardOptions', verbs: ['create', 'get'] },
      ],
    });
  });
}

/** A Ready node's kubelet Summary (GET /stats/summary); undefined when the node is not Ready or its kubelet fails or is slow. Also what the autoscaler reads. */
export async function fetchKubeletSummary(node: Node, options: { token: string; tls?: KubeletClientTls; timeoutMs: number }): Promise<SummaryLike | undefined> {
  const target = isNodeReady(node) ? kubeletTarget(node) : undefined;
  if (!target) return undefined;
  try {
    const res = await callKubelet(target, {
      method: 'GET',
      path: '/stats/summary',
      token: options.token,
      tls: options.tls,
      dialTimeoutMs: options.timeoutMs,
      responseTimeoutMs: options.timeoutMs,
    });
    if ((res.statusCode ?? 500) >= 300) {
      res.destroy();
      return undefined;
    }
    return JSON.parse(await readAll(res, 64 * 1024 * 1024)) as SummaryLike;
  } catch {
    return undefined;
  }
}

/** The exec body to send on: the client's JSON (or `?command=` parameters), with at least one command word. */
export function execBody(text: string, queryCommand: string[]): Record<string, unknown> & { command: string[]; timeoutSeconds?: unknown } {
  let body: Record<string, unknown> = {};
  if (text.trim() !== '') {
    try {
      const parsed = JSON.parse(text) as unknown;
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
      body = parsed as Record<string, unknown>;
    } catch {
      throw new BadRequestError('the exec request body must be a JSON object: {"command": ["..."]}');
    }
  }
  const command = Array.isArray(body.command) && body.command.length > 0 ? body.command : queryCommand;
  if (command.length === 0 || !command.every((s) => typeof s === 'string')) {
    throw new BadRequestError('you must specify at least one command for the container');
  }
  return { ...body, command: command as string[] };
}

/**
 * Opens a WebSocket to a kubelet's stream endpoint offering `protocol`: over TLS with the
 * master's client certificate (the kubelet's certificate checked by node name), else its token.
 * A refusal becomes the kubelet's own Status; an unreachable kubelet a 503.
 */
export function dialKubeletWebSocket(
  target: KubeletTarget,
  path: string,
  protocol: string,
  options: { token: string; tls?: KubeletClientTls; timeoutMs: number },
): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const host = target.host.includes(':') ? `[${target.host}]` : target.host;
    const ws = new WebSocket(`${options.tls ? 'wss' : 'ws'}://${host}:${target.port}${path}`, [protocol], {
      handshakeTimeout: options.timeoutMs,
      perMessageDeflate: false,
      ...(options.tls
        ? // ws hands these to tls.connect, whose checkServerIdentity returns an Error (ws's types say boolean).
          ({
            ca: options.tls.ca,
            cert: options.tls.cert,
            key: options.tls.key,
            checkServerIdentity: kubeletIdentityCheck(target.nodeName),
          } as unknown as ClientOptions)
        : { headers: { authorization: `Bearer ${options.token}` } }),
    });
    ws.once('open', () => resolve(ws));
    ws.once('unexpected-response', (req, res) => {
      kubeletError(target, res).then(reject, reject);
      req.destroy();
    });
    ws.once('error', (err) => reject(new ServiceUnavailableError(dialErrorMessage(target, err), { cause: err })));
  });
}
