// The API server's and the registry's certificates: the machine's addresses and name, the service names and IP, --tls-san extras.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { certificateInfo } from '../../core/pki/pki.js';
import { prepareClusterTls, servingSans } from './cluster-tls.js';

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

test('the registry gets its own serving certificate, for the same names and addresses as the API server, kept across starts', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'minik8s-cluster-tls-'));
  try {
    const tls = await prepareClusterTls({ dataDir, serviceCIDR: '10.96.0.0/16', tlsSans: ['registry.example'] });
    assert.equal(tls.registry.certPath, join(dataDir, 'pki', 'registry.crt'));
    assert.equal(statSync(tls.registry.keyPath).mode & 0o777, 0o600);
    const registry = certificateInfo(tls.registry.certPem);
    const api = certificateInfo(tls.serving.certPem);
    assert.equal(registry.commonName, 'minik8s-registry');
    assert.deepEqual(registry.dnsNames, api.dnsNames);
    assert.deepEqual(registry.ipAddresses, api.ipAddresses);
    assert.ok(registry.dnsNames.includes('registry.example'));
    assert.ok(registry.ipAddresses.includes('127.0.0.1'));
    const again = await prepareClusterTls({ dataDir, serviceCIDR: '10.96.0.0/16', tlsSans: ['registry.example'] });
    assert.equal(again.registry.certPem, tls.registry.certPem, 'not reissued while its names hold');
    assert.equal(readFileSync(tls.registry.certPath, 'utf8'), tls.registry.certPem);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
