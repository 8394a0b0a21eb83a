// Golden-file and unit tests of the proxy's rule renderer: chain-name hashes, probabilities, and the whole restore text per case (UPDATE_GOLDEN=1 rewrites testdata/).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Endpoints } from '../../core/api/endpoints.js';
import type { Service } from '../../core/api/service.js';
import {
  chainHash,
  endpointChainName,
  formatProbability,
  renderProxyRules,
  restoreText,
  serviceChainName,
  servicePortName,
  type ProxyRulesInput,
} from './proxy-rules.js';

// Compiled to dist/src/net/proxy/: the golden files stay beside the source.
const TESTDATA = fileURLToPath(new URL('../../../../src/net/proxy/testdata/', import.meta.url));

function service(ns: string, name: string, spec: Partial<Service['spec']> & { ports: Service['spec']['ports'] }): Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { namespace: ns, name },
    spec: { type: 'ClusterIP', sessionAffinity: 'None', ...spec },
    status: {},
  } as Service;
}

function endpoints(ns: string, name: string, subsets: Endpoints['subsets']): Endpoints {
  return { apiVersion: 'v1', kind: 'Endpoints', metadata: { namespace: ns, name }, subsets } as Endpoints;
}

const http = [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' as const }];
const three = endpoints('default', 'web', [
  {
    addresses: [{ ip: '10.244.2.7' }, { ip: '10.244.1.5' }, { ip: '10.244.1.12' }],
    notReadyAddresses: [{ ip: '10.244.3.3' }],
    ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
  },
]);
const base = { clusterCIDR: '10.244.0.0/16' };

const cases: Record<string, ProxyRulesInput> = {
  'clusterip-3-endpoints': { ...base, services: [service('default', 'web', { clusterIP: '10.96.0.20', ports: http })], endpoints: [three] },
  nodeport: {
    ...base,
    services: [
      service('default', 'web', { type: 'NodePort', clusterIP: '10.96.0.20', ports: [{ ...http[0]!, nodePort: 30080 }], externalTrafficPolicy: 'Cluster' }),
    ],
    endpoints: [three],
  },
  'session-affinity': {
    ...base,
    services: [
      service('default', 'web', {
        clusterIP: '10.96.0.20',
        ports: http,
        sessionAffinity: 'ClientIP',
        sessionAffinityConfig: { clientIP: { timeoutSeconds: 600 } },
      }),
    ],
    endpoints: [
      endpoints('default', 'web', [{ addresses: [{ ip: '10.244.1.5' }, { ip: '10.244.2.7' }], ports: [{ name: 'http', port: 8080, protocol: 'TCP' }] }]),
    ],
  },
  'no-endpoints': {
    ...base,
    services: [
      service('default', 'empty', { clusterIP: '10.96.0.30', ports: http }),
      service('default', 'empty-np', { type: 'NodePort', clusterIP: '10.96.0.31', ports: [{ ...http[0]!, nodePort: 30081 }] }),
    ],
    // Not-ready pods do not count; nor does a subset whose port has another name.
    endpoints: [
      endpoints('default', 'empty', [{ notReadyAddresses: [{ ip: '10.244.1.5' }], ports: [{ name: 'http', port: 8080, protocol: 'TCP' }] }]),
      endpoints('default', 'empty-np', [{ addresses: [{ ip: '10.244.1.5' }], ports: [{ name: 'other', port: 8080, protocol: 'TCP' }] }]),
    ],
  },
  udp: {
    ...base,
    services: [service('default', 'syslog', { clusterIP: '10.96.0.40', ports: [{ port: 514, targetPort: 5514, protocol: 'UDP' }] })],
    endpoints: [endpoints('default', 'syslog', [{ addresses: [{ ip: '10.244.1.9' }, { ip: '10.244.2.9' }], ports: [{ port: 5514, protocol: 'UDP' }] }])],
  },
  'named-ports': {
    ...base,
    services: [
      service('shop', 'api', {
        clusterIP: '10.96.0.50',
        ports: [
          { name: 'https', port: 443, targetPort: 'tls', protocol: 'TCP' },
          { name: 'http', port: 80, targetPort: 'web', protocol: 'TCP' },
        ],
      }),
    ],
    endpoints: [
      endpoints('shop', 'api', [
        {
          addresses: [{ ip: '10.244.1.5' }, { ip: '10.244.2.6' }],
          ports: [
            { name: 'http', port: 8080, protocol: 'TCP' },
            { name: 'https', port: 8443, protocol: 'TCP' },
          ],
        },
        // Another pod template, whose named ports map to other numbers.
        {
          addresses: [{ ip: '10.244.3.7' }],
          ports: [
            { name: 'http', port: 9080, protocol: 'TCP' },
            { name: 'https', port: 9443, protocol: 'TCP' },
          ],
        },
      ]),
    ],
  },
  hairpin: {
    ...base,
    services: [service('default', 'self', { clusterIP: '10.96.0.60', ports: [{ port: 80, targetPort: 80, protocol: 'TCP' }] })],
    endpoints: [endpoints('default', 'self', [{ addresses: [{ ip: '10.244.1.5' }], ports: [{ port: 80, protocol: 'TCP' }] }])],
  },
  'kube-dns-local': {
    ...base,
    services: [
      service('kube-system', 'kube-dns', {
        clusterIP: '10.96.0.10',
        ports: [
          { name: 'dns', port: 53, targetPort: 53, protocol: 'UDP' },
          { name: 'dns-tcp', port: 53, targetPort: 53, protocol: 'TCP' },
        ],
      }),
    ],
    endpoints: [],
    localServiceEndpoints: { 'kube-system/kube-dns': [{ ip: '10.244.3.1', port: 53 }] },
  },
  'stale-chains': {
    ...base,
    services: [service('default', 'web', { clusterIP: '10.96.0.20', ports: http })],
    endpoints: [endpoints('default', 'web', [{ addresses: [{ ip: '10.244.1.5' }], ports: [{ name: 'http', port: 8080, protocol: 'TCP' }] }])],
    existingChains: {
      nat: [
        'MINIK8S-SERVICES',
        'MINIK8S-OVERLAY-NAT',
        serviceChainName('default/web:http', 'TCP'),
        endpointChainName('default/web:http', 'TCP', '10.244.1.5:8080'),
        // A removed endpoint and a removed service.
        endpointChainName('default/web:http', 'TCP', '10.244.2.7:8080'),
        serviceChainName('default/gone:http', 'TCP'),
      ],
      filter: ['MINIK8S-SERVICES', 'MINIK8S-OVERLAY-FWD'],
    },
  },
};

function rendered(input: ProxyRulesInput): string {
  const rules = renderProxyRules(input);
  return restoreText('nat', rules.nat) + restoreText('filter', rules.filter);
}

describe('renderProxyRules golden files', () => {
  for (const [name, input] of Object.entries(cases)) {
    it(name, () => {
      const file = `${TESTDATA}${name}.golden`;
      const text = rendered(input);
      if (process.env.UPDATE_GOLDEN === '1') {
        mkdirSync(TESTDATA, { recursive: true });
        writeFileSync(file, text);
      }
      assert.equal(text, readFileSync(file, 'utf8'), `${name}: rendered rules differ from ${file} (UPDATE_GOLDEN=1 to accept)`);
    });
  }
});

describe('renderProxyRules', () => {
  it('gives the same text whatever the order of its inputs', () => {
    const input = cases['named-ports']!;
    const shuffled: ProxyRulesInput = {
      ...input,
      services: input.services.map((s) => ({ ...s, spec: { ...s.spec, ports: [...s.spec.ports].reverse() } })),
      endpoints: input.endpoints.map((e) => ({
        ...e,
        subsets: [...(e.subsets ?? [])].reverse().map((s) => ({ ...s, addresses: [...(s.addresses ?? [])].reverse() })),
      })),
    };
    assert.equal(rendered(shuffled), rendered(input));
    const two = { ...base, services: [...cases['no-endpoints']!.services, ...cases.udp!.services], endpoints: [...cases.udp!.endpoints] };
    assert.equal(rendered({ ...two, services: [...two.services].reverse() }), rendered(two));
  });

  it('counts services, ports and endpoints, and deletes only stale SVC and SEP chains', () => {
    const rules = renderProxyRules(cases['stale-chains']!);
    assert.deepEqual(
      rules.nat.deleteChains,
      [endpointChainName('default/web:http', 'TCP', '10.244.2.7:8080'), serviceChainName('default/gone:http', 'TCP')].sort(),
    );
    assert.deepEqual(rules.filter.deleteChains, []);
    assert.deepEqual(rules.stats, { services: 1, servicePorts: 1, endpoints: 1, withoutEndpoints: 0, staleChains: 2 });
    assert.deepEqual(renderProxyRules(cases['no-endpoints']!).stats, { services: 2, servicePorts: 2, endpoints: 0, withoutEndpoints: 2, staleChains: 0 });
  });

  it('skips headless services and services with no cluster IP yet', () => {
    const rules = renderProxyRules({
      ...base,
      services: [service('default', 'headless', { clusterIP: 'None', ports: http }), service('default', 'pending', { ports: http })],
      endpoints: [],
    });
    assert.equal(rules.stats.services, 0);
    assert.equal(rules.nat.chains.filter((c) => c.startsWith('MINIK8S-SVC-')).length, 0);
  });

  it('sends every endpoint its share over many draws of 1/(n-i)', () => {
    for (const n of [1, 2, 3, 5, 10]) {
      const shares = Array.from({ length: n }, (_, i) => {
        // P(reach i) * P(pick i | reached) = prod_{j<i}(1 - 1/(n-j)) * 1/(n-i)
        let reach = 1;
        for (let j = 0; j < i; j++) reach *= 1 - Number(formatProbability(j, n));
        return i === n - 1 ? reach : reach * Number(formatProbability(i, n));
      });
      for (const s of shares) assert.ok(Math.abs(s - 1 / n) < 1e-8, `n=${n}: ${shares}`);
    }
  });
});

describe('chain names and probabilities', () => {
  it("hashes as kube-proxy does: base32 of SHA-256, 16 characters, fitting iptables' 28", () => {
    // base32(sha256("")) starts with 4OYMIQUY7QOBJGX3 (e3b0c442...).
    assert.equal(chainHash(''), '4OYMIQUY7QOBJGX3');
    const svc = serviceChainName('default/web:http', 'TCP');
    assert.match(svc, /^MINIK8S-SVC-[A-Z2-7]{16}$/);
    assert.equal(svc.length, 28);
    assert.notEqual(serviceChainName('default/web:http', 'UDP'), svc);
    assert.notEqual(endpointChainName('default/web:http', 'TCP', '10.244.1.5:8080'), endpointChainName('default/web:http', 'TCP', '10.244.1.5:8081'));
    assert.equal(servicePortName('default', 'web', undefined), 'default/web');
    assert.equal(servicePortName('default', 'web', 'http'), 'default/web:http');
  });

  const probabilities: [number, number, string][] = [
    [0, 2, '0.5000000000'],
    [0, 3, '0.3333333333'],
    [1, 3, '0.5000000000'],
    [0, 7, '0.1428571429'],
    [5, 7, '0.5000000000'],
    [0, 1000, '0.0010000000'],
  ];
  for (const [i, n, want] of probabilities) it(`endpoint ${i} of ${n}: ${want}`, () => assert.equal(formatProbability(i, n), want));
});
