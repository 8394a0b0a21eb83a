// A small HTTP client for the API server: CRUD, list and watch keyed by KindDefinition, errors as typed ApiErrors.
import http from 'node:http';
import type { KindDefinition } from '../api/kind.js';
import type { KubeObject } from '../api/meta.js';
import { errorFromStatus, type ApiError, type Status } from '../errors.js';
import { ClientError, ConnectionError } from './client-errors.js';
import {
  createNamespace,
  type Client,
  type DeleteOptions,
  type ListOptions,
  type ObjectList,
  type ObjectRef,
  type WatchEvent,
  type WatchEventType,
  type WatchOptions,
  type WriteOptions,
} from './client.js';

// Built on node:http rather than fetch: in Node 20 the first fetch() loads undici, which
// costs about 45 ms per process, a quarter of the CLI's startup budget.

export interface ApiClientOptions {
  server: string;
  token?: string;
  /** Per-request limit for non-watch requests; none by default, as with kubectl. */
  timeoutMs?: number;
  /**
   * A connection pool shared with other clients (many fake nodes, each with its own token, over
   * a bounded set of sockets); the caller owns it and close() leaves it open. Default: one of its own.
   */
  agent?: http.Agent;
  /**
   * For https servers: the CA bundle to trust (PEM; the cluster CA, not the system's), and a
   * client certificate and key to present (x509 authentication). Ignored with `agent`.
   */
  tls?: ClientTls;
}

export interface ClientTls {
  ca?: string;
  cert?: string;
  key?: string;
}

export interface RequestOptions {
  query?: Record<string, string | undefined>;
  body?: unknown;
  contentType?: string;
  signal?: AbortSignal;
  /** Extra request headers (Impersonate-User and Impersonate-Group for `auth can-i --as`). */
  headers?: Record<string, string>;
}

export interface VersionInfo {
  major?: string;
  minor?: string;
  gitVersion?: string;
  platform?: string;
}

/** Kind paths, as registry.collectionPath builds them; repeated here so the client loads without the kind schemas. */
export function kindCollectionPath(def: Pick<KindDefinition, 'group' | 'version' | 'resource' | 'namespaced'>, namespace?: string): string {
  const root = def.group ? `/apis/${def.group}/${def.version}` : `/api/${def.version}`;
  return def.namespaced && namespace ? `${root}/namespaces/${encodeURIComponent(namespace)}/${def.resource}` : `${root}/${def.resource}`;
}

function subresourcePath(def: KindDefinition, ref: ObjectRef, options: WriteOptions): string {
  const path = kindObjectPath(def, ref.name, ref.namespace);
  return options.subresource ? `${path}/${options.subresource}` : path;
}

export function kindObjectPath(def: Pick<KindDefinition, 'group' | 'version' | 'resource' | 'namespaced'>, name: string, namespace?: string): string {
  return `${kindCollectionPath(def, namespace)}/${encodeURIComponent(name)}`;
}

/** The Status reason Kubernetes uses for an HTTP code, for error bodies that are not Status objects. */
function reasonForCode(code: number): string {
  const reasons: Record<number, string> = {
    400: 'BadRequest',
    401: 'Unauthorized',
    403: 'Forbidden',
    404: 'NotFound',
    405: 'MethodNotAllowed',
    409: 'Conflict',
    410: 'Expired',
    413: 'RequestEntityTooLarge',
    415: 'UnsupportedMediaType',
    422: 'Invalid',
    429: 'TooManyRequests',
    500: 'InternalError',
    503: 'ServiceUnavailable',
    504: 'Timeout',
  };
  return reasons[code] ?? 'Unknown';
}

/** Turns a non-2xx response body into a typed error, whether or not the body is a Status. */
export function errorFromResponse(code: number, bodyText: string): ApiError {
  let parsed: unknown;
  try {
    parsed = JSON.parse(bodyText);
  } catch {
    // Not JSON (a proxy's HTML page, say): fall through to a generic error.
  }
  if (parsed && typeof parsed === 'object' && (parsed as { kind?: unknown }).kind === 'Status') {
    return errorFromStatus(parsed as Partial<Status>, code);
  }
  const message = code === 404 ? 'the server could not find the requested resource' : bodyText.trim() || `the server responded with HTTP ${code}`;
  return errorFromStatus({ reason: reasonForCode(code), message, code }, code);
}

function queryString(query: Record<string, string | undefined> | undefined): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== '') params.set(k, v);
  const s = params.toString();
  return s ? `?${s}` : '';
}

/** The Client over HTTP: what workers, the CLI and any process outside the master use. */
export class ApiClient implements Client {
  readonly server: URL;
  private readonly token?: string;
  private readonly timeoutMs?: number;
  private agent?: http.Agent;
  private readonly ownsAgent: boolean;
  private readonly tls?: ClientTls;
  private httpsModule?: Promise<typeof import('node:https')>;

