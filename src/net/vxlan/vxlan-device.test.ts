// Unit tests for the VXLAN device: reading `ip -j` output, deciding to adopt or replace, and the commands run against a fake `ip`.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { NetCommandError, type NetCommand } from '../net-command.js';
import {
  addressCommands,
  deviceProblems,
  ensureVxlanDevice,
  interfaceHolding,
  parseDevice,
  type ObservedDevice,
  type VxlanDeviceSpec,
} from './vxlan-device.js';

const spec: VxlanDeviceSpec = { name: 'minik8s.vx', vni: 1, port: 8472, localIP: '192.168.0.11', parent: 'eth0', address: '10.244.1.0' };

/** `ip -d -j link show` of a device as the kernel shows it. */
function linkJson(o: { kind?: string; id?: number; port?: number; local?: string; link?: string; learning?: boolean; up?: boolean; mac?: string }): string {
  return JSON.stringify([
    {
      ifindex: 5,
      ifname: 'minik8s.vx',
      flags: ['BROADCAST', 'MULTICAST', ...(o.up ? ['UP', 'LOWER_UP'] : [])],
      mtu: 1450,
      address: o.mac ?? '26:54:41:6B:AB:78',
      linkinfo: {
        info_kind: o.kind ?? 'vxlan',
        info_data: { id: o.id ?? 1, local: o.local ?? '192.168.0.11', link: o.link ?? 'eth0', port: o.port ?? 8472, learning: o.learning ?? false },
      },
    },
  ]);
}

function addrJson(addrs: { local: string; prefixlen: number }[]): string {
  return JSON.stringify([{ ifindex: 5, ifname: 'minik8s.vx', addr_info: addrs.map((a) => ({ family: 'inet', ...a, scope: 'global' })) }]);
}

describe('interfaceHolding', () => {
  const text = JSON.stringify([
    { ifname: 'lo', addr_info: [{ family: 'inet', local: '127.0.0.1', prefixlen: 8 }] },
    {
      ifname: 'eth0',
      addr_info: [
        { family: 'inet', local: '192.168.0.11', prefixlen: 24 },
        { family: 'inet', local: '192.168.1.11', prefixlen: 24 },
      ],
    },
  ]);
  for (const [ip, want] of [
    ['192.168.1.11', 'eth0'],
    ['127.0.0.1', 'lo'],
    ['10.9.9.9', undefined],
  ] as const) {
    it(`${ip} -> ${want}`, () => assert.equal(interfaceHolding(text, ip), want));
  }
});

describe('deviceProblems', () => {
  const good = parseDevice(linkJson({ up: true }))!;
  it('reads a device', () => {
    assert.deepEqual(good, { kind: 'vxlan', vni: 1, port: 8472, localIP: '192.168.0.11', parent: 'eth0', learning: false, mac: '26:54:41:6b:ab:78', up: true });
    assert.equal(parseDevice(''), undefined);
  });
  const cases: [string, ObservedDevice, RegExp | undefined][] = [
    ['one of the right shape is adopted', good, undefined],
    ['one that is down is adopted (and set up)', { ...good, up: false }, undefined],
    ['another kind of device', { ...good, kind: 'bridge' }, /a bridge device, not vxlan/],
    ['another VNI', { ...good, vni: 2 }, /VNI 2, not 1/],
    ['another port', { ...good, port: 4789 }, /port 4789, not 8472/],
    ['another local address (the node moved)', { ...good, localIP: '192.168.0.99' }, /local address 192\.168\.0\.99, not 192\.168\.0\.11/],
    ['another parent', { ...good, parent: 'eth1' }, /on eth1, not eth0/],
    ['one that learns', { ...good, learning: true }, /learns addresses/],
  ];
  for (const [name, device, want] of cases) {
    it(name, () => {
      const problems = deviceProblems(device, spec);
      if (want === undefined) assert.deepEqual(problems, []);
      else assert.match(problems.join('; '), want);
    });
  }
});

