// Tells whether a port serves TLS or plain HTTP, for listeners (the activator) whose scheme depends on the master's version and flags.
import { connect } from 'node:tls';

/** 'https' when a TLS handshake with host:port completes (its certificate unchecked: only the scheme is asked), else 'http'. */
export function probeScheme(host: string, port: number, timeoutMs = 5000): Promise<'https' | 'http'> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, rejectUnauthorized: false });
    const done = (scheme: 'https' | 'http') => {
      socket.destroy();
      resolve(scheme);
    };
    socket.setTimeout(timeoutMs, () => done('http'));
    socket.once('secureConnect', () => done('https'));
    socket.once('error', () => done('http'));
    socket.once('close', () => done('http'));
  });
}
