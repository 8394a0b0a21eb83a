// Table-driven tests of the Service allocation decisions: picks, reserved addresses, requested values, updates, releases.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { serviceKind, type Service } from '../../core/api/service.js';
import { validateObject } from '../../core/api/validate.js';
import {
  carryOverAllocations,
  dnsServiceIP,
  ipInRange,
  parseNodePortRange,
  parseServiceCIDR,
  pickClusterIP,
  pickNodePort,
  planRepair,
  planServiceAllocation,
  releasesOf,
  type HeldAllocations,
  type Holder,
  type ServiceRanges,
} from './service-allocation.js';

const ranges: ServiceRanges = { serviceCIDR: '10.96.0.0/16', nodePorts: { min: 30000, max: 32767 } };
const zero = () => 0;

function svc(name: string, spec: Record<string, unknown>, namespace = 'default', uid = `uid-${name}`): Service {
  return validateObject(serviceKind, { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace, uid }, spec }) as Service;
}

function held(ips: Record<string, string> = {}, ports: Record<number, string> = {}): HeldAllocations {
  const holder = (uid: string): Holder => ({ namespace: 'default', name: uid.replace(/^uid-/, ''), uid });
  return {
    ips: new Map(Object.entries(ips).map(([ip, uid]) => [ip, holder(uid)])),
    ports: new Map(Object.entries(ports).map(([p, uid]) => [Number(p), holder(uid)])),
  };
}

const causes = (r: ReturnType<typeof planServiceAllocation>) => (r.problems ?? []).map((p) => `${p.path.join('.')}: ${p.detail ?? p.reason}`);

describe('service allocation: ranges and picks', () => {
  it('parses ranges and finds the reserved addresses', () => {
    assert.deepEqual(parseNodePortRange('30000-32767'), { min: 30000, max: 32767 });
    for (const bad of ['32767-30000', '0-10', '30000-70000', '30000', 'a-b']) assert.equal(parseNodePortRange(bad), undefined, bad);
    assert.equal(parseServiceCIDR('10.96.0.1/16'), undefined, 'host bits');
    assert.equal(parseServiceCIDR('10.96.0.0/30'), undefined, 'too small for the reserved addresses');
    assert.equal(dnsServiceIP('10.96.0.0/16'), '10.96.0.10');
    assert.equal(dnsServiceIP('10.100.4.0/24'), '10.100.4.10');
  });

  const inRange: [string, boolean][] = [
    ['10.96.0.0', false],
    ['10.96.0.1', true],
    ['10.96.255.254', true],
    ['10.96.255.255', false],
    ['10.97.0.1', false],
    ['1.2.3', false],
  ];
  for (const [ip, want] of inRange)
    it(`${ip} is ${want ? '' : 'not '}a usable address of 10.96.0.0/16`, () => assert.equal(ipInRange(ip, '10.96.0.0/16'), want));

  it('never picks the network, broadcast or reserved addresses, and wraps around', () => {
    const cidr = '10.96.0.0/28';
    const taken = new Set<string>();
    const plain = svc('a', { ports: [{ port: 80 }] });
    for (;;) {
      const ip = pickClusterIP(
        plain,
        cidr,
        (a) => taken.has(a),
        () => 0.99,
      );
      if (!ip) break;
      taken.add(ip);
    }
    assert.equal(taken.size, 16 - 2 - 2, 'all but network, broadcast, .1 and .10');
    for (const ip of ['10.96.0.0', '10.96.0.1', '10.96.0.10', '10.96.0.15']) assert.ok(!taken.has(ip), ip);
  });

  it('gives kube-dns its reserved address', () => {
    assert.equal(
      pickClusterIP(svc('kube-dns', { ports: [{ port: 53 }] }, 'kube-system'), '10.96.0.0/16', () => false, zero),
      '10.96.0.10',
    );
  });

  it('picks node ports inside the range, skipping taken ones', () => {
    assert.equal(
      pickNodePort({ min: 30000, max: 30002 }, (p) => p === 30000, zero),
      30001,
    );
    assert.equal(
      pickNodePort(
        { min: 30000, max: 30002 },
        (p) => p !== 30000,
        () => 0.9,
      ),
      30000,
    );
    assert.equal(
      pickNodePort({ min: 30000, max: 30001 }, () => true, zero),
      undefined,
    );
  });
});

