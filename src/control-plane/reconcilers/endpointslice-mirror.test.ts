// EndpointSlice mirror: the slices an Endpoints object stands for, and the plan from what exists to them.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Endpoints } from '../../core/api/endpoints.js';
import { endpointSliceKind, MANAGED_BY_LABEL, SERVICE_NAME_LABEL, type EndpointSlice } from '../../core/api/endpointslice.js';
import type { Service } from '../../core/api/service.js';
import { validateObject } from '../../core/api/validate.js';
import { desiredSlices, MANAGED_BY, planSlices } from './endpointslice-mirror.js';

const service = { metadata: { name: 'web', namespace: 'default', uid: 'svc-uid', labels: { app: 'web' } } } as unknown as Service;
const ref = (name: string) => ({ kind: 'Pod', namespace: 'default', name, uid: `${name}-uid` });
const endpoints: Endpoints = {
  apiVersion: 'v1',
  kind: 'Endpoints',
  metadata: { name: 'web', namespace: 'default' },
  subsets: [
    {
      addresses: [{ ip: '10.244.1.5', nodeName: 'n1', targetRef: ref('a') }],
      notReadyAddresses: [{ ip: '10.244.2.7', nodeName: 'n2', targetRef: ref('b') }],
      ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
    },
    { addresses: [{ ip: '10.244.1.6', targetRef: ref('c') }], ports: [{ port: 9090, protocol: 'TCP' }] },
  ],
};

describe('desiredSlices', () => {
  it('makes one slice per port set, ready addresses ready and serving, the rest neither, labelled and owned as Kubernetes does', () => {
    const slices = desiredSlices(endpoints, service);
    assert.equal(slices.length, 2);
    const http = slices.find((s) => s.ports?.[0]?.port === 8080)!;
    assert.equal(http.addressType, 'IPv4');
    assert.deepEqual(http.endpoints, [
      { addresses: ['10.244.1.5'], conditions: { ready: true, serving: true, terminating: false }, nodeName: 'n1', targetRef: ref('a') },
      { addresses: ['10.244.2.7'], conditions: { ready: false, serving: false, terminating: false }, nodeName: 'n2', targetRef: ref('b') },
    ]);
    assert.deepEqual(http.metadata.labels, { app: 'web', [SERVICE_NAME_LABEL]: 'web', [MANAGED_BY_LABEL]: MANAGED_BY });
    assert.deepEqual(http.metadata.ownerReferences, [
      { apiVersion: 'v1', kind: 'Service', name: 'web', uid: 'svc-uid', controller: true, blockOwnerDeletion: true },
    ]);
    assert.match(http.metadata.name!, /^web-[0-9a-f]{5}$/);
    // What the API server would store: the schema accepts it.
    for (const s of slices) validateObject(endpointSliceKind, s);
  });

  it('keeps one empty slice for an Endpoints without addresses, and names slices stably', () => {
    const empty = desiredSlices({ ...endpoints, subsets: [] }, service);
    assert.equal(empty.length, 1);
    assert.deepEqual(empty[0]!.endpoints, []);
    assert.deepEqual(
      desiredSlices(endpoints, service).map((s) => s.metadata.name),
      desiredSlices(structuredClone(endpoints), service).map((s) => s.metadata.name),
    );
  });
});

describe('planSlices', () => {
  const wanted = desiredSlices(endpoints, service);
  const stored = (s: EndpointSlice): EndpointSlice => ({ ...s, metadata: { ...s.metadata, uid: `${s.metadata.name}-uid`, resourceVersion: '7' } });

  it('creates what is missing and leaves equal slices alone', () => {
    assert.deepEqual(planSlices(endpoints, service, []), { create: wanted, update: [], delete: [] });
    assert.deepEqual(planSlices(endpoints, service, wanted.map(stored)), { create: [], update: [], delete: [] });
  });

  it('updates a slice whose endpoints changed, keeping its server metadata', () => {
    const changed = structuredClone(endpoints);
    changed.subsets![0]!.notReadyAddresses = [];
    changed.subsets![0]!.addresses!.push({ ip: '10.244.2.7', nodeName: 'n2', targetRef: ref('b') });
    const plan = planSlices(changed, service, wanted.map(stored));
    assert.equal(plan.update.length, 1);
    assert.equal(plan.update[0]!.metadata.resourceVersion, '7');
    assert.deepEqual(
      plan.update[0]!.endpoints!.map((e) => e.conditions?.ready),
      [true, true],
    );
  });

  it('deletes slices of port sets that went, and all of them when the Endpoints went', () => {
    const onePort = { ...endpoints, subsets: [endpoints.subsets![1]!] };
    const plan = planSlices(onePort, service, wanted.map(stored));
    assert.equal(plan.delete.length, 1);
    assert.deepEqual(planSlices(undefined, undefined, wanted.map(stored)).delete, wanted.map((s) => s.metadata.name).sort());
  });
});
