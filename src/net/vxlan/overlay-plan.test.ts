// Unit tests for the overlay planner: desired state from Nodes, the tools' JSON parsed, and the commands that close the gap.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Node } from '../../core/api/node.js';
import {
  desiredOverlay,
  overlayCommands,
  overlayFieldsChanged,
  parseFdb,
  parseNeighbours,
  parseRoutes,
  PUBLIC_IP_ANNOTATION,
  vtepAddress,
  VTEP_MAC_ANNOTATION,
  type ObservedOverlay,
  type OverlayState,
} from './overlay-plan.js';

const MAC1 = 'aa:00:00:00:00:01';
const MAC2 = 'aa:00:00:00:00:02';
const MAC3 = 'aa:00:00:00:00:03';

function node(name: string, podCIDR?: string, vtep?: { mac?: string; ip?: string }): Node {
  const annotations: Record<string, string> = {};
  if (vtep?.mac !== undefined) annotations[VTEP_MAC_ANNOTATION] = vtep.mac;
  if (vtep?.ip !== undefined) annotations[PUBLIC_IP_ANNOTATION] = vtep.ip;
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, resourceVersion: '1', ...(vtep ? { annotations } : {}) },
    spec: podCIDR ? { podCIDR, podCIDRs: [podCIDR] } : {},
    status: {},
  } as Node;
}

const self = { name: 'n1', podCIDR: '10.244.1.0/24', publicIP: '192.168.0.11' };

describe('vtepAddress', () => {
  for (const [cidr, want] of [
    ['10.244.1.0/24', '10.244.1.0'],
    ['10.244.255.0/24', '10.244.255.0'],
    ['10.0.0.0/8', '10.0.0.0'],
  ] as const) {
    it(`${cidr} -> ${want}`, () => assert.equal(vtepAddress(cidr), want));
  }
  for (const bad of ['10.244.1.5/24', 'x', '10.244.1.0']) {
    it(`refuses ${bad}`, () => assert.throws(() => vtepAddress(bad), /invalid pod CIDR/));
  }
});

