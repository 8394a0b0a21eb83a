// Unit tests for the cluster zone: names built from Services, Endpoints and DNS objects, and lookups in every spelling.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Dns } from '../../core/api/dns.js';
import type { Endpoints } from '../../core/api/endpoints.js';
import type { Service } from '../../core/api/service.js';
import { buildClusterZone, GATEWAY_SERVICE, lookupName, normalizeName, type LookupResult } from './cluster-zone.js';

function svc(namespace: string, name: string, clusterIP: string): Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { namespace, name },
    spec: { type: 'ClusterIP', clusterIP, ports: [], sessionAffinity: 'None' },
    status: {},
  } as Service;
}

function dns(namespace: string, name: string, host: string): Dns {
  return {
    apiVersion: 'minik8s.io/v1',
    kind: 'DNS',
    metadata: { namespace, name },
    spec: { host, paths: [{ path: '/a', serviceName: 's', servicePort: 80 }] },
    status: {},
  } as Dns;
}

const headlessEndpoints: Endpoints = {
  apiVersion: 'v1',
  kind: 'Endpoints',
  metadata: { namespace: 'db', name: 'pg' },
  subsets: [{ addresses: [{ ip: '10.244.2.7' }, { ip: '10.244.1.5' }], notReadyAddresses: [{ ip: '10.244.3.9' }], ports: [{ port: 5432, protocol: 'TCP' }] }],
} as Endpoints;

const zone = buildClusterZone({
  services: [
    svc('default', 'web', '10.96.0.20'),
    svc('default', 'pending', ''),
    svc('db', 'pg', 'None'),
    svc(GATEWAY_SERVICE.namespace, GATEWAY_SERVICE.name, '10.96.0.30'),
  ],
  endpoints: [headlessEndpoints],
  dnses: [dns('default', 'shop', 'Example.COM'), dns('default', 'inner', 'web.default.svc.cluster.local')],
});

const found = (addresses: string[], zoneName = 'cluster.local'): LookupResult => ({ kind: 'found', addresses, zone: zoneName });
const nx: LookupResult = { kind: 'nxdomain', zone: 'cluster.local' };

describe('normalizeName', () => {
  for (const [input, want] of [
    ['Web.Default.SVC.cluster.local.', 'web.default.svc.cluster.local'],
    ['a.', 'a'],
    ['A', 'a'],
    ['.', ''],
  ] as const) {
    it(`${input} -> ${want}`, () => assert.equal(normalizeName(input), want));
  }
});

describe('lookupName', () => {
  const cases: [string, LookupResult][] = [
    ['web.default.svc.cluster.local', found(['10.96.0.20'])],
    ['web.default.svc.cluster.local.', found(['10.96.0.20'])],
    ['WEB.Default.Svc.Cluster.Local', found(['10.96.0.20'])],
    ['pending.default.svc.cluster.local', found([])],
    ['pg.db.svc.cluster.local', found(['10.244.1.5', '10.244.2.7'])],
    ['example.com', found(['10.96.0.30'], 'example.com')],
    ['EXAMPLE.com.', found(['10.96.0.30'], 'example.com')],
    ['minik8s-gateway.kube-system.svc.cluster.local', found(['10.96.0.30'])],
    // Parents of existing names exist with no records.
    ['default.svc.cluster.local', found([])],
    ['svc.cluster.local', found([])],
    ['cluster.local', found([])],
    ['pod.cluster.local', found([])],
    // Pod records: the address spelled with dashes.
    ['10-244-1-5.default.pod.cluster.local', found(['10.244.1.5'])],
    ['10-244-1-500.default.pod.cluster.local', nx],
    // The search path's attempts (`web` from namespace db, `web.default` from anywhere) reach us fully qualified.
    ['web.db.svc.cluster.local', nx],
    ['web.default.db.svc.cluster.local', nx],
    ['web.default.svc.svc.cluster.local', nx],
    ['web.svc.cluster.local', nx],
    ['web.cluster.local', nx],
    ['example.com.default.svc.cluster.local', nx],
    ['nope.cluster.local', nx],
    // Anything else goes upstream, including names under a DNS object's host.
    ['example.org', { kind: 'forward' }],
    ['www.example.com', { kind: 'forward' }],
    ['cluster.localhost', { kind: 'forward' }],
    ['local', { kind: 'forward' }],
  ];
  for (const [name, want] of cases) it(`${name}`, () => assert.deepEqual(lookupName(zone, name), want));

  it('does not let a DNS host shadow a service name', () => {
    assert.deepEqual(lookupName(zone, 'web.default.svc.cluster.local'), found(['10.96.0.20']));
  });

  it('answers a DNS host with no address while the gateway service has no ClusterIP yet', () => {
    const z = buildClusterZone({ services: [], dnses: [dns('default', 'shop', 'example.com')] });
    assert.deepEqual(lookupName(z, 'example.com'), found([], 'example.com'));
  });

  it('denies nothing under the domain before the caches listed (SERVFAIL, not a cached NXDOMAIN)', () => {
    const z = buildClusterZone({ services: [], synced: false });
    assert.deepEqual(lookupName(z, 'web.default.svc.cluster.local'), { kind: 'unavailable' });
    assert.deepEqual(lookupName(z, 'example.org'), { kind: 'forward' });
  });

  it('serves another cluster domain', () => {
    const z = buildClusterZone({ domain: 'Corp.Internal.', services: [svc('a', 'b', '10.96.1.1')] });
    assert.deepEqual(lookupName(z, 'b.a.svc.corp.internal'), found(['10.96.1.1'], 'corp.internal'));
    assert.deepEqual(lookupName(z, 'b.a.svc.cluster.local'), { kind: 'forward' });
  });
});
