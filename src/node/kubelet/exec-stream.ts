// The kubelet's stream routes: exec and attach over a WebSocket upgrade (Kubernetes' channel protocol), and port-forward to the pod's address.
import { connect } from 'node:net';
import { finished } from 'node:stream/promises';
import type { Context, Hono } from 'hono';
import type { WebSocket } from 'ws';
import {
  CLOSE_CHANNEL,
  chooseProtocol,
  decodeFrame,
  EXEC_PROTOCOLS,
  ERROR_CHANNEL,
  encodeFrame,
  encodePortPrefix,
  exitStatus,
  failureStatus,
  PORT_FORWARD_PROTOCOLS,
  parseResize,
  portForwardChannels,
  RESIZE_CHANNEL,
  STDERR_CHANNEL,
  STDIN_CHANNEL,
  STDOUT_CHANNEL,
} from '../../core/api/channel-protocol.js';
import { parseQueryBool } from '../../core/api/query-bool.js';
import { ApiError, BadRequestError } from '../../core/errors.js';
import { acceptWebSocket, upgradeOf, wantsWebSocket, type UpgradeEnv } from '../../core/lifecycle/http-upgrades.js';
import type { PodProvider, PodRef, StreamSession } from '../../runtime/provider.js';

export interface StreamRoutesOptions {
  provider: PodProvider;
  /** The pod and container as the API describes them (404 when unknown); the container must be running. */
  runningContainer(namespace: string, pod: string, container: string): Promise<PodRef>;
  /** The pod's address, for port-forward (404 when unknown). */
  podAddress(namespace: string, pod: string): Promise<string>;
}

interface StreamQuery {
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  tty: boolean;
}

function streamQuery(c: Context): StreamQuery {
  const flag = (name: string) => parseQueryBool(c.req.query(name), name) ?? false;
  const q = { stdin: flag('stdin'), stdout: flag('stdout'), stderr: flag('stderr'), tty: flag('tty') };
  if (!q.stdin && !q.stdout && !q.stderr) throw new BadRequestError('you must specify at least 1 of stdin, stdout, stderr');
  return q;
}

/** The socket the request came on, once it is known to be a WebSocket upgrade with a subprotocol we speak. */
function upgradeFor(c: Context, supported: readonly string[]) {
  const env = c.env as Partial<UpgradeEnv> | undefined;
  const handle = upgradeOf(env);
  if (!handle || !env?.incoming || !wantsWebSocket(env.incoming)) {
    throw new BadRequestError('this endpoint needs a WebSocket upgrade (Upgrade: websocket); SPDY is not supported');
  }
  const protocol = chooseProtocol(env.incoming.headers['sec-websocket-protocol'], supported);
  if (!protocol) throw new BadRequestError(`none of the requested WebSocket subprotocols is supported; use one of: ${supported.join(', ')}`);
  return { incoming: env.incoming, handle, protocol };
}

/**
 * Pumps a session over an open WebSocket: output on channels 1 and 2, input from channel 0
 * (ended by a v5 close of channel 0, or by the socket closing), resizes from channel 4, and the
 * outcome as a Status on channel 3 once all output is sent.
 */
export function relaySession(ws: WebSocket, session: StreamSession, options: { stdout: boolean; stderr: boolean; command: readonly string[] }): void {
  let over = false;
  const forward = (stream: NodeJS.ReadableStream | undefined, channel: number, wanted: boolean) => {
    if (!stream) return Promise.resolve();
    stream.on('data', (chunk: Buffer) => {
      if (wanted && ws.readyState === ws.OPEN) ws.send(encodeFrame(channel, chunk));
    });
    return finished(stream).catch(() => undefined);
  };
  const outputs = Promise.all([forward(session.stdout, STDOUT_CHANNEL, options.stdout), forward(session.stderr, STDERR_CHANNEL, options.stderr)]);
  ws.on('message', (message: Buffer, isBinary: boolean) => {
    const frame = decodeFrame(isBinary ? message : Buffer.from(message));
    if (!frame) return;
    if (frame.channel === STDIN_CHANNEL) session.stdin?.write(frame.data);
    else if (frame.channel === RESIZE_CHANNEL) {
      const size = parseResize(frame.data);
      if (size) session.resize({ width: size.Width, height: size.Height }).catch(() => undefined);
    } else if (frame.channel === CLOSE_CHANNEL && frame.data[0] === STDIN_CHANNEL) session.stdin?.end();
  });
  ws.on('close', () => {
    if (over) return;
    over = true;
    session.stdin?.end();
    session.close();
  });
  ws.on('error', () => ws.terminate());
  void (async () => {
    let status: ReturnType<typeof exitStatus>;
    try {
      const code = await session.done;
      await outputs;
      status = exitStatus(code, options.command);
    } catch (err) {
      status = failureStatus(err instanceof Error ? err.message : String(err));
    }
    if (over) return;
    over = true;
    if (ws.readyState === ws.OPEN) {
      ws.send(encodeFrame(ERROR_CHANNEL, JSON.stringify(status)));
      ws.close(1000);
    }
  })();
}

