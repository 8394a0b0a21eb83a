// Upgrade requests (WebSocket) go through the same fetch app as plain requests, so authentication and authorization apply; a route takes the socket or answers as usual.
import { STATUS_CODES, type IncomingMessage, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { type WebSocket, WebSocketServer } from 'ws';

/** What an upgrade request's handlers find in the app's env beside `incoming`: the raw socket, to take over. */
export interface UpgradeHandle {
  socket: Duplex;
  head: Buffer;
  /** Set by the route that took the socket; the response it returns is then not written. */
  taken: boolean;
}

export interface UpgradeEnv {
  incoming: IncomingMessage;
  upgrade: UpgradeHandle;
}

type Fetch = (request: Request, env: UpgradeEnv) => Response | Promise<Response>;

/** The upgrade handle of a request, when it came as an upgrade. */
export function upgradeOf(env: unknown): UpgradeHandle | undefined {
  return (env as Partial<UpgradeEnv> | undefined)?.upgrade;
}

function requestOf(req: IncomingMessage, scheme: string): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  return new Request(`${scheme}://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`, { method: req.method ?? 'GET', headers });
}

/** Writes an ordinary answer on a socket whose request asked for an upgrade, and closes it. */
async function writeResponse(socket: Duplex, res: Response): Promise<void> {
  const body = Buffer.from(await res.arrayBuffer());
  const lines = [`HTTP/1.1 ${res.status} ${STATUS_CODES[res.status] ?? ''}`];
  res.headers.forEach((value, name) => {
    if (name !== 'content-length' && name !== 'connection' && name !== 'transfer-encoding') lines.push(`${name}: ${value}`);
  });
  lines.push(`content-length: ${body.length}`, 'connection: close', '', '');
  socket.end(Buffer.concat([Buffer.from(lines.join('\r\n')), body]));
}

/**
 * Sends the server's upgrade requests through `fetch`. Returns a function that ends every
 * upgraded connection still open (server.close() waits for them, and closeAllConnections()
 * does not see them).
 */
export function serveUpgrades(server: Server, fetch: Fetch, options: { scheme?: string } = {}): () => void {
  const open = new Set<Duplex>();
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const handle: UpgradeHandle = { socket, head, taken: false };
    open.add(socket);
    socket.once('close', () => open.delete(socket));
    // A client that vanishes mid-handshake must not take the process down.
    socket.on('error', () => socket.destroy());
    void (async () => {
      try {
        const res = await fetch(requestOf(req, options.scheme ?? 'http'), { incoming: req, upgrade: handle });
        if (!handle.taken && !socket.destroyed) await writeResponse(socket, res);
      } catch {
        socket.destroy();
      }
    })();
  });
  return () => {
    for (const socket of open) socket.destroy();
  };
}

/** Whether the request asks for a WebSocket (rather than, say, SPDY). */
export function wantsWebSocket(incoming: IncomingMessage): boolean {
  return (incoming.headers.upgrade ?? '').toLowerCase() === 'websocket';
}

/**
 * Completes the WebSocket handshake on the handle's socket with `protocol` (ws itself answers
 * a malformed handshake with 400), and hands over the open socket. The route has then taken
 * the request: what it returns is not written.
 */
export function acceptWebSocket(incoming: IncomingMessage, handle: UpgradeHandle, protocol: string | undefined, onOpen: (ws: WebSocket) => void): void {
  handle.taken = true;
  const server = new WebSocketServer({ noServer: true, perMessageDeflate: false, handleProtocols: () => protocol ?? false });
  server.handleUpgrade(incoming, handle.socket, handle.head, (ws) => onOpen(ws));
}
