// The allocator inside the object service, on the memory store: records written with the Service, refused requests writing nothing, frees on update and delete, concurrent creates never sharing.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { serviceKind, type Service } from '../../core/api/service.js';
import { InvalidError } from '../../core/errors.js';
import { MemoryStore } from '../../core/store/memory-store.js';
import { ObjectService } from './object-service.js';
import { NODE_PORT_PREFIX, SERVICE_IP_PREFIX, ServiceAllocator, type AllocationRecord } from './service-allocator.js';
import { ensureSystemNamespaces } from './server.js';

async function setup(random?: () => number) {
  const store = new MemoryStore();
  const allocator = new ServiceAllocator({ store, ranges: { serviceCIDR: '10.96.0.0/16', nodePorts: { min: 30000, max: 32767 } }, random });
  const api = new ObjectService({ store, allocators: new Map([[serviceKind, allocator]]) });
  await ensureSystemNamespaces(api);
  const records = async () => ({
    ips: (await store.list<AllocationRecord>(SERVICE_IP_PREFIX)).items.map((e) => `${e.value.value}=${e.value.name}`),
    ports: (await store.list<AllocationRecord>(NODE_PORT_PREFIX)).items.map((e) => `${e.value.value}=${e.value.name}`),
  });
  const create = (name: string, spec: Record<string, unknown>, namespace = 'default') =>
    api.create(serviceKind, namespace, { metadata: { name }, spec }) as Promise<Service>;
  return { store, api, records, create };
}

/** The causes of a 422, as `field: message`. */
async function refused(p: Promise<unknown>): Promise<string[]> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(err instanceof InvalidError, `expected a 422, got ${String(err)}`);
  return (err.details.causes ?? []).map((c) => `${c.field}: ${c.message}`);
}