describe('addressCommands', () => {
  const line = (c: NetCommand) => `${c.tool} ${c.args.join(' ')}`;
  it('adds the VTEP /32 to a bare device', () => {
    assert.deepEqual(addressCommands(spec, addrJson([])).map(line), ['ip addr add 10.244.1.0/32 dev minik8s.vx']);
    assert.deepEqual(addressCommands(spec, '').map(line), ['ip addr add 10.244.1.0/32 dev minik8s.vx']);
  });
  it('does nothing when it is there', () => {
    assert.deepEqual(addressCommands(spec, addrJson([{ local: '10.244.1.0', prefixlen: 32 }])), []);
  });
  it("removes an old range's address (a node that joined again)", () => {
    assert.deepEqual(
      addressCommands(
        spec,
        addrJson([
          { local: '10.244.7.0', prefixlen: 32 },
          { local: '10.244.1.0', prefixlen: 24 },
        ]),
      ).map(line),
      ['ip addr del 10.244.7.0/32 dev minik8s.vx', 'ip addr del 10.244.1.0/24 dev minik8s.vx', 'ip addr add 10.244.1.0/32 dev minik8s.vx'],
    );
  });
});

describe('ensureVxlanDevice against a fake ip', () => {
  /** A fake `ip` holding one device (or none); it records what it is asked to change. */
  function fakeIp(initial: string | undefined, addrs: { local: string; prefixlen: number }[] = [], createError?: string) {
    let device = initial;
    const changes: string[] = [];
    const run = async (c: NetCommand): Promise<string> => {
      const text = `${c.tool} ${c.args.join(' ')}`;
      if (text === 'ip -d -j link show dev minik8s.vx') {
        if (!device) throw new NetCommandError(c, 'Device "minik8s.vx" does not exist.');
        return device;
      }
      if (text === 'ip -4 -j addr show dev minik8s.vx') return addrJson(addrs);
      changes.push(text);
      if (text.startsWith('ip link add')) {
        if (createError) throw new NetCommandError(c, createError);
        device = linkJson({ mac: 'aa:aa:aa:aa:aa:01' });
      }
      if (text === 'ip link del minik8s.vx') device = undefined;
      return '';
    };
    return { run, changes };
  }

  it("creates a missing device with flannel's settings, gives it the VTEP address and sets it up", async () => {
    const ip = fakeIp(undefined);
    const result = await ensureVxlanDevice(ip.run, spec);
    assert.equal(result.mac, 'aa:aa:aa:aa:aa:01');
    assert.deepEqual(ip.changes, [
      'ip link add minik8s.vx type vxlan id 1 dstport 8472 local 192.168.0.11 dev eth0 nolearning',
      'ip addr add 10.244.1.0/32 dev minik8s.vx',
      'ip link set minik8s.vx up',
    ]);
    assert.match(result.changes.join(', '), /created device minik8s\.vx/);
  });

  it('adopts a device of the right shape as it is: same MAC, no changes', async () => {
    const ip = fakeIp(linkJson({ up: true }), [{ local: '10.244.1.0', prefixlen: 32 }]);
    assert.deepEqual(await ensureVxlanDevice(ip.run, spec), { mac: '26:54:41:6b:ab:78', changes: [] });
    assert.deepEqual(ip.changes, []);
  });

  it('replaces a device of another shape, saying why', async () => {
    const ip = fakeIp(linkJson({ up: true, local: '192.168.0.99' }), [{ local: '10.244.1.0', prefixlen: 32 }]);
    const result = await ensureVxlanDevice(ip.run, spec);
    assert.equal(ip.changes[0], 'ip link del minik8s.vx');
    assert.match(ip.changes[1]!, /^ip link add minik8s\.vx/);
    assert.match(result.changes[0]!, /replaced device minik8s\.vx \(local address 192\.168\.0\.99, not 192\.168\.0\.11\)/);
    assert.equal(result.mac, 'aa:aa:aa:aa:aa:01');
  });

  it('explains a VNI another device holds, and a missing privilege', async () => {
    await assert.rejects(
      ensureVxlanDevice(fakeIp(undefined, [], 'Error: A VXLAN device with the specified VNI already exists.').run, spec),
      /another VXLAN device on this machine already uses VNI 1 on port 8472/,
    );
    await assert.rejects(
      ensureVxlanDevice(fakeIp(undefined, [], 'RTNETLINK answers: Operation not permitted').run, spec),
      /needs root \(CAP_NET_ADMIN\).*--overlay=none/,
    );
  });
});
