// Answers a plain-HTTP request sent to a TLS listener with a 400 that says so, as Go's servers (kube-apiserver's) do, instead of a dropped connection.
import type { Socket } from 'node:net';
import type { Server as TlsServer } from 'node:tls';

/** The first byte of a TLS record that opens a handshake. */
const TLS_HANDSHAKE = 0x16;

/** What kube-apiserver answers `curl http://...:6443` with: the user learns to type https. */
export const PLAIN_HTTP_RESPONSE =
  'HTTP/1.0 400 Bad Request\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\nClient sent an HTTP request to an HTTPS server.\n';

/**
 * Puts a look at each connection's first byte before the TLS handshake. A handshake goes on to
 * TLS as before (the byte is handed back: a TLS socket made over a socket with buffered data
 * reads that data first); an HTTP request line (an ASCII letter) gets PLAIN_HTTP_RESPONSE and is
 * closed. A connection that sends nothing within `firstByteTimeoutMs` is closed, as a TLS
 * handshake that never starts would be: the look must not open a slowloris hole.
 */
export function refusePlainHttp(server: TlsServer, firstByteTimeoutMs: number): void {
  const tlsListeners = server.listeners('connection') as ((socket: Socket) => void)[];
  server.removeAllListeners('connection');
  server.on('connection', (socket: Socket) => {
    const timer = setTimeout(() => socket.destroy(), firstByteTimeoutMs);
    const onClose = () => clearTimeout(timer);
    socket.once('close', onClose);
    socket.once('data', (chunk: Buffer) => {
      clearTimeout(timer);
      socket.removeListener('close', onClose);
      socket.pause();
      const first = chunk[0];
      if (first !== TLS_HANDSHAKE && first !== undefined && ((first >= 0x41 && first <= 0x5a) || (first >= 0x61 && first <= 0x7a))) {
        // Closed outright once the answer is out: a client that never closes its side (a flood of
        // half requests) must not keep its place under the connection cap.
        socket.end(PLAIN_HTTP_RESPONSE, () => socket.destroy());
        return;
      }
      socket.unshift(chunk);
      for (const listener of tlsListeners) listener.call(server, socket);
    });
    socket.on('error', () => socket.destroy());
  });
}
