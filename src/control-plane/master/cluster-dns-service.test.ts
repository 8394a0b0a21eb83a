// The master's kube-dns Service: made at the DNS address when missing, left alone when present.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { serviceKind, type Service } from '../../core/api/service.js';
import { MemoryStore } from '../../core/store/memory-store.js';
import { ObjectService } from '../api-server/object-service.js';
import { ensureSystemNamespaces } from '../api-server/server.js';
import { ServiceAllocator } from '../api-server/service-allocator.js';
import { ensureClusterDnsService } from './cluster-dns-service.js';

describe('ensureClusterDnsService', () => {
  it('creates kube-system/kube-dns at the tenth address once, and leaves an existing one as it is', async () => {
    const store = new MemoryStore();
    const ranges = { serviceCIDR: '10.100.0.0/24', nodePorts: { min: 30000, max: 32767 } };
    const api = new ObjectService({ store, allocators: new Map([[serviceKind, new ServiceAllocator({ store, ranges })]]) });
    await ensureSystemNamespaces(api);
    const created = await ensureClusterDnsService({ service: api, serviceCIDR: ranges.serviceCIDR });
    assert.equal(created?.spec.clusterIP, '10.100.0.10');
    assert.equal(created?.spec.selector, undefined);
    assert.deepEqual(
      created?.spec.ports.map((p) => `${p.name} ${p.port}/${p.protocol}`),
      ['dns 53/UDP', 'dns-tcp 53/TCP'],
    );
    await api.patch(serviceKind, 'kube-system', 'kube-dns', { metadata: { labels: { 'k8s-app': 'kube-dns', edited: 'yes' } } });
    const again = await ensureClusterDnsService({ service: api, serviceCIDR: ranges.serviceCIDR });
    assert.equal(again?.metadata.labels?.edited, 'yes');
    assert.equal((await api.list(serviceKind, 'kube-system')).items.length, 1);
    assert.equal(((await api.get(serviceKind, 'kube-system', 'kube-dns')) as Service).spec.clusterIP, '10.100.0.10');
  });
});
