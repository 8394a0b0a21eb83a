// The overlay's iptables rules: forward pod traffic past Docker's DROP policy, masquerade only what leaves the cluster CIDR. Rendering is pure; sync rewrites on change.
import type { NetCommand, NetRunner } from '../net-command.js';

/** Jumped to from FORWARD: pod traffic in and out of the cluster CIDR is forwarded (Docker's policy drops new connections into its bridges). */
export const FORWARD_CHAIN = 'MINIK8S-OVERLAY-FWD';
/** Jumped to from nat POSTROUTING: pod-to-pod traffic keeps its source address; pod traffic leaving the cluster takes the node's. */
export const NAT_CHAIN = 'MINIK8S-OVERLAY-NAT';

export interface OverlayRuleSet {
  /** Rules of each chain, exactly as `iptables -S CHAIN` prints them (without the `-N` line), so they compare as text. */
  filter: string[];
  nat: string[];
}

/**
 * Flannel's rules, in our own chains: accept forwarding from and to the cluster CIDR, and, since
 * the node's Docker network is made without Docker's masquerading, masquerade this node's pods'
 * traffic that leaves the cluster CIDR (multicast excepted).
 */
export function overlayRules(input: { clusterCIDR: string; podCIDR: string }): OverlayRuleSet {
  const { clusterCIDR, podCIDR } = input;
  return {
    filter: [
      `-A ${FORWARD_CHAIN} -s ${clusterCIDR} -m comment --comment "minik8s overlay: from pods" -j ACCEPT`,
      `-A ${FORWARD_CHAIN} -d ${clusterCIDR} -m comment --comment "minik8s overlay: to pods" -j ACCEPT`,
    ],
    nat: [
      `-A ${NAT_CHAIN} -s ${podCIDR} -d ${clusterCIDR} -m comment --comment "minik8s overlay: pod to pod keeps its source" -j RETURN`,
      `-A ${NAT_CHAIN} -s ${podCIDR} ! -d 224.0.0.0/4 -m comment --comment "minik8s overlay: pods to outside the cluster" -j MASQUERADE`,
    ],
  };
}

/** `iptables-restore --noflush` input that replaces the two chains' contents at once (declaring a chain flushes it) and nothing else. */
export function restoreInput(rules: OverlayRuleSet): string {
  return ['*filter', `:${FORWARD_CHAIN} - [0:0]`, ...rules.filter, 'COMMIT', '*nat', `:${NAT_CHAIN} - [0:0]`, ...rules.nat, 'COMMIT', ''].join('\n');
}

/** True when `iptables -S CHAIN` output (undefined: the chain is missing) holds exactly the wanted rules. */
export function chainUpToDate(chain: string, listed: string | undefined, wanted: readonly string[]): boolean {
  if (listed === undefined) return false;
  const lines = listed
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  return lines.length === wanted.length + 1 && lines[0] === `-N ${chain}` && wanted.every((w, i) => lines[i + 1] === w);
}

/** The jumps into our chains, first in their built-in chains so that no rule appended later decides before them. */
const JUMPS = [
  { table: 'filter', chain: 'FORWARD', target: FORWARD_CHAIN },
  { table: 'nat', chain: 'POSTROUTING', target: NAT_CHAIN },
] as const;

/**
 * Makes the chains hold `rules` and the built-in chains jump to them. Rewrites the chains only
 * when they differ; returns what it changed (empty when all was in place), for the log.
 */
export async function syncOverlayIptables(run: NetRunner, rules: OverlayRuleSet): Promise<string[]> {
  const changed: string[] = [];
  const list = (table: string, chain: string) => run({ tool: 'iptables', args: ['-w', '-t', table, '-S', chain] }).catch(() => undefined);
  const [filter, nat] = await Promise.all([list('filter', FORWARD_CHAIN), list('nat', NAT_CHAIN)]);
  if (!chainUpToDate(FORWARD_CHAIN, filter, rules.filter) || !chainUpToDate(NAT_CHAIN, nat, rules.nat)) {
    await run({ tool: 'iptables-restore', args: ['-w', '--noflush'], input: restoreInput(rules) });
    changed.push(`rules of ${FORWARD_CHAIN} and ${NAT_CHAIN}`);
  }
  for (const jump of JUMPS) {
    const rule = [jump.chain, '-j', jump.target];
    const present = await run({ tool: 'iptables', args: ['-w', '-t', jump.table, '-C', ...rule] }).then(
      () => true,
      () => false,
    );
    if (present) continue;
    const insert: NetCommand = { tool: 'iptables', args: ['-w', '-t', jump.table, '-I', jump.chain, '1', '-j', jump.target] };
    await run(insert);
    changed.push(`jump from ${jump.table} ${jump.chain}`);
  }
  return changed;
}