/** A runtime error while starting a stream, as the 500 the caller sees (its message kept). */
function startFailure(err: unknown): never {
  if (err instanceof ApiError) throw err;
  throw new ApiError(500, 'InternalError', err instanceof Error ? err.message : String(err));
}

/** Adds GET /exec, /attach and /portForward (WebSocket upgrades) to the kubelet's app, behind its authentication. */
export function registerStreamRoutes(app: Hono, options: StreamRoutesOptions): void {
  const { provider } = options;

  app.get('/exec/:namespace/:pod/:container', async (c) => {
    const { namespace, pod, container } = c.req.param();
    const { incoming, handle, protocol } = upgradeFor(c, EXEC_PROTOCOLS);
    const command = c.req.queries('command') ?? [];
    if (command.length === 0) throw new BadRequestError('you must specify at least one command for the container');
    const q = streamQuery(c);
    const ref = await options.runningContainer(namespace, pod, container);
    if (!provider.execStream) throw new BadRequestError('this node runtime does not support streaming exec');
    // Started before the handshake completes, so that a command that cannot start is an HTTP error.
    const session = await provider.execStream(ref, container, command, { stdin: q.stdin, tty: q.tty }).catch(startFailure);
    handle.socket.once('close', () => session.close());
    acceptWebSocket(incoming, handle, protocol, (ws) => relaySession(ws, session, { stdout: q.stdout, stderr: q.stderr && !q.tty, command }));
    return c.body(null, 200);
  });

  app.get('/attach/:namespace/:pod/:container', async (c) => {
    const { namespace, pod, container } = c.req.param();
    const { incoming, handle, protocol } = upgradeFor(c, EXEC_PROTOCOLS);
    const q = streamQuery(c);
    const ref = await options.runningContainer(namespace, pod, container);
    if (!provider.attachStream) throw new BadRequestError('this node runtime does not support attach');
    const session = await provider.attachStream(ref, container, { stdin: q.stdin, tty: q.tty }).catch(startFailure);
    handle.socket.once('close', () => session.close());
    acceptWebSocket(incoming, handle, protocol, (ws) => relaySession(ws, session, { stdout: q.stdout, stderr: q.stderr, command: [] }));
    return c.body(null, 200);
  });

  // One connection per port per WebSocket: channel 2i carries the i-th port's bytes, 2i+1 its
  // errors; the first message on each begins with the port (kubelet's WebSocket port-forward).
  app.get('/portForward/:namespace/:pod', async (c) => {
    const { namespace, pod } = c.req.param();
    const { incoming, handle, protocol } = upgradeFor(c, PORT_FORWARD_PROTOCOLS);
    const ports = (c.req.queries('ports') ?? []).flatMap((p) => p.split(','));
    if (ports.length === 0) throw new BadRequestError('query parameter "ports" is required');
    const numbers = ports.map((p) => {
      const n = Number(p);
      if (!/^\d+$/.test(p) || n < 1 || n > 65535) throw new BadRequestError(`invalid port "${p}"`);
      return n;
    });
    const address = await options.podAddress(namespace, pod);
    acceptWebSocket(incoming, handle, protocol, (ws) => forwardPorts(ws, address, numbers, `${namespace}/${pod}`));
    return c.body(null, 200);
  });
}

/** Joins each requested port of the pod to its channel pair. */
function forwardPorts(ws: WebSocket, address: string, ports: number[], podName: string): void {
  const sockets = ports.map((port, i) => {
    const { data, error } = portForwardChannels(i);
    ws.send(encodeFrame(data, encodePortPrefix(port)));
    ws.send(encodeFrame(error, encodePortPrefix(port)));
    const socket = connect({ host: address, port });
    socket.on('data', (chunk) => {
      if (ws.readyState === ws.OPEN) ws.send(encodeFrame(data, chunk));
    });
    socket.on('error', (err) => {
      if (ws.readyState === ws.OPEN) {
        ws.send(encodeFrame(error, `error forwarding port ${port} to pod ${podName}: ${err.message}`));
      }
    });
    socket.on('close', () => {
      if (sockets.every((s) => s.destroyed) && ws.readyState === ws.OPEN) ws.close(1000);
    });
    return socket;
  });
  ws.on('message', (message: Buffer) => {
    const frame = decodeFrame(message);
    if (!frame || frame.channel % 2 !== 0) return;
    sockets[frame.channel / 2]?.write(frame.data);
  });
  ws.on('close', () => {
    for (const s of sockets) s.destroy();
  });
  ws.on('error', () => ws.terminate());
}
