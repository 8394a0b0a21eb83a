// A TCP forwarder on 127.0.0.1 to the master's registry, so the local Docker engine can pull from and push to it over plain HTTP.
//
// Docker talks plain HTTP only to registries it is told to trust, and trusts loopback (127.0.0.0/8)
// without being told. The master's registry listens on the master's address; when that is not a
// loopback one (a simulated cluster's bridge address, a real interface), the image factory reaches
// it through this forwarder instead of asking for the engine's configuration to be changed.
import { createServer, connect, type Server, type Socket } from 'node:net';

export interface LoopbackForwarder {
  /** `127.0.0.1:PORT`: the registry's name for the local engine. */
  address: string;
  close(): Promise<void>;
}

export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  return bare === 'localhost' || bare === '::1' || /^127\./.test(bare);
}

/** Listens on a free loopback port and pipes every connection to `target` (`HOST:PORT`). */
export async function startLoopbackForwarder(target: { host: string; port: number }): Promise<LoopbackForwarder> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect({ host: target.host, port: target.port });
    sockets.add(client).add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as { port: number };
  return {
    address: `127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