describe('planServiceAllocation', () => {
  const table: {
    name: string;
    service: Service;
    previous?: Service;
    held?: HeldAllocations;
    ranges?: ServiceRanges;
    want?: { clusterIP?: string; nodePorts?: (number | undefined)[]; claimIPs?: string[]; claimPorts?: number[]; releasePorts?: number[] };
    problems?: string[];
  }[] = [
    {
      name: 'a ClusterIP service gets one address',
      service: svc('a', { ports: [{ port: 80 }] }),
      want: { clusterIP: '10.96.0.2', claimIPs: ['10.96.0.2'], claimPorts: [] },
    },
    {
      name: 'a taken address is skipped',
      service: svc('a', { ports: [{ port: 80 }] }),
      held: held({ '10.96.0.2': 'uid-x' }),
      want: { clusterIP: '10.96.0.3', claimIPs: ['10.96.0.3'] },
    },
    { name: 'a headless service gets none', service: svc('h', { clusterIP: 'None', selector: { app: 'x' } }), want: { clusterIP: 'None', claimIPs: [] } },
    {
      name: 'a requested free address is granted',
      service: svc('a', { clusterIP: '10.96.5.5', ports: [{ port: 80 }] }),
      want: { clusterIP: '10.96.5.5', claimIPs: ['10.96.5.5'] },
    },
    {
      name: 'a requested taken address is refused',
      service: svc('a', { clusterIP: '10.96.5.5', ports: [{ port: 80 }] }),
      held: held({ '10.96.5.5': 'uid-other' }),
      problems: ['spec.clusterIP: provided IP is already allocated'],
    },
    {
      name: 'a requested address outside the range is refused',
      service: svc('a', { clusterIP: '10.0.0.5', ports: [{ port: 80 }] }),
      problems: ['spec.clusterIP: provided IP is not in the valid range. The range of valid IPs is 10.96.0.0/16'],
    },
    {
      name: 'the broadcast address is refused',
      service: svc('a', { clusterIP: '10.96.255.255', ports: [{ port: 80 }] }),
      problems: ['spec.clusterIP: provided IP is not in the valid range. The range of valid IPs is 10.96.0.0/16'],
    },
    {
      name: 'the DNS address is refused to anyone but kube-dns',
      service: svc('a', { clusterIP: '10.96.0.10', ports: [{ port: 80 }] }),
      problems: ['spec.clusterIP: provided IP is reserved for the kube-system/kube-dns service'],
    },
    {
      name: 'kube-dns gets the DNS address it asks for',
      service: svc('kube-dns', { clusterIP: '10.96.0.10', ports: [{ port: 53 }] }, 'kube-system'),
      want: { clusterIP: '10.96.0.10', claimIPs: ['10.96.0.10'] },
    },
    {
      name: 'a NodePort service gets an address and a port per service port',
      service: svc('n', {
        type: 'NodePort',
        ports: [
          { name: 'a', port: 80 },
          { name: 'b', port: 81 },
        ],
      }),
      want: { clusterIP: '10.96.0.2', nodePorts: [30000, 30001], claimPorts: [30000, 30001] },
    },
    {
      name: 'a requested node port is granted and not picked again',
      service: svc('n', {
        type: 'NodePort',
        ports: [
          { name: 'a', port: 80 },
          { name: 'b', port: 81, nodePort: 30000 },
        ],
      }),
      want: { nodePorts: [30001, 30000], claimPorts: [30000, 30001] },
    },
    {
      name: 'a node port out of range is refused',
      service: svc('n', { type: 'NodePort', ports: [{ port: 80, nodePort: 40000 }] }),
      problems: ['spec.ports.0.nodePort: provided port is not in the valid range. The range of valid ports is 30000-32767'],
    },
    {
      name: 'a taken node port is refused',
      service: svc('n', { type: 'NodePort', ports: [{ port: 80, nodePort: 30080 }] }),
      held: held({}, { 30080: 'uid-other' }),
      problems: ['spec.ports.0.nodePort: provided port is already allocated'],
    },
    {
      name: 'one node port for TCP and UDP of the same service is fine',
      service: svc('n', {
        type: 'NodePort',
        ports: [
          { name: 't', port: 53, nodePort: 30053 },
          { name: 'u', port: 53, protocol: 'UDP', nodePort: 30053 },
        ],
      }),
      want: { nodePorts: [30053, 30053], claimPorts: [30053] },
    },
    {
      name: 'the same node port twice for one protocol is refused',
      service: svc('n', {
        type: 'NodePort',
        ports: [
          { name: 'a', port: 80, nodePort: 30053 },
          { name: 'b', port: 81, nodePort: 30053 },
        ],
      }),
      problems: ['spec.ports.1.nodePort: FieldValueDuplicate'],
    },
    {
      name: 'every problem is reported at once',
      service: svc('n', { type: 'NodePort', clusterIP: '10.96.0.10', ports: [{ port: 80, nodePort: 1 }] }),
      problems: [
        'spec.clusterIP: provided IP is reserved for the kube-system/kube-dns service',
        'spec.ports.0.nodePort: provided port is not in the valid range. The range of valid ports is 30000-32767',
      ],
    },
    {
      name: 'a full range is a problem, not a loop',
      service: svc('a', { type: 'NodePort', ports: [{ port: 80 }] }),
      ranges: { serviceCIDR: '10.96.0.0/28', nodePorts: { min: 30000, max: 30000 } },
      held: held(Object.fromEntries(Array.from({ length: 14 }, (_, i) => [`10.96.0.${i + 1}`, 'uid-x'])), { 30000: 'uid-x' }),
      problems: [
        'spec.clusterIP: no address is left in the service range 10.96.0.0/28',
        'spec.ports.0.nodePort: no node port is left in the range 30000-30000',
      ],
    },
    {
      name: 'an update keeping its address and ports claims nothing',
      previous: svc('n', { type: 'NodePort', clusterIP: '10.96.0.7', ports: [{ port: 80, nodePort: 30080 }] }),
      service: svc('n', { type: 'NodePort', clusterIP: '10.96.0.7', ports: [{ port: 80, nodePort: 30080 }] }),
      held: held({ '10.96.0.7': 'uid-n' }, { 30080: 'uid-n' }),
      want: { clusterIP: '10.96.0.7', claimIPs: [], claimPorts: [], releasePorts: [] },
    },
    {
      name: 'NodePort to ClusterIP frees the ports',
      previous: svc('n', { type: 'NodePort', clusterIP: '10.96.0.7', ports: [{ port: 80, nodePort: 30080 }] }),
      service: svc('n', { clusterIP: '10.96.0.7', ports: [{ port: 80 }] }),
      held: held({ '10.96.0.7': 'uid-n' }, { 30080: 'uid-n' }),
      want: { claimIPs: [], claimPorts: [], releasePorts: [30080] },
    },
    {
      name: 'ClusterIP to NodePort allocates ports',
      previous: svc('n', { clusterIP: '10.96.0.7', ports: [{ port: 80 }] }),
      service: svc('n', { type: 'NodePort', clusterIP: '10.96.0.7', ports: [{ port: 80 }] }),
      held: held({ '10.96.0.7': 'uid-n' }),
      want: { nodePorts: [30000], claimIPs: [], claimPorts: [30000], releasePorts: [] },
    },
    {
      name: 'a port removed by an update frees its node port',
      previous: svc('n', {
        type: 'NodePort',
        clusterIP: '10.96.0.7',
        ports: [
          { name: 'a', port: 80, nodePort: 30080 },
          { name: 'b', port: 81, nodePort: 30081 },
        ],
      }),
      service: svc('n', { type: 'NodePort', clusterIP: '10.96.0.7', ports: [{ name: 'a', port: 80, nodePort: 30080 }] }),
      held: held({ '10.96.0.7': 'uid-n' }, { 30080: 'uid-n', 30081: 'uid-n' }),
      want: { claimPorts: [], releasePorts: [30081] },
    },
  ];
  for (const t of table) {
    it(t.name, () => {
      const result = planServiceAllocation({ service: t.service, previous: t.previous, held: t.held ?? held(), ranges: t.ranges ?? ranges, random: zero });
      if (t.problems) {
        assert.deepEqual(causes(result), t.problems);
        return;
      }
      assert.deepEqual(causes(result), []);
      const plan = result.plan!;
      const w = t.want!;
      if (w.clusterIP !== undefined) {
        assert.equal(plan.service.spec.clusterIP, w.clusterIP);
        assert.deepEqual(plan.service.spec.clusterIPs, [w.clusterIP]);
      }
      if (w.nodePorts)
        assert.deepEqual(
          plan.service.spec.ports.map((p) => p.nodePort),
          w.nodePorts,
        );
      if (w.claimIPs) assert.deepEqual(plan.claimIPs, w.claimIPs);
      if (w.claimPorts) assert.deepEqual(plan.claimPorts.sort(), w.claimPorts);
      if (w.releasePorts) assert.deepEqual(plan.releasePorts, w.releasePorts);
      assert.equal(
        t.service.spec.ports.every((p, i) => p.nodePort === undefined || p.nodePort === plan.service.spec.ports[i]!.nodePort),
        true,
        'the input is not changed',
      );
    });
  }

  it('does not change the service it was given', () => {
    const s = svc('n', { type: 'NodePort', ports: [{ port: 80 }] });
    const copy = structuredClone(s);
    planServiceAllocation({ service: s, held: held(), ranges, random: zero });
    assert.deepEqual(s, copy);
  });
});

