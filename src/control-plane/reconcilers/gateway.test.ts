// Golden-file and table tests of the gateway: routes and conditions from DNS objects, the nginx configuration, and the pod/service plan (UPDATE_GOLDEN=1 rewrites testdata/).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Dns } from '../../core/api/dns.js';
import type { Pod } from '../../core/api/pod.js';
import type { Service } from '../../core/api/service.js';
import { CONFIG_HASH_ANNOTATION, gatewayPod, gatewayRoutes, planGateway, renderNginxConfig, type GatewayAction } from './gateway.js';

const TESTDATA = fileURLToPath(new URL('../../../../src/control-plane/reconcilers/testdata/', import.meta.url));
const NOW = '2030-01-01T00:00:00Z';

function svc(namespace: string, name: string, clusterIP: string, ports: { port: number; name?: string }[] = [{ port: 80 }]): Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { namespace, name },
    spec: { type: 'ClusterIP', clusterIP, ports: ports.map((p) => ({ ...p, protocol: 'TCP' })), sessionAffinity: 'None' },
    status: {},
  } as Service;
}

function dns(name: string, host: string, paths: [string, string, number | string][], created = '2030-01-01T00:00:00Z', namespace = 'default'): Dns {
  return {
    apiVersion: 'minik8s.io/v1',
    kind: 'DNS',
    metadata: { namespace, name, creationTimestamp: created },
    spec: { host, paths: paths.map(([path, serviceName, servicePort]) => ({ path, serviceName, servicePort })) },
    status: {},
  } as Dns;
}

const services = [
  svc('default', 'svc1', '10.96.0.21'),
  svc('default', 'svc2', '10.96.0.22', [{ port: 8080, name: 'http' }]),
  svc('default', 'headless', 'None'),
  svc('kube-system', 'minik8s-gateway', '10.96.0.30'),
];

// The seeds' example: one host, two paths, two services.
const seedExample = dns('example', 'example.com', [
  ['/path1', 'svc1', 80],
  ['/path2/', 'svc2', 'http'],
]);

describe('renderNginxConfig (golden)', () => {
  const cases: [string, Dns[]][] = [
    ['seed-example', [seedExample]],
    [
      'two-hosts-root-path',
      [
        seedExample,
        dns('api', 'api.example.org', [
          ['/', 'svc1', 80],
          ['/v1/users', 'svc2', 8080],
        ]),
      ],
    ],
    ['nothing', []],
  ];
  for (const [name, dnses] of cases) {
    it(name, () => {
      const text = renderNginxConfig(gatewayRoutes(dnses, services).routes);
      const file = `${TESTDATA}gateway-${name}.conf`;
      if (process.env.UPDATE_GOLDEN === '1') {
        mkdirSync(TESTDATA, { recursive: true });
        writeFileSync(file, text);
      }
      assert.equal(text, readFileSync(file, 'utf8'), `${name}: rendered configuration differs from ${file} (UPDATE_GOLDEN=1 to accept)`);
    });
  }
});

describe('gatewayRoutes', () => {
  it('serves the paths that work and names the ones that do not', () => {
    const d = dns('bad', 'shop.example', [
      ['/ok', 'svc1', 80],
      ['/gone', 'missing', 80],
      ['/none', 'headless', 80],
      ['/port', 'svc1', 81],
    ]);
    const { routes, verdicts } = gatewayRoutes([d], services);
    assert.deepEqual(routes, [{ host: 'shop.example', path: '/ok', upstream: '10.96.0.21:80' }]);
    assert.deepEqual(verdicts, [
      {
        namespace: 'default',
        name: 'bad',
        ready: false,
        reason: 'ServiceNotFound',
        message: 'service "missing" not found; service "headless" has no cluster IP; service "svc1" has no port 81 (1 of 4 paths served)',
      },
    ]);
  });
  it('gives a path two objects claim on one host to the older one', () => {
    const older = dns('a', 'x.example', [['/p', 'svc1', 80]], '2030-01-01T00:00:00Z');
    const newer = dns(
      'b',
      'X.example',
      [
        ['/p/', 'svc2', 8080],
        ['/q', 'svc2', 8080],
      ],
      '2030-01-02T00:00:00Z',
    );
    const { routes, verdicts } = gatewayRoutes([newer, older], services);
    assert.deepEqual(
      routes.map((r) => `${r.host}${r.path}->${r.upstream}`),
      ['x.example/p->10.96.0.21:80', 'x.example/q->10.96.0.22:8080'],
    );
    assert.equal(verdicts.find((v) => v.name === 'b')?.reason, 'PathConflict');
    assert.equal(verdicts.find((v) => v.name === 'a')?.ready, true);
  });
  it("looks services up in the DNS object's own namespace", () => {
    const { verdicts } = gatewayRoutes([dns('o', 'o.example', [['/a', 'svc1', 80]], NOW, 'other')], services);
    assert.equal(verdicts[0]?.reason, 'ServiceNotFound');
  });
});

function gatewayPodWith(config: string, hash: string, ready: boolean, extra: Partial<Pod['status']> = {}): Pod {
  const p = gatewayPod(config, hash);
  return { ...p, status: { phase: 'Running', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }], ...extra } } as Pod;
}

