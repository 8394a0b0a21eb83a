// The API server certificate's names: the machine's addresses and name, the service names and IP, --tls-san extras.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { servingSans } from './cluster-tls.js';

test('the serving SANs cover loopback, every interface address, the host name, the service names and IP, and extras', () => {
  const sans = servingSans({
    serviceCIDR: '10.100.0.0/16',
    extra: ['api.example', '192.0.2.7'],
    host: 'box',
    interfaces: {
      eth0: [{ address: '10.0.0.5', family: 'IPv4', internal: false, netmask: '', mac: '', cidr: null }],
      eth1: [{ address: 'fe80::1', family: 'IPv6', internal: false, netmask: '', mac: '', cidr: null, scopeid: 2 }],
      lo: [{ address: '::1', family: 'IPv6', internal: true, netmask: '', mac: '', cidr: null, scopeid: 0 }],
    },
  });
  assert.deepEqual(sans.ipAddresses, ['10.0.0.5', '10.100.0.1', '127.0.0.1', '192.0.2.7', '::1']);
  assert.deepEqual(sans.dnsNames, [
    'api.example',
    'box',
    'kubernetes',
    'kubernetes.default',
    'kubernetes.default.svc',
    'kubernetes.default.svc.cluster.local',
    'localhost',
  ]);
});