  constructor(options: ApiClientOptions) {
    let url: URL;
    try {
      // A bare host:port means plain HTTP here (our API server does not speak TLS).
      url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(options.server) ? options.server : `http://${options.server}`);
    } catch {
      throw new ClientError(`invalid server URL "${options.server}"`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new ClientError(`invalid server URL "${options.server}": the scheme must be http or https`);
    this.server = url;
    this.token = options.token;
    this.timeoutMs = options.timeoutMs;
    // Keep-alive so `apply` of many objects reuses one connection; close() frees it.
    this.ownsAgent = options.agent === undefined;
    this.tls = options.tls;
    // The https agent is made on the first https request, with node:https (see https()).
    this.agent = options.agent ?? (url.protocol === 'http:' ? new http.Agent({ keepAlive: true }) : undefined);
  }

  /** The CA this client trusts for an https server (what `token create` pins a join token to). */
  get trustedCa(): string | undefined {
    return this.tls?.ca;
  }

  /** What a stream upgrade (exec, port-forward over WebSocket) needs to reach the server as this client: its credentials and trust. */
  get upgradeCredentials(): { headers: Record<string, string>; tls?: ClientTls } {
    return { headers: this.token ? { authorization: `Bearer ${this.token}` } : {}, tls: this.tls };
  }

  /** Releases pooled connections so the process can exit promptly (a shared agent is its owner's to destroy). */
  close(): void {
    if (this.ownsAgent) this.agent?.destroy();
  }

  /** `host:port` as kubectl names the server in connection errors. */
  get hostPort(): string {
    const port = this.server.port || (this.server.protocol === 'https:' ? '443' : '80');
    return `${this.server.hostname}:${port}`;
  }

  async version(): Promise<VersionInfo> {
    return (await this.request('GET', '/version')) as VersionInfo;
  }

  async get(def: KindDefinition, ref: ObjectRef): Promise<KubeObject> {
    return (await this.request('GET', kindObjectPath(def, ref.name, ref.namespace))) as KubeObject;
  }

  async list(def: KindDefinition, options: ListOptions = {}): Promise<ObjectList> {
    const list = (await this.request('GET', kindCollectionPath(def, options.namespace), {
      query: { labelSelector: options.labelSelector, fieldSelector: options.fieldSelector },
    })) as Partial<ObjectList>;
    return { ...list, metadata: list.metadata ?? {}, items: list.items ?? [] };
  }

  async create(def: KindDefinition, object: unknown, options: { namespace?: string } = {}): Promise<KubeObject> {
    return (await this.request('POST', kindCollectionPath(def, createNamespace(def, object, options.namespace)), { body: object })) as KubeObject;
  }

  async replace(def: KindDefinition, ref: ObjectRef, object: unknown, options: WriteOptions = {}): Promise<KubeObject> {
    return (await this.request('PUT', subresourcePath(def, ref, options), { body: object })) as KubeObject;
  }

  /** JSON merge patch (RFC 7386): `null` deletes a key, arrays are replaced. */
  async patch(def: KindDefinition, ref: ObjectRef, patch: unknown, options: WriteOptions = {}): Promise<KubeObject> {
    return (await this.request('PATCH', subresourcePath(def, ref, options), {
      body: patch,
      contentType: 'application/merge-patch+json',
    })) as KubeObject;
  }

  async delete(def: KindDefinition, ref: ObjectRef, options: DeleteOptions = {}): Promise<KubeObject> {
    // Preconditions travel in a DeleteOptions body, as Kubernetes takes them; the rest as query parameters.
    const body = options.preconditions ? { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: options.preconditions } : undefined;
    return (await this.request('DELETE', kindObjectPath(def, ref.name, ref.namespace), {
      query: { propagationPolicy: options.propagationPolicy, gracePeriodSeconds: options.gracePeriodSeconds?.toString() },
      body,
    })) as KubeObject;
  }

  /**
   * Streams watch events from `resourceVersion`. BOOKMARKs are yielded (they carry the
   * revision to resume from); an ERROR event is thrown as its typed error, so a 410 arrives
   * as GoneError whether the server sent it as the HTTP status or inside the stream.
   * Breaking out of the loop or aborting the signal closes the connection.
   */
  async *watch(def: KindDefinition, options: WatchOptions = {}): AsyncGenerator<WatchEvent, void, undefined> {
    const path = kindCollectionPath(def, options.namespace);
    const res = await this.send(
      'GET',
      path,
      {
        query: {
          watch: '1',
          resourceVersion: options.resourceVersion,
          labelSelector: options.labelSelector,
          fieldSelector: options.fieldSelector,
          // The server's default suits us; asking for bookmarks lets the caller resume cheaply.
          allowWatchBookmarks: 'true',
        },
        signal: options.signal,
      },
      { stream: true },
    );
    try {
      if ((res.statusCode ?? 0) >= 300) throw errorFromResponse(res.statusCode ?? 0, await readText(res));
      yield* parseWatchLines(res);
    } finally {
      res.destroy();
    }
  }

  /** One request; resolves with the parsed JSON body of a 2xx answer, rejects with a typed error otherwise. */
  async request(method: string, path: string, options: RequestOptions = {}): Promise<unknown> {
    const res = await this.send(method, path, options, { stream: false });
    const text = await readText(res);
    const code = res.statusCode ?? 0;
    if (code < 200 || code >= 300) throw errorFromResponse(code, text);
    if (text === '') return undefined;
    try {
      return JSON.parse(text);
    } catch {
      throw new ClientError(`the server sent a response that is not JSON for ${method} ${path}`);
    }
  }

  /** node:https, loaded on the first https request. */
  private https(): Promise<typeof import('node:https')> {
    this.httpsModule ??= import('node:https');
    return this.httpsModule;
  }

  private async send(method: string, path: string, options: RequestOptions, mode: { stream: boolean }): Promise<http.IncomingMessage> {
    // URL parsing resolves `.` and `..` segments (`pods/..` would name the namespace): refuse them, as client-go refuses such names.
    for (const segment of path.split('?')[0]!.split('/')) {
      if (!/^(%2e|\.){1,2}$/i.test(segment)) continue;
      const name = segment.replace(/%2e/gi, '.');
      throw new ClientError(`invalid resource name ${JSON.stringify(name)}: [may not be '${name}']`);
    }
    const url = new URL(path + queryString(options.query), this.server);
    const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    let payload: string | undefined;
    if (options.body !== undefined) {
      payload = JSON.stringify(options.body);
      headers['content-type'] = options.contentType ?? 'application/json';
      headers['content-length'] = String(Buffer.byteLength(payload));
    }
    const transport = url.protocol === 'https:' ? await this.https() : http;
    if (!this.agent && url.protocol === 'https:') {
      const https = transport as typeof import('node:https');
      this.agent = new https.Agent({ keepAlive: true, ca: this.tls?.ca, cert: this.tls?.cert, key: this.tls?.key });
    }
    return new Promise((resolve, reject) => {
      const req = transport.request(
        url,
        {
          method,
          headers,
          agent: this.agent,
          signal: options.signal,
          // Watches are long-lived by design; only plain requests get the timeout.
          timeout: mode.stream ? undefined : this.timeoutMs,
        },
        resolve,
      );
      req.on('timeout', () => req.destroy(new ConnectionError(`Unable to connect to the server: request to ${this.hostPort} timed out`)));
      req.on('error', (err) => reject(this.connectionError(err)));
      req.end(payload);
    });
  }

  private connectionError(err: unknown): Error {
    if (err instanceof ConnectionError || (err instanceof Error && err.name === 'AbortError')) return err as Error;
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ECONNREFUSED') {
      return new ConnectionError(`The connection to the server ${this.hostPort} was refused - did you specify the right host or port?`, { cause: err });
    }
    const message = err instanceof Error ? err.message : String(err);
    return new ConnectionError(`Unable to connect to the server: ${message}`, { cause: err });
  }
}

