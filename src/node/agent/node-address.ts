// Finds the address this machine uses to reach the master: the node's InternalIP unless --node-ip names one.
import { createSocket } from 'node:dgram';
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';

/**
 * The local source address of a route to `server`'s host, found by connecting a UDP socket
 * (which sends nothing) and reading its local address: the same choice the kernel makes for
 * the worker's real traffic, without parsing `ip route` output.
 */
export async function sourceAddressFor(server: string): Promise<string> {
  const host = new URL(server).hostname.replace(/^\[|\]$/g, '');
  const address = isIP(host) ? host : (await lookup(host, { family: 4 })).address;
  const socket = createSocket(isIP(address) === 6 ? 'udp6' : 'udp4');
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      // Any port will do: connect() on UDP only picks the route.
      socket.connect(9, address, () => resolve());
    });
    return socket.address().address;
  } finally {
    socket.close();
  }
}
