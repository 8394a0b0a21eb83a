// `describe service`: kubectl's layout, with each port's endpoints.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { endpointsKind, type Endpoints } from '../core/api/endpoints.js';
import { serviceKind } from '../core/api/service.js';
import { validateObject } from '../core/api/validate.js';
import { renderObject } from './describe.js';
import { endpointsForPort } from './describe-service.js';

const service = validateObject(serviceKind, {
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'web', namespace: 'default' },
  spec: {
    type: 'NodePort',
    selector: { app: 'web' },
    clusterIP: '10.96.0.2',
    clusterIPs: ['10.96.0.2'],
    ipFamilies: ['IPv4'],
    ipFamilyPolicy: 'SingleStack',
    ports: [{ name: 'http', port: 80, targetPort: 'http', nodePort: 30080 }],
  },
});
const endpoints = validateObject(endpointsKind, {
  apiVersion: 'v1',
  kind: 'Endpoints',
  metadata: { name: 'web', namespace: 'default' },
  subsets: [
    { addresses: ['10.244.1.5', '10.244.2.7', '10.244.3.2', '10.244.3.9'].map((ip) => ({ ip })), ports: [{ name: 'http', port: 8080, protocol: 'TCP' }] },
  ],
}) as Endpoints;

describe('describe service', () => {
  it('prints the address, each port with its target, node port and endpoints', () => {
    assert.equal(
      renderObject(serviceKind, service, { endpoints }),
      [
        'Name:                     web',
        'Namespace:                default',
        'Labels:                   <none>',
        'Annotations:              <none>',
        'Selector:                 app=web',
        'Type:                     NodePort',
        'IP Family Policy:         SingleStack',
        'IP Families:              IPv4',
        'IP:                       10.96.0.2',
        'IPs:                      10.96.0.2',
        'Port:                     http  80/TCP',
        'TargetPort:               http/TCP',
        'NodePort:                 http  30080/TCP',
        'Endpoints:                10.244.1.5:8080,10.244.2.7:8080,10.244.3.2:8080 + 1 more...',
        'Session Affinity:         None',
        'External Traffic Policy:  Cluster',
        '',
      ].join('\n'),
    );
  });
  it("lists a port's endpoints by its name, <none> without any", () => {
    assert.equal(endpointsForPort(endpoints.subsets, 'other'), '<none>');
    assert.equal(endpointsForPort(undefined, 'http'), '<none>');
  });
});
