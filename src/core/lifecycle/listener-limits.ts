// Limits every HTTP listener of ours applies against floods and slowloris: a connection cap under the fd limit, header and request timeouts.
import { readFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { createServer as createHttpsServer, type ServerOptions as HttpsServerOptions } from 'node:https';
import type { Socket } from 'node:net';
import { Server as TlsServer } from 'node:tls';
import { refusePlainHttp } from './plain-http-refusal.js';

export interface ListenerLimits {
  /** Connections held at once; the listener drops new ones beyond it (Node's server.maxConnections). */
  maxConnections: number;
  /** A request's headers must arrive within this long of its first byte, or it gets 408 and the connection closes. */
  headersTimeoutMs: number;
  /**
   * The whole request (headers and body) must arrive within this long; the response may take
   * longer (watches, logs). 120 s lets a GPU job's 64 MiB output arrive at 0.5 MB/s.
   */
  requestTimeoutMs: number;
  /** An idle kept-alive connection is kept this long between requests. */
  keepAliveTimeoutMs: number;
}

/**
 * Node checks the two timeouts above on a timer (30 s by default): a header timeout of 10 s
 * would then close a stalled request only after up to 40 s. Checking every second costs one
 * walk of the connection list.
 */
export const CONNECTIONS_CHECKING_INTERVAL_MS = 1000;

/** What a process may spend on others than its clients: etcd's and the registry's connections, log files, children's pipes. */
const RESERVED_DESCRIPTORS = 256;

/** The process's soft limit on open files (RLIMIT_NOFILE), from /proc; undefined where that cannot be read. */
export function fileDescriptorLimit(limitsText?: string): number | undefined {
  let text = limitsText;
  if (text === undefined) {
    try {
      text = readFileSync('/proc/self/limits', 'utf8');
    } catch {
      return undefined;
    }
  }
  const m = /^Max open files\s+(\d+|unlimited)\s/m.exec(text);
  if (!m || m[1] === 'unlimited') return undefined;
  return Number(m[1]);
}

/**
 * A cap that leaves the process descriptors of its own however many clients connect: 80% of
 * the limit, and at least RESERVED_DESCRIPTORS under it (8,192 where the limit is unknown).
 * 20,000 half-open connections once used every descriptor of the master, and the next thing
 * it spawned failed.
 */
export function defaultMaxConnections(fdLimit: number | undefined): number {
  if (fdLimit === undefined) return 8192;
  return Math.max(64, Math.min(fdLimit - RESERVED_DESCRIPTORS, Math.floor(fdLimit * 0.8)));
}

/**
 * The defaults of our API listeners. A header timeout of 10 s ends a slowloris connection
 * (headers sent a byte at a time, or never finished) soon; the keep-alive stays long for idle
 * kept-alive clients (a kubelet between heartbeats), as Go's servers keep it. Node measures the
 * header timeout from a request's first byte, so an idle kept-alive connection is not cut by it.
 */
export function defaultListenerLimits(fdLimit?: number): ListenerLimits {
  return {
    maxConnections: defaultMaxConnections(fdLimit ?? fileDescriptorLimit()),
    headersTimeoutMs: 10_000,
    requestTimeoutMs: 120_000,
    keepAliveTimeoutMs: 90_000,
  };
}

/** The options to pass to http(s).createServer (or @hono/node-server's `serverOptions`): some can only be set there. */
export function listenerServerOptions(limits: ListenerLimits): {
  headersTimeout: number;
  requestTimeout: number;
  keepAliveTimeout: number;
  connectionsCheckingInterval: number;
} {
  return {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    connectionsCheckingInterval: CONNECTIONS_CHECKING_INTERVAL_MS,
  };
}

/** A listener's certificate and key, and the CA whose client certificates it reads (PEM). */
export interface ListenerTls {
  cert: string;
  key: string;
  ca: string;
}

/**
 * @hono/node-server's `createServer` and `serverOptions` for a listener with these limits:
 * HTTPS when `tls` is given, else plain HTTP. Client certificates are asked for but not
 * required, so that bearer tokens keep working; only one the CA verified (socket.authorized)
 * may name a user. A handshake gets as long as a request's headers (Node's default is 120 s).
 */
export function listenerServeOptions(
  limits: ListenerLimits,
  tls?: ListenerTls,
): { createServer?: typeof createHttpsServer; serverOptions: ReturnType<typeof listenerServerOptions> | HttpsServerOptions } {
  if (!tls) return { serverOptions: listenerServerOptions(limits) };
  return {
    createServer: createHttpsServer,
    serverOptions: {
      ...listenerServerOptions(limits),
      handshakeTimeout: limits.headersTimeoutMs,
      cert: tls.cert,
      key: tls.key,
      ca: tls.ca,
      requestCert: true,
      rejectUnauthorized: false,
    },
  };
}

interface LimitedServer {
  maxConnections: number;
  headersTimeout: number;
  requestTimeout: number;
  keepAliveTimeout: number;
  on(event: 'connection' | 'secureConnection', listener: (socket: Socket) => void): unknown;
  on(event: 'request', listener: (req: IncomingMessage) => void): unknown;
}

/**
 * Sets the cap and the timeouts on a server already made (what createServer's options cannot
 * carry, and again what they can), and closes connections that send nothing at all: Node's
 * header timeout starts at a request's first byte, so a connection that never sends one would
 * hold its place under the cap for ever. A TLS listener answers plain HTTP with a 400 that says so.
 */
export function applyListenerLimits(server: unknown, limits: ListenerLimits): void {
  const s = server as LimitedServer;
  s.maxConnections = limits.maxConnections;
  s.headersTimeout = limits.headersTimeoutMs;
  s.requestTimeout = limits.requestTimeoutMs;
  s.keepAliveTimeout = limits.keepAliveTimeoutMs;
  if (server instanceof TlsServer) refusePlainHttp(server, limits.headersTimeoutMs);
  const waiting = new WeakSet<Socket>();
  // Over TLS the socket the requests arrive on is the one the handshake produced.
  const accepted = server instanceof TlsServer ? 'secureConnection' : 'connection';
  s.on(accepted, (socket) => {
    waiting.add(socket);
    // The server's own 'timeout' handler destroys a socket with no request in flight.
    socket.setTimeout(limits.headersTimeoutMs);
  });
  s.on('request', (req) => {
    // From the first request on, Node's own timeouts (header, request, keep-alive) take over.
    if (waiting.delete(req.socket)) req.socket.setTimeout(0);
  });
}