async function readText(res: http.IncomingMessage): Promise<string> {
  res.setEncoding('utf8');
  let text = '';
  for await (const chunk of res) text += chunk as string;
  return text;
}

/** Splits a chunked body into JSON lines (chunks may end mid-line) and yields the events. */
export async function* parseWatchLines(chunks: AsyncIterable<Buffer | string>): AsyncGenerator<WatchEvent, void, undefined> {
  const decoder = new TextDecoder();
  let buffer = '';
  const parse = (line: string): WatchEvent | undefined => {
    if (line.trim() === '') return undefined;
    let event: { type?: string; object?: unknown };
    try {
      event = JSON.parse(line) as typeof event;
    } catch {
      throw new ClientError(`the server sent a watch event that is not JSON: ${line.slice(0, 200)}`);
    }
    if (event.type === 'ERROR') {
      const status = (event.object ?? {}) as Partial<Status>;
      throw errorFromStatus(status, status.code ?? 500);
    }
    return { type: event.type as WatchEventType, object: event.object as KubeObject };
  };
  for await (const chunk of chunks) {
    // stream: true keeps a multi-byte character split across chunks intact.
    buffer += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    for (let newline = buffer.indexOf('\n'); newline >= 0; newline = buffer.indexOf('\n')) {
      const event = parse(buffer.slice(0, newline));
      buffer = buffer.slice(newline + 1);
      if (event) yield event;
    }
  }
  const last = parse(buffer + decoder.decode());
  if (last) yield last;
}
