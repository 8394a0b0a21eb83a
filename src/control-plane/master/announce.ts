// The master's ready banner and the join command it prints, with the address workers on other machines reach it at.
import { createSocket } from 'node:dgram';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { networkInterfaces } from 'node:os';

export interface BannerFacts {
  url: string;
  dataDir: string;
  adminTokenPath: string;
  joinTokenPath: string;
  /** `HOST:PORT` of the managed registry; absent when the master runs none. */
  registry?: string;
}

/** One line, so that scripts can wait for "minik8s master ready". */
export function readyBanner(facts: BannerFacts): string {
  const registry = facts.registry ? `, registry ${facts.registry}` : '';
  return `minik8s master ready: API ${facts.url}${registry}, data ${facts.dataDir}, admin token in ${facts.adminTokenPath}, join token in ${facts.joinTokenPath}`;
}

/** The banner's join line: where the join command is, never the token itself (the banner ends up in logs others read). */
export function joinCommand(joinCommandPath: string): string {
  return `join a worker: run the command in ${joinCommandPath} there (it holds the join token: copy it only to the worker)`;
}

/** The join command, with the token in the environment rather than in argv, which every local user reads in /proc. */
export function joinCommandText(server: string, joinToken: string): string {
  return `MINIK8S_JOIN_TOKEN=${joinToken} minik8s --role=worker --server ${server}\n`;
}

/** Writes DATA_DIR/join-command (0600, also when it existed with a looser mode); returns its path. */
export function writeJoinCommandFile(dataDir: string, server: string, joinToken: string): string {
  const path = join(dataDir, 'join-command');
  writeFileSync(path, joinCommandText(server, joinToken), { mode: 0o600 });
  chmodSync(path, 0o600);
  return path;
}

function isWildcard(address: string): boolean {
  return address === '0.0.0.0' || address === '::' || address === '';
}

/** Interfaces that are not the machine's own network: container bridges and veths. */
const VIRTUAL = /^(docker|br-|veth|virbr|minik8s|cni|flannel|vxlan)/;

/** The first IPv4 address of a physical-looking interface, else undefined. */
export function interfaceAddress(interfaces: ReturnType<typeof networkInterfaces> = networkInterfaces()): string | undefined {
  for (const [name, addresses] of Object.entries(interfaces)) {
    if (VIRTUAL.test(name)) continue;
    const found = (addresses ?? []).find((a) => a.family === 'IPv4' && !a.internal);
    if (found) return found.address;
  }
  return undefined;
}

/** The source address of this machine's default route, found by connecting a UDP socket (nothing is sent). */
async function defaultRouteAddress(): Promise<string | undefined> {
  const socket = createSocket('udp4');
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.connect(9, '192.0.2.1', () => resolve());
    });
    const address = socket.address().address;
    return address && address !== '0.0.0.0' ? address : undefined;
  } catch {
    return undefined;
  } finally {
    socket.close();
  }
}

/**
 * The API URL to give workers: the listen address itself, or for a wildcard the address of the
 * default route (what other machines most likely reach), else loopback.
 */
export async function advertisedServerUrl(address: string, port: number, scheme: 'http' | 'https' = 'http'): Promise<string> {
  let host = address;
  if (isWildcard(address)) host = (await defaultRouteAddress()) ?? interfaceAddress() ?? '127.0.0.1';
  return host.includes(':') ? `${scheme}://[${host}]:${port}` : `${scheme}://${host}:${port}`;
}
