// Endpoints decisions (ready and not ready pods, named ports, deleting pods, selector changes, pods without an IP), the selector index, and the reconciler on a memory store.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { endpointsKind, type Endpoints } from '../../core/api/endpoints.js';
import { podKind, type Pod } from '../../core/api/pod.js';
import { serviceKind, type Service } from '../../core/api/service.js';
import { validateObject } from '../../core/api/validate.js';
import { MemoryStore } from '../../core/store/memory-store.js';
import { waitFor } from '../../core/wait-for.js';
import { LocalClient } from '../api-server/local-client.js';
import { ObjectService } from '../api-server/object-service.js';
import { ensureSystemNamespaces } from '../api-server/server.js';
import { controllerFixture } from './controller-fixture.js';
import { desiredSubsets, EndpointsReconciler, planEndpoints, resolveTargetPort, SelectorIndex } from './endpoints.js';

interface PodOpts {
  labels?: Record<string, string>;
  ip?: string;
  ready?: boolean;
  node?: string;
  ports?: { name?: string; containerPort: number; protocol?: string }[];
  deleting?: boolean;
  phase?: string;
  namespace?: string;
}

function pod(name: string, o: PodOpts = {}): Pod {
  const p = validateObject(podKind, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: o.namespace ?? 'default',
      uid: `uid-${name}`,
      labels: o.labels ?? { app: 'web' },
      ...(o.deleting ? { deletionTimestamp: '2024-01-01T00:00:00Z' } : {}),
    },
    spec: { nodeName: o.node ?? 'n1', containers: [{ name: 'c', image: 'x', ...(o.ports ? { ports: o.ports } : {}) }] },
    status: {
      phase: o.phase ?? 'Running',
      ...(o.ip === '' ? {} : { podIP: o.ip ?? '10.244.1.5' }),
      conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }],
    },
  }) as Pod;
  return p;
}

function service(spec: Record<string, unknown>, name = 'web', labels?: Record<string, string>): Service {
  return validateObject(serviceKind, {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: 'default', uid: 'svc', ...(labels ? { labels } : {}) },
    spec,
  }) as Service;
}

const addr = (name: string, ip: string, node = 'n1') => ({ ip, nodeName: node, targetRef: { kind: 'Pod', namespace: 'default', name, uid: `uid-${name}` } });

