// The node's VXLAN device: created, or adopted when one of the right shape exists (a restarted worker keeps its MAC, so peers need no update).
import { formatNetCommand, NetCommandError, type NetCommand, type NetRunner } from '../net-command.js';

export interface VxlanDeviceSpec {
  /** At most 15 characters, e.g. minik8s.vx. */
  name: string;
  vni: number;
  /** UDP port (8472, the Linux kernel's and flannel's). */
  port: number;
  /** The node's address, where VXLAN packets leave from and arrive. */
  localIP: string;
  /** The interface holding localIP. */
  parent: string;
  /** The VTEP address (the pod range's .0), put on the device as a /32. */
  address: string;
}

export interface ObservedDevice {
  kind?: string;
  vni?: number;
  port?: number;
  localIP?: string;
  parent?: string;
  learning?: boolean;
  mac?: string;
  up: boolean;
}

function firstEntry(text: string): Record<string, unknown> | undefined {
  const trimmed = text.trim();
  if (!trimmed) return undefined;
  const parsed = JSON.parse(trimmed) as unknown;
  return Array.isArray(parsed) && typeof parsed[0] === 'object' && parsed[0] !== null ? (parsed[0] as Record<string, unknown>) : undefined;
}

/** The name of the interface that holds `ip`, from `ip -4 -j addr show`. */
export function interfaceHolding(addrJson: string, ip: string): string | undefined {
  const trimmed = addrJson.trim();
  const links = (trimmed ? JSON.parse(trimmed) : []) as { ifname?: string; addr_info?: { family?: string; local?: string }[] }[];
  return links.find((l) => (l.addr_info ?? []).some((a) => a.local === ip))?.ifname;
}

/** `ip -d -j link show DEV` -> what matters about the device. */
export function parseDevice(linkJson: string): ObservedDevice | undefined {
  const link = firstEntry(linkJson);
  if (!link) return undefined;
  const info = (link.linkinfo ?? {}) as { info_kind?: string; info_data?: Record<string, unknown> };
  const data = info.info_data ?? {};
  const flags = Array.isArray(link.flags) ? (link.flags as string[]) : [];
  return {
    kind: info.info_kind,
    vni: typeof data.id === 'number' ? data.id : undefined,
    port: typeof data.port === 'number' ? data.port : undefined,
    localIP: typeof data.local === 'string' ? data.local : undefined,
    parent: typeof data.link === 'string' ? data.link : undefined,
    learning: typeof data.learning === 'boolean' ? data.learning : undefined,
    mac: typeof link.address === 'string' ? link.address.toLowerCase() : undefined,
    up: flags.includes('UP'),
  };
}

/** Why an existing device cannot be adopted (empty: it can). Such a device is deleted and made again, as flannel does. */
export function deviceProblems(device: ObservedDevice, spec: VxlanDeviceSpec): string[] {
  const problems: string[] = [];
  if (device.kind !== 'vxlan') return [`it is a ${device.kind ?? 'plain'} device, not vxlan`];
  if (device.vni !== spec.vni) problems.push(`VNI ${device.vni}, not ${spec.vni}`);
  if (device.port !== spec.port) problems.push(`port ${device.port}, not ${spec.port}`);
  if (device.localIP !== spec.localIP) problems.push(`local address ${device.localIP ?? '(none)'}, not ${spec.localIP}`);
  if (device.parent !== spec.parent) problems.push(`on ${device.parent ?? '(no device)'}, not ${spec.parent}`);
  if (device.learning !== false) problems.push('it learns addresses (we want nolearning)');
  return problems;
}

/** The commands that leave exactly the VTEP /32 on the device (a node that re-joined may have had another range). */
export function addressCommands(spec: VxlanDeviceSpec, addrJson: string): NetCommand[] {
  const link = firstEntry(addrJson);
  const present = ((link?.addr_info ?? []) as { family?: string; local?: string; prefixlen?: number }[])
    .filter((a) => a.family === 'inet' && typeof a.local === 'string')
    .map((a) => `${a.local}/${a.prefixlen}`);
  const wanted = `${spec.address}/32`;
  return [
    ...present.filter((a) => a !== wanted).map((a): NetCommand => ({ tool: 'ip', args: ['addr', 'del', a, 'dev', spec.name] })),
    ...(present.includes(wanted) ? [] : [{ tool: 'ip', args: ['addr', 'add', wanted, 'dev', spec.name] } satisfies NetCommand]),
  ];
}

export function createCommand(spec: VxlanDeviceSpec): NetCommand {
  return {
    tool: 'ip',
    args: [
      'link',
      'add',
      spec.name,
      'type',
      'vxlan',
      'id',
      String(spec.vni),
      'dstport',
      String(spec.port),
      'local',
      spec.localIP,
      'dev',
      spec.parent,
      'nolearning',
    ],
  };
}

/** The interface that holds the node's address, which VXLAN packets leave through. */
export async function findParentInterface(run: NetRunner, nodeIP: string): Promise<string> {
  const parent = interfaceHolding(await run({ tool: 'ip', args: ['-4', '-j', 'addr', 'show'] }), nodeIP);
  if (!parent) throw new Error(`no interface of this machine holds the node address ${nodeIP} (pass --node-ip with one that does)`);
  return parent;
}

/**
 * Makes the device match `spec` and be up; resolves with its MAC and what was changed. A device
 * of another shape under the name is replaced; one of the right shape is kept as it is.
 */
export async function ensureVxlanDevice(run: NetRunner, spec: VxlanDeviceSpec): Promise<{ mac: string; changes: string[] }> {
  const changes: string[] = [];
  const show = () => run({ tool: 'ip', args: ['-d', '-j', 'link', 'show', 'dev', spec.name] }).then(parseDevice, () => undefined);
  let device = await show();
  const problems = device ? deviceProblems(device, spec) : [];
  if (device && problems.length > 0) {
    await run({ tool: 'ip', args: ['link', 'del', spec.name] });
    changes.push(`replaced device ${spec.name} (${problems.join('; ')})`);
    device = undefined;
  }
  if (!device) {
    try {
      await run(createCommand(spec));
    } catch (err) {
      const stderr = err instanceof NetCommandError ? err.stderr : String(err);
      const hint = /VNI already exists/i.test(stderr)
        ? `: another VXLAN device on this machine already uses VNI ${spec.vni} on port ${spec.port} (see ip -d link show type vxlan)`
        : /not permitted/i.test(stderr)
          ? ': the worker needs root (CAP_NET_ADMIN) for the overlay, or run it with --overlay=none'
          : '';
      throw new Error(`${formatNetCommand(createCommand(spec))}: ${stderr}${hint}`, { cause: err });
    }
    if (!changes.length) changes.push(`created device ${spec.name}`);
    device = await show();
    if (!device) throw new Error(`device ${spec.name} is not there right after it was made`);
  }
  for (const command of addressCommands(spec, await run({ tool: 'ip', args: ['-4', '-j', 'addr', 'show', 'dev', spec.name] }))) {
    await run(command);
    changes.push(formatNetCommand(command));
  }
  if (!device.up) {
    await run({ tool: 'ip', args: ['link', 'set', spec.name, 'up'] });
    changes.push(`set ${spec.name} up`);
  }
  if (!device.mac) throw new Error(`device ${spec.name} shows no MAC address`);
  return { mac: device.mac, changes };
}
