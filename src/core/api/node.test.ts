// Node, Endpoints and Event: schemas and their columns.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { endpointsKind, formatEndpoints, type Endpoints } from './endpoints.js';
import { eventKind, type Event } from './event.js';
import { nodeKind, type Node } from './node.js';
import { validateObject } from './validate.js';

const node = (spec: object, status: object, labels: Record<string, string> = {}) =>
  validateObject(nodeKind, { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1', labels }, spec, status }) as Node;
const cols = (def: typeof nodeKind, obj: unknown) => Object.fromEntries(def.columns!.map((c) => [c.name, c.value(obj as never)]));

describe('node', () => {
  const ready = (status: string) => ({ conditions: [{ type: 'Ready', status }] });
  const cases: [string, object, object, string][] = [
    ['ready', {}, ready('True'), 'Ready'],
    ['not ready', {}, ready('False'), 'NotReady'],
    ['stopped heartbeating (Ready=Unknown)', {}, ready('Unknown'), 'NotReady'],
    ['never reported', {}, {}, 'Unknown'],
    ['lost and cordoned', { unschedulable: true }, ready('Unknown'), 'NotReady,SchedulingDisabled'],
    ['cordoned', { unschedulable: true }, ready('True'), 'Ready,SchedulingDisabled'],
  ];
  for (const [name, spec, status, want] of cases) it(`STATUS ${name}`, () => assert.equal(cols(nodeKind, node(spec, status)).STATUS, want));
  it('prints roles, version and wide columns', () => {
    const n = node(
      { podCIDR: '10.244.1.0/24', taints: [{ key: 'k', effect: 'NoSchedule' }] },
      {
        capacity: { cpu: '4', memory: '8Gi', pods: '110' },
        addresses: [
          { type: 'Hostname', address: 'n1' },
          { type: 'InternalIP', address: '192.168.1.10' },
        ],
        nodeInfo: { kubeletVersion: 'v0.1.0', osImage: 'Debian', kernelVersion: '6.1', containerRuntimeVersion: 'docker://27' },
        daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      },
      { 'node-role.kubernetes.io/control-plane': '', 'node-role.kubernetes.io/worker': '' },
    );
    assert.deepEqual(cols(nodeKind, n), {
      STATUS: 'Unknown',
      ROLES: 'control-plane,worker',
      VERSION: 'v0.1.0',
      'INTERNAL-IP': '192.168.1.10',
      'OS-IMAGE': 'Debian',
      'KERNEL-VERSION': '6.1',
      'CONTAINER-RUNTIME': 'docker://27',
    });
  });
  it('rejects a bad taint effect and a bad capacity', () => {
    assert.throws(() => node({ taints: [{ key: 'k', effect: 'Never' }] }, {}), /spec\.taints\[0\]\.effect: Unsupported value/);
    assert.throws(() => node({}, { capacity: { cpu: 'four' } }), /status\.capacity\[cpu\]/);
  });
});

describe('endpoints', () => {
  const addr = (ip: string) => ({ ip });
  const cases: [string, object[] | undefined, string][] = [
    ['none', undefined, '<none>'],
    ['one', [{ addresses: [addr('10.0.0.1')], ports: [{ port: 80 }] }], '10.0.0.1:80'],
    ['no ports', [{ addresses: [addr('10.0.0.1')] }], '10.0.0.1'],
    [
      'more than three',
      [{ addresses: ['1', '2', '3', '4', '5'].map((i) => addr(`10.0.0.${i}`)), ports: [{ port: 80 }] }],
      '10.0.0.1:80,10.0.0.2:80,10.0.0.3:80 + 2 more...',
    ],
    ['only not ready', [{ notReadyAddresses: [addr('10.0.0.1')], ports: [{ port: 80 }] }], '<none>'],
  ];
  for (const [name, subsets, want] of cases) {
    it(name, () => {
      const ep = validateObject(endpointsKind, {
        apiVersion: 'v1',
        kind: 'Endpoints',
        metadata: { name: 'web' },
        ...(subsets ? { subsets } : {}),
      }) as Endpoints;
      assert.equal(formatEndpoints(ep.subsets), want);
      assert.equal(cols(endpointsKind, ep).ENDPOINTS, want);
    });
  }
  it('defaults port protocol and rejects a spec', () => {
    const ep = validateObject(endpointsKind, {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { name: 'web' },
      subsets: [{ addresses: [{ ip: '10.0.0.1', targetRef: { kind: 'Pod', name: 'p' } }], ports: [{ name: 'http', port: 80 }] }],
    }) as Endpoints;
    assert.equal(ep.subsets![0].ports![0].protocol, 'TCP');
    assert.throws(() => validateObject(endpointsKind, { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'web' }, spec: {} }), /unknown field "spec"/);
  });
});

describe('event', () => {
  it('validates and prints TYPE, REASON, OBJECT, MESSAGE', () => {
    const ev = validateObject(eventKind, {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'web.1' },
      involvedObject: { kind: 'Pod', name: 'web', namespace: 'default', uid: 'u' },
      reason: 'BackOff',
      message: 'Back-off restarting\nfailed container',
      type: 'Warning',
      count: 3,
      source: { component: 'kubelet', host: 'n1' },
      firstTimestamp: '2026-01-01T00:00:00Z',
      lastTimestamp: '2026-01-01T00:01:00Z',
    }) as Event;
    assert.deepEqual(cols(eventKind, ev), { TYPE: 'Warning', REASON: 'BackOff', OBJECT: 'pod/web', MESSAGE: 'Back-off restarting failed container' });
  });
  it('requires involvedObject and a known type', () => {
    assert.throws(() => validateObject(eventKind, { apiVersion: 'v1', kind: 'Event', metadata: { name: 'e' } }), /involvedObject: Required value/);
    assert.throws(
      () => validateObject(eventKind, { apiVersion: 'v1', kind: 'Event', metadata: { name: 'e' }, involvedObject: {}, type: 'Error' }),
      /type: Unsupported value/,
    );
  });
});