describe('desiredSubsets', () => {
  const web = service({ selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] });
  const table: [string, Service, Pod[], unknown][] = [
    [
      'ready pods are addresses, sorted by IP',
      web,
      [pod('b', { ip: '10.244.2.7', node: 'n2' }), pod('a', { ip: '10.244.1.5' })],
      [{ addresses: [addr('a', '10.244.1.5'), addr('b', '10.244.2.7', 'n2')], ports: [{ port: 8080, protocol: 'TCP' }] }],
    ],
    [
      'not-ready pods are listed apart',
      web,
      [pod('a', { ip: '10.244.1.5' }), pod('b', { ip: '10.244.1.6', ready: false })],
      [{ addresses: [addr('a', '10.244.1.5')], notReadyAddresses: [addr('b', '10.244.1.6')], ports: [{ port: 8080, protocol: 'TCP' }] }],
    ],
    [
      'pods without an IP, finished or being deleted are left out',
      web,
      [
        pod('noip', { ip: '' }),
        pod('done', { ip: '10.244.1.7', phase: 'Succeeded' }),
        pod('failed', { ip: '10.244.1.8', phase: 'Failed' }),
        pod('going', { ip: '10.244.1.9', deleting: true }),
      ],
      [],
    ],
    [
      'pods the selector does not match, or in another namespace, are left out',
      web,
      [pod('other', { labels: { app: 'db' } }), pod('elsewhere', { namespace: 'ns2' })],
      [],
    ],
    ['a selector matching nothing gives no subsets', service({ selector: { app: 'nothing' }, ports: [{ port: 80 }] }), [pod('a')], []],
    [
      'publishNotReadyAddresses lists every pod as an address',
      service({ selector: { app: 'web' }, publishNotReadyAddresses: true, ports: [{ port: 80 }] }),
      [pod('a', { ready: false })],
      [{ addresses: [addr('a', '10.244.1.5')], ports: [{ port: 80, protocol: 'TCP' }] }],
    ],
    [
      'a named target port is resolved per pod; pods without the name are left out',
      service({ selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 'http' }] }),
      [
        pod('a', { ip: '10.244.1.5', ports: [{ name: 'http', containerPort: 8080 }] }),
        pod('b', { ip: '10.244.1.6', ports: [{ name: 'http', containerPort: 9090 }] }),
        pod('c', { ip: '10.244.1.7', ports: [{ name: 'web', containerPort: 8080 }] }),
      ],
      [
        { addresses: [addr('a', '10.244.1.5')], ports: [{ name: 'http', port: 8080, protocol: 'TCP' }] },
        { addresses: [addr('b', '10.244.1.6')], ports: [{ name: 'http', port: 9090, protocol: 'TCP' }] },
      ],
    ],
    [
      'a named port must match the protocol too',
      service({ selector: { app: 'web' }, ports: [{ port: 53, protocol: 'UDP', targetPort: 'dns' }] }),
      [pod('a', { ports: [{ name: 'dns', containerPort: 5353 }] })],
      [],
    ],
    [
      'several ports: each with its name and protocol',
      service({
        selector: { app: 'web' },
        ports: [
          { name: 'http', port: 80, targetPort: 8080 },
          { name: 'dns', port: 53, protocol: 'UDP', targetPort: 5353 },
        ],
      }),
      [pod('a')],
      [
        {
          addresses: [addr('a', '10.244.1.5')],
          ports: [
            { name: 'dns', port: 5353, protocol: 'UDP' },
            { name: 'http', port: 8080, protocol: 'TCP' },
          ],
        },
      ],
    ],
    [
      'a headless service without ports lists bare addresses',
      service({ clusterIP: 'None', selector: { app: 'web' } }),
      [pod('a')],
      [{ addresses: [addr('a', '10.244.1.5')] }],
    ],
  ];
  for (const [name, svc, pods, want] of table) it(name, () => assert.deepEqual(desiredSubsets(svc, pods).subsets, want));

  it('reports the pods whose named port is missing', () => {
    const svc = service({ selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 'http' }] });
    assert.deepEqual([...desiredSubsets(svc, [pod('a'), pod('b', { ports: [{ name: 'http', containerPort: 80 }] })]).unresolved], [['a', ['http']]]);
  });

  it('resolves numbers as they are', () => {
    assert.equal(resolveTargetPort(pod('a'), { port: 80, protocol: 'TCP', targetPort: 8080 }), 8080);
    assert.equal(resolveTargetPort(pod('a'), { port: 80, protocol: 'TCP' }), 80);
  });
});

describe('planEndpoints', () => {
  const web = service({ selector: { app: 'web' }, ports: [{ port: 80 }] }, 'web', { tier: 'front' });
  const current = (subsets: unknown[], labels?: Record<string, string>): Endpoints =>
    validateObject(endpointsKind, {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { name: 'web', namespace: 'default', resourceVersion: '7', ...(labels ? { labels } : {}) },
      subsets,
    }) as Endpoints;
  const subsetsOf = (pods: Pod[]) => desiredSubsets(web, pods).subsets;

  it('creates the Endpoints of a new service, with its labels', () => {
    const action = planEndpoints(web, undefined, [pod('a')]);
    assert.equal(action.type, 'create');
    assert.deepEqual((action as Extract<typeof action, { type: 'create' }>).endpoints.metadata, {
      name: 'web',
      namespace: 'default',
      labels: { tier: 'front' },
    });
  });
  it('does nothing when they are already right', () =>
    assert.deepEqual(planEndpoints(web, current(subsetsOf([pod('a')]), { tier: 'front' }), [pod('a')]), { type: 'none' }));
  it('updates them when a pod turns ready, keeping the resourceVersion for the compare-and-swap', () => {
    const action = planEndpoints(web, current(subsetsOf([pod('a', { ready: false })]), { tier: 'front' }), [pod('a')]);
    assert.equal(action.type, 'update');
    const ep = (action as Extract<typeof action, { type: 'update' }>).endpoints;
    assert.equal(ep.metadata.resourceVersion, '7');
    assert.deepEqual(ep.subsets, subsetsOf([pod('a')]));
  });
  it('drops a pod as soon as it is being deleted', () => {
    const action = planEndpoints(web, current(subsetsOf([pod('a'), pod('b', { ip: '10.244.1.6' })]), { tier: 'front' }), [
      pod('a'),
      pod('b', { ip: '10.244.1.6', deleting: true }),
    ]);
    assert.deepEqual((action as Extract<typeof action, { type: 'update' }>).endpoints.subsets, subsetsOf([pod('a')]));
  });
  it('follows a selector change', () => {
    const changed = service({ selector: { app: 'db' }, ports: [{ port: 80 }] }, 'web', { tier: 'front' });
    const action = planEndpoints(changed, current(subsetsOf([pod('a')]), { tier: 'front' }), [pod('a'), pod('d', { labels: { app: 'db' }, ip: '10.244.3.3' })]);
    assert.deepEqual(
      (action as Extract<typeof action, { type: 'update' }>).endpoints.subsets?.[0]?.addresses?.map((a) => a.targetRef?.name),
      ['d'],
    );
  });
  it('deletes the Endpoints of a deleted service', () => assert.deepEqual(planEndpoints(undefined, current([]), []), { type: 'delete' }));
  it('leaves the Endpoints of a service without a selector alone', () => {
    const manual = service({ ports: [{ port: 80 }] });
    assert.deepEqual(planEndpoints(manual, current([{ addresses: [{ ip: '192.168.1.1' }], ports: [{ port: 80, protocol: 'TCP' }] }]), [pod('a')]), {
      type: 'none',
    });
    assert.deepEqual(planEndpoints(manual, undefined, [pod('a')]), { type: 'none' });
  });
});