describe('carryOverAllocations', () => {
  const stored = svc('n', {
    type: 'NodePort',
    clusterIP: '10.96.0.7',
    ports: [
      { name: 'a', port: 80, nodePort: 30080 },
      { name: 'b', port: 81, nodePort: 30081 },
    ],
  });
  const table: [string, Record<string, unknown>, Record<string, unknown>][] = [
    [
      'fills an omitted address and node ports, by port name',
      {
        type: 'NodePort',
        ports: [
          { name: 'b', port: 81 },
          { name: 'a', port: 8080 },
        ],
      },
      {
        type: 'NodePort',
        clusterIP: '10.96.0.7',
        clusterIPs: ['10.96.0.7'],
        ports: [
          { name: 'b', port: 81, nodePort: 30081 },
          { name: 'a', port: 8080, nodePort: 30080 },
        ],
      },
    ],
    [
      'keeps what the update says',
      { type: 'NodePort', clusterIP: '10.96.0.8', ports: [{ name: 'a', port: 80, nodePort: 31000 }] },
      { type: 'NodePort', clusterIP: '10.96.0.8', ports: [{ name: 'a', port: 80, nodePort: 31000 }] },
    ],
    [
      'does not give one held port to two ports',
      {
        type: 'NodePort',
        ports: [
          { name: 'x', port: 1, nodePort: 30080 },
          { name: 'a', port: 2 },
        ],
      },
      {
        type: 'NodePort',
        clusterIP: '10.96.0.7',
        clusterIPs: ['10.96.0.7'],
        ports: [
          { name: 'x', port: 1, nodePort: 30080 },
          { name: 'a', port: 2 },
        ],
      },
    ],
    [
      'drops held node ports when the type becomes ClusterIP',
      { type: 'ClusterIP', ports: [{ name: 'a', port: 80, nodePort: 30080 }] },
      { type: 'ClusterIP', clusterIP: '10.96.0.7', clusterIPs: ['10.96.0.7'], ports: [{ name: 'a', port: 80 }] },
    ],
  ];
  for (const [name, spec, want] of table) {
    it(name, () => {
      const out = carryOverAllocations(stored, { spec }) as { spec: Record<string, unknown> };
      const { ipFamilies: _f, ipFamilyPolicy: _p, ...rest } = out.spec;
      assert.deepEqual(rest, want);
    });
  }
  it('leaves a body without a spec alone', () => assert.deepEqual(carryOverAllocations(stored, { metadata: {} }), { metadata: {} }));
});