const kinds = (actions: GatewayAction[]) =>
  actions.map((a) =>
    a.type === 'deletePod'
      ? `deletePod ${a.name}`
      : a.type === 'createPod'
        ? `createPod ${a.pod.metadata.name}`
        : a.type === 'status'
          ? `status ${a.name} ${a.conditions[0]!.status} ${a.conditions[0]!.reason}`
          : a.type,
  );

describe('planGateway', () => {
  const first = planGateway({ dnses: [seedExample], services: services.slice(0, 3), pods: [], now: NOW });

  it("starts with the service, a pod named by the configuration's hash, and a Ready condition", () => {
    assert.deepEqual(kinds(first.actions), ['createService', `createPod minik8s-gateway-${first.hash.slice(0, 10)}`, 'status example True Serving']);
    const pod = (first.actions[1] as { pod: Pod }).pod;
    assert.equal(pod.metadata.namespace, 'kube-system');
    assert.equal(pod.metadata.annotations?.[CONFIG_HASH_ANNOTATION], first.hash);
    assert.equal(pod.spec.containers[0]!.env?.[0]?.value, first.config);
    assert.equal(pod.spec.containers[0]!.image, 'nginx:1.22');
  });

  it('does nothing more once all is in place', () => {
    const ready = gatewayPodWith(first.config, first.hash, true);
    const done = {
      ...seedExample,
      status: { conditions: [{ type: 'Ready', status: 'True', reason: 'Serving', message: '2 paths served by the gateway', lastTransitionTime: NOW }] },
    } as Dns;
    assert.deepEqual(planGateway({ dnses: [done], services, pods: [ready], now: NOW }).actions, []);
  });

  it('replaces the pod when the configuration changes: the new one first, the old one once the new is Ready', () => {
    const old = gatewayPodWith('old', 'aaaaaaaaaaaaaaaa', true);
    const changed = [svc('default', 'svc1', '10.96.0.99'), ...services.slice(1)];
    const step1 = planGateway({ dnses: [seedExample], services: changed, pods: [old], now: NOW });
    assert.deepEqual(
      kinds(step1.actions).filter((a) => a.includes('Pod')),
      [`createPod minik8s-gateway-${step1.hash.slice(0, 10)}`],
    );
    const starting = gatewayPodWith(step1.config, step1.hash, false);
    assert.deepEqual(
      kinds(planGateway({ dnses: [seedExample], services: changed, pods: [old, starting], now: NOW }).actions).filter((a) => a.includes('Pod')),
      [],
    );
    const up = gatewayPodWith(step1.config, step1.hash, true);
    assert.deepEqual(
      kinds(planGateway({ dnses: [seedExample], services: changed, pods: [old, up], now: NOW }).actions).filter((a) => a.includes('Pod')),
      ['deletePod minik8s-gateway-aaaaaaaaaa'],
    );
  });

  it('removes an old pod at once when it is not serving anyway, and a failed current pod to make it again', () => {
    const broken = gatewayPodWith('old', 'bbbbbbbbbbbbbbbb', false);
    assert.ok(kinds(planGateway({ dnses: [seedExample], services, pods: [broken], now: NOW }).actions).includes('deletePod minik8s-gateway-bbbbbbbbbb'));
    const failed = gatewayPodWith(first.config, first.hash, false, { phase: 'Failed' });
    assert.deepEqual(
      kinds(planGateway({ dnses: [seedExample], services, pods: [failed], now: NOW }).actions).filter((a) => a.includes('Pod')),
      [`deletePod ${failed.metadata.name}`],
    );
  });

  it('removes the pods and the service when no DNS object is left (or the last is being deleted)', () => {
    const pod = gatewayPodWith(first.config, first.hash, true);
    const deleting = { ...seedExample, metadata: { ...seedExample.metadata, deletionTimestamp: NOW } } as Dns;
    for (const dnses of [[], [deleting]]) {
      assert.deepEqual(kinds(planGateway({ dnses, services, pods: [pod], now: NOW }).actions), [`deletePod ${pod.metadata.name}`, 'deleteService']);
    }
    assert.deepEqual(planGateway({ dnses: [], services: services.slice(0, 3), pods: [], now: NOW }).actions, []);
  });

  it('reports a path to a missing service on the object, and keeps the transition time while the condition holds', () => {
    const d = dns('shop', 'shop.example', [
      ['/a', 'svc1', 80],
      ['/b', 'missing', 80],
    ]);
    const plan = planGateway({ dnses: [d], services, pods: [], now: NOW });
    const status = plan.actions.find((a) => a.type === 'status') as Extract<GatewayAction, { type: 'status' }>;
    assert.equal(status.conditions[0]!.status, 'False');
    assert.equal(status.conditions[0]!.reason, 'ServiceNotFound');
    assert.match(status.conditions[0]!.message!, /service "missing" not found/);
    assert.match(plan.config, /location = \/a \{/);
    const later = planGateway({ dnses: [{ ...d, status: { conditions: status.conditions } } as Dns], services, pods: [], now: '2031-01-01T00:00:00Z' });
    assert.equal(later.actions.filter((a) => a.type === 'status').length, 0);
  });
});