describe('SelectorIndex', () => {
  it('finds the services whose selectors match a pod, only in its namespace', () => {
    const index = new SelectorIndex();
    const mk = (name: string, selector: Record<string, string> | undefined, ns = 'default') =>
      validateObject(serviceKind, {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name, namespace: ns },
        spec: { ...(selector ? { selector } : {}), ports: [{ port: 80 }] },
      }) as Service;
    index.set(mk('web', { app: 'web' }));
    index.set(mk('web-v2', { app: 'web', version: 'v2' }));
    index.set(mk('db', { app: 'db' }));
    index.set(mk('none', undefined));
    index.set(mk('other-ns', { app: 'web' }, 'ns2'));
    const p = pod('a', { labels: { app: 'web', version: 'v2' } });
    assert.deepEqual(index.servicesFor(p).sort(), ['default/web', 'default/web-v2']);
    assert.deepEqual(index.servicesFor(pod('b', { labels: { app: 'web', version: 'v1' } })), ['default/web']);
    // A selector change moves the service; a delete removes it.
    index.set(mk('web', { app: 'db' }));
    assert.deepEqual(index.servicesFor(p), ['default/web-v2']);
    index.delete('default/web-v2');
    assert.deepEqual(index.servicesFor(p), []);
  });
});

describe('EndpointsReconciler on a memory store', () => {
  it('keeps Endpoints in step with pods and services', async () => {
    const api = new ObjectService({ store: new MemoryStore() });
    await ensureSystemNamespaces(api);
    const controller = new AbortController();
    const { client, informers, run } = controllerFixture(new LocalClient(api));
    const running = run(controller.signal, new EndpointsReconciler({ client, informers }));
    const get = () =>
      api.get(endpointsKind, 'default', 'web').then(
        (e) => e as Endpoints,
        () => undefined,
      );
    const ips = async () =>
      (await get())?.subsets
        ?.flatMap((s) => (s.addresses ?? []).map((a) => a.ip))
        .sort()
        .join(',') ?? 'none';
    try {
      await api.create(serviceKind, 'default', { metadata: { name: 'web' }, spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] } });
      await waitFor(async () => (await get())?.subsets?.length === 0, { description: 'empty endpoints for a service selecting nothing' });
      const body = (p: Pod) => ({ metadata: { name: p.metadata.name, labels: p.metadata.labels }, spec: p.spec });
      for (const [name, ip] of [
        ['a', '10.244.1.5'],
        ['b', '10.244.2.7'],
      ] as const) {
        await api.create(podKind, 'default', body(pod(name)));
        await api.patch(
          podKind,
          'default',
          name,
          { status: { phase: 'Running', podIP: ip, conditions: [{ type: 'Ready', status: 'True' }] } },
          { subresource: 'status' },
        );
      }
      await waitFor(async () => (await ips()) === '10.244.1.5,10.244.2.7', { description: 'both pods listed' });
      await api.patch(podKind, 'default', 'a', { status: { conditions: [{ type: 'Ready', status: 'False' }] } }, { subresource: 'status' });
      await waitFor(async () => (await ips()) === '10.244.2.7', { description: 'a not ready' });
      await api.patch(podKind, 'default', 'b', { metadata: { labels: { app: 'other' } } });
      await waitFor(async () => (await ips()) === 'none' || (await ips()) === '', { description: 'b relabelled out' });
      await api.delete(serviceKind, 'default', 'web');
      await waitFor(async () => (await get()) === undefined, { description: 'endpoints deleted with the service' });
    } finally {
      controller.abort();
      await running;
    }
  });
});
