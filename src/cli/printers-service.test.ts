// `get svc -o wide` and `get ep`: the SELECTOR and ENDPOINTS columns as kubectl prints them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { endpointsKind } from '../core/api/endpoints.js';
import type { KubeObject } from '../core/api/meta.js';
import { serviceKind } from '../core/api/service.js';
import { printTable } from './printers.js';

const now = new Date('2026-11-26T08:00:00Z');
const created = '2026-11-26T07:55:00Z';

const service = (name: string, selector: Record<string, string> | undefined) =>
  ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: 'default', creationTimestamp: created },
    spec: { type: 'ClusterIP', clusterIP: '10.96.0.10', selector, ports: [{ port: 80, protocol: 'TCP', targetPort: 8080 }] },
  }) as unknown as KubeObject;

describe('service and endpoints tables', () => {
  it('adds SELECTOR after AGE under -o wide, <none> for a service without one', () => {
    const text = printTable(serviceKind, [service('web', { tier: 'front', app: 'web' }), service('ext', undefined)], { now, wide: true });
    assert.equal(
      text,
      [
        'NAME   TYPE        CLUSTER-IP   EXTERNAL-IP   PORT(S)   AGE   SELECTOR',
        'web    ClusterIP   10.96.0.10   <none>        80/TCP    5m    app=web,tier=front',
        'ext    ClusterIP   10.96.0.10   <none>        80/TCP    5m    <none>',
        '',
      ].join('\n'),
    );
    assert.doesNotMatch(printTable(serviceKind, [service('web', { app: 'web' })], { now }), /SELECTOR/);
  });

  it('lists ip:port pairs per port, three at most, then "+ N more..."', () => {
    const ep = (name: string, subsets: unknown) =>
      ({ apiVersion: 'v1', kind: 'Endpoints', metadata: { name, creationTimestamp: created }, subsets }) as unknown as KubeObject;
    const text = printTable(
      endpointsKind,
      [
        ep('web', [{ addresses: [{ ip: '10.244.1.5' }, { ip: '10.244.2.7' }], ports: [{ port: 8080 }, { port: 9090 }] }]),
        ep('db', [{ addresses: [{ ip: '10.244.1.9' }], ports: [{ port: 5432 }] }]),
        ep('none', undefined),
      ],
      { now },
    );
    assert.equal(
      text,
      [
        'NAME   ENDPOINTS                                                     AGE',
        'web    10.244.1.5:8080,10.244.2.7:8080,10.244.1.5:9090 + 1 more...   5m',
        'db     10.244.1.9:5432                                               5m',
        'none   <none>                                                        5m',
        '',
      ].join('\n'),
    );
  });
});