describe('desiredOverlay', () => {
  const n2 = node('n2', '10.244.2.0/24', { mac: MAC2, ip: '192.168.0.12' });
  const n3 = node('n3', '10.244.3.0/24', { mac: MAC3.toUpperCase(), ip: '192.168.0.13' });

  it('gives every other node a route to its range via its VTEP, a permanent neighbour and an FDB entry to its address', () => {
    const { state, skipped } = desiredOverlay({ self, nodes: [n3, node('n1', '10.244.1.0/24', { mac: MAC1, ip: self.publicIP }), n2] });
    assert.deepEqual(state, {
      routes: [
        { dst: '10.244.2.0/24', via: '10.244.2.0' },
        { dst: '10.244.3.0/24', via: '10.244.3.0' },
      ],
      neighbours: [
        { ip: '10.244.2.0', mac: MAC2 },
        { ip: '10.244.3.0', mac: MAC3 },
      ],
      fdb: [
        { mac: MAC2, dst: '192.168.0.12' },
        { mac: MAC3, dst: '192.168.0.13' },
      ],
    });
    assert.deepEqual(skipped, []);
  });

  it('is empty for a node alone', () => {
    assert.deepEqual(desiredOverlay({ self, nodes: [node('n1', '10.244.1.0/24')] }).state, { routes: [], neighbours: [], fdb: [] });
  });

  const cases: [string, Node[], RegExp][] = [
    ['a node without a pod CIDR', [node('x', undefined, { mac: MAC2, ip: '192.168.0.12' })], /no pod CIDR/],
    ['a pod CIDR that is no range', [node('x', '10.244.2.7/24', { mac: MAC2, ip: '192.168.0.12' })], /is not an IPv4 range/],
    ['a node that published no VTEP (it runs --overlay=none)', [node('x', '10.244.2.0/24')], /has published no VTEP/],
    ['a VTEP MAC but no address', [node('x', '10.244.2.0/24', { mac: MAC2 })], /has published no VTEP/],
    ['a MAC that is no MAC', [node('x', '10.244.2.0/24', { mac: 'zz', ip: '192.168.0.12' })], /not a unicast MAC/],
    ['a multicast MAC', [node('x', '10.244.2.0/24', { mac: '01:00:5e:00:00:01', ip: '192.168.0.12' })], /not a unicast MAC/],
    ['a public IP that is no IPv4 address', [node('x', '10.244.2.0/24', { mac: MAC2, ip: '10.0.0.300' })], /cannot be sent to/],
    ['a loopback public IP', [node('x', '10.244.2.0/24', { mac: MAC2, ip: '127.0.0.1' })], /cannot be sent to/],
    ['a node on this very address (one network namespace)', [node('x', '10.244.2.0/24', { mac: MAC2, ip: self.publicIP })], /shares this node's address/],
    ['a range overlapping ours', [node('x', '10.244.0.0/16', { mac: MAC2, ip: '192.168.0.12' })], /overlaps this node's 10\.244\.1\.0\/24/],
  ];
  for (const [name, nodes, reason] of cases) {
    it(`skips ${name}, saying why`, () => {
      const { state, skipped } = desiredOverlay({ self, nodes });
      assert.deepEqual(state, { routes: [], neighbours: [], fdb: [] });
      assert.equal(skipped.length, 1);
      assert.equal(skipped[0]!.name, 'x');
      assert.match(skipped[0]!.reason, reason);
    });
  }

  it('keeps the first by name of two nodes that claim one range or one MAC', () => {
    const { state, skipped } = desiredOverlay({
      self,
      nodes: [
        node('b', '10.244.2.0/24', { mac: MAC3, ip: '192.168.0.13' }),
        node('a', '10.244.2.0/24', { mac: MAC2, ip: '192.168.0.12' }),
        node('c', '10.244.4.0/24', { mac: MAC2, ip: '192.168.0.14' }),
      ],
    });
    assert.deepEqual(state.routes, [{ dst: '10.244.2.0/24', via: '10.244.2.0' }]);
    assert.deepEqual(
      skipped.map((s) => s.name),
      ['b', 'c'],
    );
    assert.match(skipped[0]!.reason, /overlaps node a's/);
    assert.match(skipped[1]!.reason, /is node a's too/);
  });
});

describe('overlayFieldsChanged', () => {
  const base = node('n2', '10.244.2.0/24', { mac: MAC2, ip: '192.168.0.12' });
  const cases: [string, Node, boolean][] = [
    ['a heartbeat', { ...base, metadata: { ...base.metadata, resourceVersion: '2' }, status: { phase: 'Running' } } as Node, false],
    ['a new MAC', node('n2', '10.244.2.0/24', { mac: MAC3, ip: '192.168.0.12' }), true],
    ['a new address', node('n2', '10.244.2.0/24', { mac: MAC2, ip: '192.168.0.99' }), true],
    ['a new range', node('n2', '10.244.9.0/24', { mac: MAC2, ip: '192.168.0.12' }), true],
    ['annotations gone', node('n2', '10.244.2.0/24'), true],
  ];
  for (const [name, updated, want] of cases) it(`${name}: ${want}`, () => assert.equal(overlayFieldsChanged(base, updated), want));
});

describe("parsing the tools' JSON", () => {
  it("reads routes, less the kernel's own, with bare addresses as /32", () => {
    const text = JSON.stringify([
      { dst: '10.244.2.0/24', gateway: '10.244.2.0', flags: ['onlink'] },
      { dst: '10.244.3.0/24', gateway: '10.244.3.0', flags: [] },
      { dst: '10.244.9.9', flags: [] },
      { dst: '10.244.1.0/24', protocol: 'kernel', scope: 'link', prefsrc: '10.244.1.0', flags: [] },
      { type: 'broadcast', dst: '10.244.1.255', flags: [] },
    ]);
    assert.deepEqual(parseRoutes(text), [
      { dst: '10.244.2.0/24', via: '10.244.2.0', onlink: true },
      { dst: '10.244.3.0/24', via: '10.244.3.0', onlink: false },
      { dst: '10.244.9.9/32', onlink: false },
    ]);
    assert.deepEqual(parseRoutes(''), []);
    assert.deepEqual(parseRoutes('[]\n'), []);
  });

  it('reads neighbours (lower-case MACs) and whether they are permanent', () => {
    assert.deepEqual(
      parseNeighbours(
        JSON.stringify([
          { dst: '10.244.2.0', lladdr: 'AA:00:00:00:00:02', state: ['PERMANENT'] },
          { dst: '10.244.7.0', state: ['FAILED'] },
        ]),
      ),
      [
        { ip: '10.244.2.0', mac: MAC2, permanent: true },
        { ip: '10.244.7.0', permanent: false },
      ],
    );
  });

  it('reads FDB entries', () => {
    assert.deepEqual(
      parseFdb(
        JSON.stringify([
          { mac: MAC2, dst: '192.168.0.12', flags: ['self'], state: 'permanent' },
          { mac: '00:00:00:00:00:00', flags: ['self'], state: 'permanent' },
        ]),
      ),
      [{ mac: MAC2, dst: '192.168.0.12' }, { mac: '00:00:00:00:00:00' }],
    );
  });

  it('says what it could not read', () => {
    assert.throws(() => parseRoutes('{"dst":1}'), /not a JSON array/);
  });
});

describe('overlayCommands', () => {
  const DEV = 'minik8s.vx';
  const two: OverlayState = {
    routes: [
      { dst: '10.244.2.0/24', via: '10.244.2.0' },
      { dst: '10.244.3.0/24', via: '10.244.3.0' },
    ],
    neighbours: [
      { ip: '10.244.2.0', mac: MAC2 },
      { ip: '10.244.3.0', mac: MAC3 },
    ],
    fdb: [
      { mac: MAC2, dst: '192.168.0.12' },
      { mac: MAC3, dst: '192.168.0.13' },
    ],
  };
  const inPlace: ObservedOverlay = {
    routes: [
      { dst: '10.244.2.0/24', via: '10.244.2.0', onlink: true },
      { dst: '10.244.3.0/24', via: '10.244.3.0', onlink: true },
    ],
    neighbours: [
      { ip: '10.244.2.0', mac: MAC2, permanent: true },
      { ip: '10.244.3.0', mac: MAC3, permanent: true },
    ],
    fdb: [
      { mac: MAC2, dst: '192.168.0.12' },
      { mac: MAC3, dst: '192.168.0.13' },
    ],
  };
  const empty: ObservedOverlay = { routes: [], neighbours: [], fdb: [] };
  const line = (c: { tool: string; args: string[] }) => `${c.tool} ${c.args.join(' ')}`;

  const cases: [string, OverlayState, ObservedOverlay, string[]][] = [
    ['nothing when all is in place', two, inPlace, []],
    [
      'everything for a fresh device: FDB entries and neighbours before routes',
      two,
      empty,
      [
        `bridge fdb append ${MAC2} dev ${DEV} dst 192.168.0.12`,
        `bridge fdb append ${MAC3} dev ${DEV} dst 192.168.0.13`,
        `ip neigh replace 10.244.2.0 lladdr ${MAC2} dev ${DEV} nud permanent`,
        `ip neigh replace 10.244.3.0 lladdr ${MAC3} dev ${DEV} nud permanent`,
        `ip route replace 10.244.2.0/24 via 10.244.2.0 dev ${DEV} onlink`,
        `ip route replace 10.244.3.0/24 via 10.244.3.0 dev ${DEV} onlink`,
      ],
    ],
    [
      "a deleted node's entries only, route first",
      { routes: [two.routes[0]!], neighbours: [two.neighbours[0]!], fdb: [two.fdb[0]!] },
      inPlace,
      [`ip route del 10.244.3.0/24 dev ${DEV}`, `ip neigh del 10.244.3.0 dev ${DEV}`, `bridge fdb del ${MAC3} dev ${DEV} dst 192.168.0.13`],
    ],
    [
      'a peer whose device was made again (new MAC): neighbour replaced, FDB entry moved',
      {
        ...two,
        neighbours: [two.neighbours[0]!, { ip: '10.244.3.0', mac: MAC1 }],
        fdb: [two.fdb[0]!, { mac: MAC1, dst: '192.168.0.13' }],
      },
      inPlace,
      [
        `bridge fdb del ${MAC3} dev ${DEV} dst 192.168.0.13`,
        `bridge fdb append ${MAC1} dev ${DEV} dst 192.168.0.13`,
        `ip neigh replace 10.244.3.0 lladdr ${MAC1} dev ${DEV} nud permanent`,
      ],
    ],
    [
      'a peer at a new address: its FDB entry deleted and made again',
      { ...two, fdb: [two.fdb[0]!, { mac: MAC3, dst: '192.168.0.99' }] },
      inPlace,
      [`bridge fdb del ${MAC3} dev ${DEV} dst 192.168.0.13`, `bridge fdb append ${MAC3} dev ${DEV} dst 192.168.0.99`],
    ],
    [
      'a route without onlink or through another gateway, replaced',
      two,
      {
        ...inPlace,
        routes: [
          { dst: '10.244.2.0/24', via: '10.244.2.0', onlink: false },
          { dst: '10.244.3.0/24', via: '10.244.9.0', onlink: true },
        ],
      },
      [`ip route replace 10.244.2.0/24 via 10.244.2.0 dev ${DEV} onlink`, `ip route replace 10.244.3.0/24 via 10.244.3.0 dev ${DEV} onlink`],
    ],
    [
      'a stale neighbour that is not permanent made permanent; other kernel-made neighbours left alone',
      two,
      {
        ...inPlace,
        neighbours: [{ ip: '10.244.2.0', mac: MAC2, permanent: false }, inPlace.neighbours[1]!, { ip: '10.244.8.0', permanent: false }],
      },
      [`ip neigh replace 10.244.2.0 lladdr ${MAC2} dev ${DEV} nud permanent`],
    ],
    [
      'anything else on our device removed, an FDB entry without destination too',
      two,
      {
        routes: [...inPlace.routes, { dst: '10.244.8.0/24', onlink: false }],
        neighbours: [...inPlace.neighbours, { ip: '10.244.8.0', mac: MAC1, permanent: true }],
        fdb: [...inPlace.fdb, { mac: '00:00:00:00:00:00' }],
      },
      [`ip route del 10.244.8.0/24 dev ${DEV}`, `ip neigh del 10.244.8.0 dev ${DEV}`, `bridge fdb del 00:00:00:00:00:00 dev ${DEV}`],
    ],
  ];
  for (const [name, desired, observed, want] of cases) {
    it(name, () => assert.deepEqual(overlayCommands(DEV, desired, observed).map(line), want));
  }
});
