// `minik8s dns host enable|disable`: on a worker, points the machine's own resolver at the cluster DNS (so `curl http://web.ns.svc.cluster.local` works on the node), and back.
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { isIPv4 } from 'node:net';
import {
  clusterDnsFile,
  isOurResolvConf,
  originalResolvConfFile,
  ourNameserver,
  renderHostResolvConf,
  withoutOurNameserver,
} from '../net/dns/host-resolv-conf.js';
import { CliError } from './cli-error.js';
import type { CliContext } from './context.js';

export interface DnsHostArgs {
  action: 'enable' | 'disable';
  /** The worker's state directory, where it records the nameserver its pods use (and the original resolv.conf is kept). */
  dataDir: string;
  /** The resolver configuration to change (default /etc/resolv.conf). */
  resolvConf?: string;
  /** Overrides the worker's record. */
  nameserver?: string;
}

function read(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new CliError(`cannot read ${path}: ${(err as Error).message}`);
  }
}

/**
 * Replaces the file's content. A rename is atomic for readers; a resolv.conf that is a mount
 * point (containers, `ip netns exec`) cannot be renamed over, so that one is written in place.
 */
function write(path: string, text: string): void {
  const tmp = `${path}.minik8s-tmp`;
  try {
    writeFileSync(tmp, text, { mode: 0o644 });
    renameSync(tmp, path);
  } catch {
    rmSync(tmp, { force: true });
    try {
      writeFileSync(path, text);
    } catch (err) {
      throw new CliError(`cannot write ${path}: ${(err as Error).message}`);
    }
  }
}

function workerNameserver(dataDir: string): string {
  const path = clusterDnsFile(dataDir);
  if (!existsSync(path)) {
    throw new CliError(`no cluster DNS recorded in ${path}: run this on a worker started with --dns=on (its --data-dir), or give --nameserver ADDRESS`);
  }
  return read(path).trim();
}

export function runDnsHost(ctx: CliContext, args: DnsHostArgs): number {
  const path = args.resolvConf ?? '/etc/resolv.conf';
  const kept = originalResolvConfFile(args.dataDir);
  if (args.action === 'enable') {
    const nameserver = args.nameserver ?? workerNameserver(args.dataDir);
    if (!isIPv4(nameserver)) throw new CliError(`"${nameserver}" is not an IPv4 address`);
    const current = read(path);
    // A second enable re-renders from the kept original (the worker's address may have changed).
    const original = isOurResolvConf(current) && existsSync(kept) ? read(kept) : current;
    if (!isOurResolvConf(current)) write(kept, current);
    write(path, renderHostResolvConf(original, nameserver));
    ctx.out(`host DNS: cluster names resolve through ${nameserver}; other names as before (the original is kept in ${kept})\n`);
    return 0;
  }
  if (existsSync(kept)) {
    write(path, read(kept));
    rmSync(kept, { force: true });
    ctx.out(`host DNS: ${path} restored\n`);
    return 0;
  }
  const current = read(path);
  const ours = ourNameserver(current);
  if (ours === undefined) {
    ctx.out(`host DNS: ${path} is not minik8s's; nothing to undo\n`);
    return 0;
  }
  write(path, withoutOurNameserver(current, ours));
  ctx.out(`host DNS: ${ours} taken out of ${path} (the kept original was gone)\n`);
  return 0;
}