describe('ServiceAllocator in the object service', () => {
  it('records the address and node ports in the same write as the service', async () => {
    const { create, records, store } = await setup(() => 0);
    const before = await store.currentRevision();
    const s = await create('web', { type: 'NodePort', ports: [{ port: 80 }] });
    assert.equal(s.spec.clusterIP, '10.96.0.2');
    assert.deepEqual(s.spec.clusterIPs, ['10.96.0.2']);
    assert.equal(s.spec.ports[0]!.nodePort, 30000);
    assert.equal(await store.currentRevision(), before + 1, 'one revision: one transaction');
    assert.deepEqual(await records(), { ips: ['10.96.0.2=web'], ports: ['30000=web'] });
  });

  it('gives 50 concurrent creates 50 different addresses', async () => {
    const { create, records } = await setup();
    const made = await Promise.all(Array.from({ length: 50 }, (_, i) => create(`s${i}`, { type: 'NodePort', ports: [{ port: 80 }] })));
    assert.equal(new Set(made.map((s) => s.spec.clusterIP)).size, 50);
    assert.equal(new Set(made.map((s) => s.spec.ports[0]!.nodePort)).size, 50);
    assert.equal((await records()).ips.length, 50);
  });

  it('moves on when the picked address is taken between read and write', async () => {
    // Every create starts its search at the same place: all but one lose each race and plan again.
    const { create } = await setup(() => 0);
    const made = await Promise.all(Array.from({ length: 8 }, (_, i) => create(`r${i}`, { ports: [{ port: 80 }] })));
    assert.equal(new Set(made.map((s) => s.spec.clusterIP)).size, 8);
  });

  it('refuses requests it cannot grant with Kubernetes causes, writing nothing', async () => {
    const { create, records, store } = await setup();
    await create('a', { clusterIP: '10.96.1.1', type: 'NodePort', ports: [{ port: 80, nodePort: 30080 }] });
    const before = await store.currentRevision();
    const table: [string, Record<string, unknown>, string[]][] = [
      ['a taken address', { clusterIP: '10.96.1.1', ports: [{ port: 80 }] }, ['spec.clusterIP: Invalid value: "10.96.1.1": provided IP is already allocated']],
      [
        'an address out of range',
        { clusterIP: '192.168.0.1', ports: [{ port: 80 }] },
        ['spec.clusterIP: Invalid value: "192.168.0.1": provided IP is not in the valid range. The range of valid IPs is 10.96.0.0/16'],
      ],
      [
        'the DNS address',
        { clusterIP: '10.96.0.10', ports: [{ port: 80 }] },
        ['spec.clusterIP: Invalid value: "10.96.0.10": provided IP is reserved for the kube-system/kube-dns service'],
      ],
      [
        'a taken node port',
        { type: 'NodePort', ports: [{ port: 80, nodePort: 30080 }] },
        ['spec.ports[0].nodePort: Invalid value: 30080: provided port is already allocated'],
      ],
      [
        'a node port out of range',
        { type: 'NodePort', ports: [{ port: 80, nodePort: 40000 }] },
        ['spec.ports[0].nodePort: Invalid value: 40000: provided port is not in the valid range. The range of valid ports is 30000-32767'],
      ],
    ];
    for (const [what, spec, want] of table) assert.deepEqual(await refused(create('b', spec)), want, what);
    // Invalid objects are refused before anything is allocated.
    await refused(create('c', { type: 'NodePort', ports: [] }));
    assert.equal(await store.currentRevision(), before, 'nothing was written');
    assert.deepEqual(await records(), { ips: ['10.96.1.1=a'], ports: ['30080=a'] });
  });

  it('keeps the address and ports on updates, refuses changing them, and frees ports when the type goes back to ClusterIP', async () => {
    const { api, create, records } = await setup();
    const s = await create('n', { type: 'NodePort', ports: [{ name: 'http', port: 80 }] });
    const ip = s.spec.clusterIP!;
    const port = s.spec.ports[0]!.nodePort!;
    // A PUT that leaves both out keeps both (kubectl replace of the original manifest).
    const replaced = (await api.replace(serviceKind, 'default', 'n', {
      metadata: { name: 'n' },
      spec: { type: 'NodePort', selector: { app: 'x' }, ports: [{ name: 'http', port: 80 }] },
    })) as Service;
    assert.equal(replaced.spec.clusterIP, ip);
    assert.equal(replaced.spec.ports[0]!.nodePort, port);
    assert.deepEqual(await refused(api.patch(serviceKind, 'default', 'n', { spec: { clusterIP: '10.96.9.9' } })), [
      'spec.clusterIP: Invalid value: "10.96.9.9": field is immutable',
    ]);
    assert.deepEqual(await refused(api.patch(serviceKind, 'default', 'n', { spec: { ports: [{ name: 'http', port: 80, nodePort: 31111 }] } })), [
      `spec.ports[0].nodePort: Invalid value: 31111: field is immutable`,
    ]);
    // A new port gets its own node port; back to ClusterIP frees them all.
    const two = (await api.patch(serviceKind, 'default', 'n', {
      spec: {
        ports: [
          { name: 'http', port: 80 },
          { name: 'https', port: 443 },
        ],
      },
    })) as Service;
    assert.equal(two.spec.ports[0]!.nodePort, port);
    assert.ok(two.spec.ports[1]!.nodePort);
    assert.equal((await records()).ports.length, 2);
    const back = (await api.patch(serviceKind, 'default', 'n', { spec: { type: 'ClusterIP' } })) as Service;
    assert.deepEqual(
      back.spec.ports.map((p) => p.nodePort),
      [undefined, undefined],
    );
    assert.equal(back.spec.clusterIP, ip);
    assert.deepEqual(await records(), { ips: [`${ip}=n`], ports: [] });
    // And to NodePort again: new ports.
    const again = (await api.patch(serviceKind, 'default', 'n', { spec: { type: 'NodePort' } })) as Service;
    assert.ok(again.spec.ports.every((p) => p.nodePort));
    assert.equal((await records()).ports.length, 2);
  });

  it('frees everything on delete, also when finalizers held the service', async () => {
    const { api, create, records } = await setup();
    await create('a', { clusterIP: '10.96.3.3', type: 'NodePort', ports: [{ port: 80, nodePort: 30333 }] });
    await api.delete(serviceKind, 'default', 'a');
    assert.deepEqual(await records(), { ips: [], ports: [] });
    const b = await create('b', { clusterIP: '10.96.3.3', type: 'NodePort', ports: [{ port: 80, nodePort: 30333 }] });
    assert.equal(b.spec.clusterIP, '10.96.3.3', 'a freed address can be asked for again');
    await api.patch(serviceKind, 'default', 'b', { metadata: { finalizers: ['example.com/hold'] } });
    await api.delete(serviceKind, 'default', 'b');
    assert.deepEqual(await records(), { ips: ['10.96.3.3=b'], ports: ['30333=b'] }, 'held while the finalizer is there');
    await api.patch(serviceKind, 'default', 'b', { metadata: { finalizers: null } });
    assert.deepEqual(await records(), { ips: [], ports: [] });
  });

  it('repairs at start: records for services stored without them, none for services that are gone', async () => {
    const { store, records, create } = await setup();
    // A store written before allocation records existed: services straight through a plain object service.
    const plain = new ObjectService({ store });
    await plain.create(serviceKind, 'default', {
      metadata: { name: 'old' },
      spec: { clusterIP: '10.96.7.7', type: 'NodePort', ports: [{ port: 80, nodePort: 30777 }] },
    });
    await store.create(`${SERVICE_IP_PREFIX}10.96.8.8`, { namespace: 'default', name: 'gone', uid: 'gone', value: '10.96.8.8', allocatedAt: '' });
    const allocator = new ServiceAllocator({ store, ranges: { serviceCIDR: '10.96.0.0/16', nodePorts: { min: 30000, max: 32767 } } });
    assert.deepEqual(await allocator.repair(), [
      'recorded cluster IP 10.96.7.7 of service default/old',
      'recorded node port 30777 of service default/old',
      'freed cluster IP 10.96.8.8 (its service is gone)',
    ]);
    assert.deepEqual(await records(), { ips: ['10.96.7.7=old'], ports: ['30777=old'] });
    assert.deepEqual(await allocator.repair(), [], 'a second run has nothing to do');
    assert.deepEqual(await refused(create('new', { clusterIP: '10.96.7.7', ports: [{ port: 80 }] })), [
      'spec.clusterIP: Invalid value: "10.96.7.7": provided IP is already allocated',
    ]);
  });

  it('gives headless services nothing', async () => {
    const { create, records } = await setup();
    const h = await create('h', { clusterIP: 'None', selector: { app: 'x' } });
    assert.equal(h.spec.clusterIP, 'None');
    assert.deepEqual(await records(), { ips: [], ports: [] });
  });
});
