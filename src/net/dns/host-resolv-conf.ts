// The node's own resolver pointed at the cluster DNS (`minik8s dns host enable`): resolv.conf rendered with our nameserver first, and undone.
import { join } from 'node:path';
import { parseNameservers } from './resolv-conf.js';

/** Under the worker's DATA_DIR: the nameserver its pods use for the cluster (written at start with --dns=on). */
export const CLUSTER_DNS_FILE = 'cluster-dns';
/** Under DATA_DIR: the user's resolv.conf as it was, kept while ours is in place. */
export const ORIGINAL_FILE = 'host-resolv.conf.orig';
/** The first line of a resolv.conf we wrote: how disable (and a second enable) recognise it. */
const MARKER = '# minik8s dns host:';
/** glibc reads the first three nameserver lines only. */
const MAX_NAMESERVERS = 3;

export function clusterDnsFile(dataDir: string): string {
  return join(dataDir, CLUSTER_DNS_FILE);
}

export function originalResolvConfFile(dataDir: string): string {
  return join(dataDir, ORIGINAL_FILE);
}

export function isOurResolvConf(text: string): boolean {
  return text.startsWith(MARKER);
}

/**
 * The resolv.conf that sends every lookup to the node's cluster DNS first, which answers the
 * cluster domain and DNS-kind hosts and forwards the rest to the node's own resolvers (it reads
 * them from this very file, skipping itself). The original resolvers follow ours, so lookups
 * still work while the worker is down; search and options lines are kept as they were.
 */
export function renderHostResolvConf(original: string, nameserver: string): string {
  const others = parseNameservers(original).filter((ns) => ns !== nameserver);
  const kept = original.split('\n').filter((line) => line.trim() !== '' && !/^\s*nameserver\s/.test(line));
  return [
    `${MARKER} cluster names through ${nameserver}; \`minik8s dns host disable\` restores the original`,
    ...[nameserver, ...others].slice(0, MAX_NAMESERVERS).map((ns) => `nameserver ${ns}`),
    ...kept,
    '',
  ].join('\n');
}

/** Our lines taken out of a resolv.conf we wrote, for when the kept original is gone. */
export function withoutOurNameserver(text: string, nameserver: string): string {
  return `${text
    .split('\n')
    .filter((line) => !line.startsWith(MARKER) && line.trim() !== `nameserver ${nameserver}`)
    .join('\n')
    .trim()}\n`;
}

/** The nameserver our rendering put first, if `text` is ours. */
export function ourNameserver(text: string): string | undefined {
  return isOurResolvConf(text) ? parseNameservers(text)[0] : undefined;
}
