// Service defaults, port rules and columns.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { serviceKind, serviceUpdateProblems, type Service } from './service.js';
import { validateObject } from './validate.js';

const make = (spec: Record<string, unknown>, status?: object) =>
  validateObject(serviceKind, { apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec, ...(status ? { status } : {}) }) as Service;
const col = (s: Service, name: string) => serviceKind.columns!.find((c) => c.name === name)!.value(s);

describe('service', () => {
  it('defaults type, protocol, targetPort and affinity', () => {
    const s = make({ selector: { app: 'web' }, ports: [{ port: 80 }] });
    assert.equal(s.spec.type, 'ClusterIP');
    assert.equal(s.spec.sessionAffinity, 'None');
    assert.deepEqual(s.spec.ports, [{ port: 80, protocol: 'TCP', targetPort: 80 }]);
    assert.equal(s.spec.externalTrafficPolicy, undefined);
  });
  it("takes a port name without letters, as kubectl create service names ports ('80-8080')", () => {
    const s = make({ ports: [{ name: '80-8080', port: 80, targetPort: 8080 }] });
    assert.equal(s.spec.ports[0].name, '80-8080');
  });
  it('defaults the traffic policy of node ports and the ClientIP timeout', () => {
    const s = make({ type: 'NodePort', sessionAffinity: 'ClientIP', ports: [{ port: 80, targetPort: 'http', nodePort: 30080 }] });
    assert.equal(s.spec.externalTrafficPolicy, 'Cluster');
    assert.equal(s.spec.sessionAffinityConfig?.clientIP?.timeoutSeconds, 10800);
    assert.equal(s.spec.ports[0].targetPort, 'http');
  });
  const bad: [string, Record<string, unknown>, string][] = [
    ['unnamed ports when several', { ports: [{ port: 80 }, { name: 'b', port: 81 }] }, 'spec.ports[0].name'],
    [
      'duplicate port names',
      {
        ports: [
          { name: 'a', port: 80 },
          { name: 'a', port: 81 },
        ],
      },
      'spec.ports[1].name',
    ],
    [
      'duplicate port and protocol',
      {
        ports: [
          { name: 'a', port: 80 },
          { name: 'b', port: 80 },
        ],
      },
      'spec.ports[1]',
    ],
    ['nodePort on ClusterIP', { ports: [{ port: 80, nodePort: 30000 }] }, 'spec.ports[0].nodePort'],
    ['no ports', { ports: [] }, 'spec.ports'],
    ['bad clusterIP', { clusterIP: '10.0.0.300', ports: [{ port: 80 }] }, 'spec.clusterIP'],
    ['unknown type', { type: 'Magic', ports: [{ port: 80 }] }, 'spec.type'],
  ];
  for (const [name, spec, field] of bad) {
    it(`rejects ${name}`, () =>
      assert.throws(
        () => make(spec),
        (err: { details: { causes: { field: string }[] } }) => {
          assert.ok(
            err.details.causes.some((c) => c.field === field),
            JSON.stringify(err.details.causes),
          );
          return true;
        },
      ));
  }
  it('allows headless services without ports', () => assert.equal(make({ clusterIP: 'None', selector: { app: 'x' } }).spec.clusterIP, 'None'));
  it('prints columns like kubectl', () => {
    const s = {
      ...make({
        type: 'NodePort',
        selector: { tier: 'f', app: 'web' },
        ports: [
          { name: 'http', port: 80, nodePort: 30080 },
          { name: 'dns', port: 53, protocol: 'UDP' },
        ],
      }),
    };
    s.spec.clusterIP = '10.96.0.10';
    assert.equal(col(s, 'TYPE'), 'NodePort');
    assert.equal(col(s, 'CLUSTER-IP'), '10.96.0.10');
    assert.equal(col(s, 'EXTERNAL-IP'), '<none>');
    assert.equal(col(s, 'PORT(S)'), '80:30080/TCP,53/UDP');
    assert.equal(col(s, 'SELECTOR'), 'app=web,tier=f');
    const lb = make({ type: 'LoadBalancer', ports: [{ port: 80 }] });
    assert.equal(col(lb, 'EXTERNAL-IP'), '<pending>');
    assert.equal(col(make({ type: 'LoadBalancer', ports: [{ port: 80 }] }, { loadBalancer: { ingress: [{ ip: '1.2.3.4' }] } }), 'EXTERNAL-IP'), '1.2.3.4');
  });

  const updates: [string, Record<string, unknown>, Record<string, unknown>, string[]][] = [
    ['keeping everything', { clusterIP: '10.96.0.5', ports: [{ port: 80 }] }, { clusterIP: '10.96.0.5', ports: [{ port: 81 }] }, []],
    [
      'a changed cluster IP',
      { clusterIP: '10.96.0.5', ports: [{ port: 80 }] },
      { clusterIP: '10.96.0.6', ports: [{ port: 80 }] },
      ['spec.clusterIP field is immutable'],
    ],
    ['headless to not', { clusterIP: 'None', selector: { a: 'b' } }, { clusterIP: '10.96.0.6', ports: [{ port: 80 }] }, ['spec.clusterIP field is immutable']],
    ['a first address (a service stored before allocation)', { ports: [{ port: 80 }] }, { clusterIP: '10.96.0.6', ports: [{ port: 80 }] }, []],
    [
      'a changed node port of the same port name',
      { type: 'NodePort', ports: [{ name: 'a', port: 80, nodePort: 30080 }] },
      { type: 'NodePort', ports: [{ name: 'a', port: 80, nodePort: 30081 }] },
      ['spec.ports.0.nodePort field is immutable'],
    ],
    [
      'a node port for a new port name',
      { type: 'NodePort', ports: [{ name: 'a', port: 80, nodePort: 30080 }] },
      { type: 'NodePort', ports: [{ name: 'b', port: 80, nodePort: 30081 }] },
      [],
    ],
  ];
  for (const [name, before, after, want] of updates) {
    it(`update rules: ${name}`, () =>
      assert.deepEqual(
        serviceUpdateProblems(make(before), make(after)).map((p) => `${p.path.join('.')} ${p.detail}`),
        want,
      ));
  }
});