describe('releasesOf', () => {
  it('frees only the records the service itself holds', () => {
    const s = svc('n', {
      type: 'NodePort',
      clusterIP: '10.96.0.7',
      ports: [
        { name: 'a', port: 80, nodePort: 30080 },
        { name: 'b', port: 81, nodePort: 30081 },
      ],
    });
    assert.deepEqual(releasesOf(s, held({ '10.96.0.7': 'uid-n' }, { 30080: 'uid-n', 30081: 'uid-other' })), { ips: ['10.96.0.7'], ports: [30080] });
  });
});

describe('planRepair', () => {
  it('records what services hold without records, frees records of services that are gone, and warns of clashes', () => {
    const services = [
      svc('a', { clusterIP: '10.96.0.5', type: 'NodePort', ports: [{ port: 80, nodePort: 30080 }] }),
      svc('b', { clusterIP: '10.96.0.6', ports: [{ port: 80 }] }),
      svc('c', { clusterIP: '10.96.0.6', ports: [{ port: 80 }] }),
      svc('d', { clusterIP: '10.0.0.1', ports: [{ port: 80 }] }),
      svc('h', { clusterIP: 'None', selector: { a: 'b' } }),
    ];
    const plan = planRepair(services, held({ '10.96.0.5': 'uid-a', '10.96.0.99': 'uid-gone' }, { 30099: 'uid-gone' }), ranges);
    assert.deepEqual(
      plan.claimIPs.map((c) => `${c.ip}=${c.holder.name}`),
      ['10.96.0.6=b'],
    );
    assert.deepEqual(
      plan.claimPorts.map((c) => `${c.port}=${c.holder.name}`),
      ['30080=a'],
    );
    assert.deepEqual(plan.releaseIPs, ['10.96.0.99']);
    assert.deepEqual(plan.releasePorts, [30099]);
    assert.deepEqual(plan.warnings, [
      'service default/c and service default/b both have cluster IP 10.96.0.6',
      'service default/d has cluster IP 10.0.0.1, outside the service range 10.96.0.0/16',
    ]);
  });
});
