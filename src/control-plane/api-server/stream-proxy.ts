// Exec, attach and port-forward streams through the API server: the client's WebSocket upgrade is checked, then joined message for message to one the API server opens to the pod's kubelet.
import type { Context } from 'hono';
import { WebSocket } from 'ws';
import { chooseProtocol } from '../../core/api/channel-protocol.js';
import { parseQueryBool } from '../../core/api/query-bool.js';
import { BadRequestError } from '../../core/errors.js';
import { acceptWebSocket, upgradeOf, wantsWebSocket, type UpgradeEnv, type UpgradeHandle } from '../../core/lifecycle/http-upgrades.js';
import {
  PORT_FORWARD_STREAM_PROTOCOL,
  SPDY_TUNNEL_PROTOCOL,
  serveSpdyPortForward,
  socketTransport,
  type SpdyPortForwardOptions,
  webSocketTransport,
} from './spdy-port-forward.js';
import type { IncomingMessage } from 'node:http';

export interface StreamUpgrade {
  incoming: IncomingMessage;
  handle: UpgradeHandle;
  /** The subprotocol both the client and we speak. */
  protocol: string;
}

/**
 * The WebSocket upgrade a stream request must be, with the subprotocol to use; 400 in
 * kube-apiserver's words when it is not one (a plain request, or SPDY, which we do not serve).
 */
export function streamUpgrade(c: Context, supported: readonly string[]): StreamUpgrade {
  const env = c.env as Partial<UpgradeEnv> | undefined;
  const handle = upgradeOf(env);
  if (!handle || !env?.incoming) throw new BadRequestError('Upgrade request required');
  if (!wantsWebSocket(env.incoming)) {
    throw new BadRequestError(
      `unable to upgrade: "${env.incoming.headers.upgrade}" is not supported; this server streams over WebSocket (${supported.join(', ')})`,
    );
  }
  const protocol = chooseProtocol(env.incoming.headers['sec-websocket-protocol'], supported);
  if (!protocol) throw new BadRequestError(`unable to upgrade: none of the requested subprotocols is supported; use one of: ${supported.join(', ')}`);
  return { incoming: env.incoming, handle, protocol };
}

/** The query an exec or attach passes on to the kubelet: the command words and the four stream flags. */
export function kubeletStreamQuery(c: Context, withCommand: boolean): string {
  const params = new URLSearchParams();
  if (withCommand) {
    const command = c.req.queries('command') ?? [];
    if (command.length === 0) throw new BadRequestError('you must specify at least one command for the container');
    for (const word of command) params.append('command', word);
  }
  let any = false;
  for (const key of ['stdin', 'stdout', 'stderr', 'tty']) {
    if (parseQueryBool(c.req.query(key), key)) {
      params.set(key, 'true');
      if (key !== 'tty') any = true;
    }
  }
  if (!any) throw new BadRequestError('you must specify at least 1 of stdin, stdout, stderr');
  return params.toString();
}

/** The ports a port-forward names (`ports=80&ports=443` or `ports=80,443`), checked. */
export function portForwardPorts(c: Context): number[] {
  const raw = (c.req.queries('ports') ?? []).flatMap((p) => p.split(',')).map((p) => p.trim());
  if (raw.length === 0) throw new BadRequestError('query parameter "ports" is required');
  return raw.map((p) => {
    const n = Number(p);
    if (!/^\d+$/.test(p) || n < 1 || n > 65535) throw new BadRequestError(`invalid port "${p}": ports must be between 1 and 65535`);
    return n;
  });
}

/** A close code that may be sent on: the reserved ones (no status, abnormal closure) become a normal close. */
function sendableCode(code: number): number {
  return code === 1000 || (code >= 3000 && code < 5000) || (code > 1000 && code < 1015 && code !== 1004 && code !== 1005 && code !== 1006) ? code : 1000;
}

/** Joins two open WebSockets: each message goes on as it came, and a close on either side closes the other. */
export function relayWebSockets(a: WebSocket, b: WebSocket): void {
  const pipe = (from: WebSocket, to: WebSocket) => {
    from.on('message', (data: Buffer, isBinary: boolean) => {
      if (to.readyState === WebSocket.OPEN) to.send(data, { binary: isBinary });
    });
    from.on('close', (code: number, reason: Buffer) => {
      if (to.readyState === WebSocket.OPEN || to.readyState === WebSocket.CONNECTING) to.close(sendableCode(code), reason);
    });
    from.on('error', () => from.terminate());
  };
  pipe(a, b);
  pipe(b, a);
}

/**
 * kubectl port-forward's SPDY session, when the request asks for one: a WebSocket offering
 * SPDY/3.1+portforward.k8s.io (kubectl 1.31 and later), or a plain SPDY/3.1 upgrade naming
 * portforward.k8s.io (older kubectl, and newer ones falling back). Undefined otherwise.
 */
export function spdyPortForwardUpgrade(c: Context): { start(options: SpdyPortForwardOptions): void } | undefined {
  const env = c.env as Partial<UpgradeEnv> | undefined;
  const handle = upgradeOf(env);
  const incoming = env?.incoming;
  if (!handle || !incoming) return undefined;
  if (wantsWebSocket(incoming)) {
    if (!chooseProtocol(incoming.headers['sec-websocket-protocol'], [SPDY_TUNNEL_PROTOCOL])) return undefined;
    return {
      start: (options) => acceptWebSocket(incoming, handle, SPDY_TUNNEL_PROTOCOL, (ws) => serveSpdyPortForward(webSocketTransport(ws), options)),
    };
  }
  if (!/^spdy\/3\.1$/i.test(incoming.headers.upgrade ?? '')) return undefined;
  const versions = String(incoming.headers['x-stream-protocol-version'] ?? '')
    .split(',')
    .map((v) => v.trim());
  if (!versions.includes(PORT_FORWARD_STREAM_PROTOCOL)) {
    throw new BadRequestError(
      `unable to upgrade: unable to negotiate protocol: client supports ${JSON.stringify(versions)}, server supports ["${PORT_FORWARD_STREAM_PROTOCOL}"]`,
    );
  }
  return {
    start: (options) => {
      handle.taken = true;
      handle.socket.write(
        `HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: ${PORT_FORWARD_STREAM_PROTOCOL}\r\n\r\n`,
      );
      serveSpdyPortForward(socketTransport(handle.socket, handle.head), options);
    },
  };
}
