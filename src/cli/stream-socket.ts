// Opens a WebSocket stream (exec, port-forward) to the API server as the CLI's client: its credentials, the cluster CA, a Status refusal as an ApiError.
import type { ClientOptions } from 'ws';
import WebSocket from 'ws';
import { ApiError, errorFromStatus, type Status } from '../core/errors.js';
import type { CliContext } from './context.js';

/** Opens `path?query` on the API server with one of `protocols`; rejects with the server's Status as an ApiError when it refuses. */
export function openStream(ctx: CliContext, path: string, query: URLSearchParams, protocols: readonly string[]): Promise<WebSocket> {
  const client = ctx.client();
  const { headers, tls } = client.upgradeCredentials;
  const base = new URL(client.server);
  base.protocol = base.protocol === 'https:' ? 'wss:' : 'ws:';
  const url = `${base.origin}${path}?${query.toString()}`;
  const options: ClientOptions = { headers, perMessageDeflate: false, handshakeTimeout: 30_000, ...(tls ? { ca: tls.ca, cert: tls.cert, key: tls.key } : {}) };
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, [...protocols], options);
    ws.once('open', () => resolve(ws));
    ws.once('unexpected-response', (req, res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const code = res.statusCode ?? 500;
        try {
          const status = JSON.parse(text) as Partial<Status>;
          if (status.kind === 'Status') return reject(errorFromStatus(status, code));
        } catch {
          // Not a Status: described from the code below.
        }
        reject(new ApiError(code, 'Unknown', `unable to upgrade connection: ${text.trim().slice(0, 300) || `HTTP ${code}`}`));
      });
      req.destroy();
    });
    ws.once('error', (err) => reject(err));
  });
}
