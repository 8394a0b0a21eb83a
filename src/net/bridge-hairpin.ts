// Hairpin mode on the pod bridge's ports, so that a pod reaching a service that picks the pod itself gets its own packets back (kubelet's hairpin-veth).
import type { NetCommand, NetRunner } from './net-command.js';

/** What `bridge -d -j link show` says of one port. */
export interface BridgePort {
  ifname: string;
  master?: string;
  hairpin?: boolean;
}

/**
 * A service's DNAT to the pod that sent the packet sends the frame back out of the bridge port
 * it came in by, which a bridge does only for ports in hairpin mode (Docker leaves it off).
 */
export function hairpinCommands(ports: readonly BridgePort[], bridge: string): NetCommand[] {
  return ports
    .filter((p) => p.master === bridge && p.hairpin === false)
    .map((p) => ({ tool: 'bridge', args: ['link', 'set', 'dev', p.ifname, 'hairpin', 'on'] }));
}

/** Turns hairpin mode on for every port of `bridge` that lacks it; returns the ports changed. A port gone meanwhile (a pod deleted) is skipped. */
export async function ensureHairpin(run: NetRunner, bridge: string): Promise<string[]> {
  const ports = JSON.parse((await run({ tool: 'bridge', args: ['-d', '-j', 'link', 'show'] })) || '[]') as BridgePort[];
  const changed: string[] = [];
  for (const command of hairpinCommands(ports, bridge)) {
    try {
      await run(command);
      changed.push(command.args[3]!);
    } catch {
      /* the pod's veth went away between the listing and the change */
    }
  }
  return changed;
}
