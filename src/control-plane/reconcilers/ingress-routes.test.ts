// Table tests of Ingress routing: which Ingresses are ours, and rules x requests -> backend through the rendered servers and a model of nginx's choice.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Ingress } from '../../core/api/ingress.js';
import { type IngressClass, minik8sIngressClass } from '../../core/api/ingressclass.js';
import type { Secret } from '../../core/api/secret.js';
import type { Service } from '../../core/api/service.js';
import { gatewayRoutes, planGateway, renderNginxConfig } from './gateway.js';
import type { Dns } from '../../core/api/dns.js';
import { gatewayServers, ingressRouting, isOurIngress, nginxChoice } from './ingress-routes.js';

function svc(name: string, clusterIP: string, port = 80, portName?: string): Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { namespace: 'default', name },
    spec: { type: 'ClusterIP', clusterIP, ports: [{ port, protocol: 'TCP', ...(portName ? { name: portName } : {}) }] },
  } as unknown as Service;
}
const services = [svc('a', '10.96.0.1'), svc('b', '10.96.0.2'), svc('c', '10.96.0.3', 8080, 'http'), svc('d', '10.96.0.4')];
const A = '10.96.0.1:80';
const B = '10.96.0.2:80';
const C = '10.96.0.3:8080';
const D = '10.96.0.4:80';

type PathSpec = [path: string, pathType: 'Exact' | 'Prefix' | 'ImplementationSpecific', service: string];
function ing(
  name: string,
  rules: { host?: string; paths: PathSpec[] }[],
  extra: Partial<NonNullable<Ingress['spec']>> = {},
  created = '2030-01-01T00:00:00Z',
): Ingress {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { namespace: 'default', name, creationTimestamp: created },
    spec: {
      ...extra,
      rules: rules.map((r) => ({
        ...(r.host ? { host: r.host } : {}),
        http: {
          paths: r.paths.map(([path, pathType, service]) => ({
            path,
            pathType,
            backend: { service: service === 'c' ? { name: 'c', port: { name: 'http' } } : { name: service, port: { number: 80 } } },
          })),
        },
      })),
    },
    status: {},
  } as unknown as Ingress;
}

function choose(ingresses: Ingress[], requests: [host: string, path: string, want: string][], dns: Dns[] = []): void {
  const routing = ingressRouting(ingresses, services);
  const servers = gatewayServers(gatewayRoutes(dns, services).routes, routing);
  for (const [host, path, want] of requests) assert.equal(nginxChoice(servers, host, path), want, `${host}${path}`);
}

describe('Ingress matching (rules x requests -> backend)', () => {
  it('Exact matches the path only; Prefix matches by whole path elements', () => {
    choose(
      [
        ing('x', [
          {
            host: 'shop.test',
            paths: [
              ['/exact', 'Exact', 'a'],
              ['/foo', 'Prefix', 'b'],
            ],
          },
        ]),
      ],
      [
        ['shop.test', '/exact', A],
        ['shop.test', '/exact/', '404'],
        ['shop.test', '/exact/x', '404'],
        ['shop.test', '/foo', B],
        ['shop.test', '/foo/', B],
        ['shop.test', '/foo/bar', B],
        ['shop.test', '/foobar', '404'],
        ['shop.test', '/', '404'],
      ],
    );
  });
  it('the longest path wins, and Exact before Prefix at equal length', () => {
    choose(
      [
        ing('x', [
          {
            host: 'shop.test',
            paths: [
              ['/', 'Prefix', 'a'],
              ['/foo', 'Prefix', 'b'],
              ['/foo/bar/', 'Prefix', 'c'],
              ['/foo', 'Exact', 'd'],
            ],
          },
        ]),
      ],
      [
        ['shop.test', '/', A],
        ['shop.test', '/other', A],
        ['shop.test', '/foo', D],
        ['shop.test', '/foo/', B],
        ['shop.test', '/foo/x', B],
        ['shop.test', '/foo/bar', C],
        ['shop.test', '/foo/bar/baz', C],
        ['shop.test', '/foo/barbaz', B],
      ],
    );
  });
  it('an Exact rule takes its path from an older Prefix rule of another Ingress', () => {
    const older = ing('old', [{ host: 'h.test', paths: [['/p', 'Prefix', 'a']] }], {}, '2030-01-01T00:00:00Z');
    const newer = ing('new', [{ host: 'h.test', paths: [['/p', 'Exact', 'b']] }], {}, '2030-01-02T00:00:00Z');
    choose(
      [newer, older],
      [
        ['h.test', '/p', B],
        ['h.test', '/p/q', A],
      ],
    );
  });
  it('hosts: exact names, one-label wildcards, host-less rules and the default backend', () => {
    choose(
      [
        ing(
          'x',
          [{ host: 'exact.test', paths: [['/', 'Prefix', 'a']] }, { host: '*.wild.test', paths: [['/', 'Prefix', 'b']] }, { paths: [['/any', 'Prefix', 'c']] }],
          { defaultBackend: { service: { name: 'd', port: { number: 80 } } } },
        ),
      ],
      [
        ['Exact.test', '/x', A],
        ['a.wild.test', '/x', B],
        ['a.b.wild.test', '/x', D],
        ['wild.test', '/x', D],
        ['unknown.test', '/any/1', C],
        ['unknown.test', '/nothing', D],
      ],
    );
  });
  it('a host with no matching path gets its Ingress default backend, or 404 without one', () => {
    choose(
      [ing('x', [{ host: 'h.test', paths: [['/a', 'Prefix', 'a']] }], { defaultBackend: { service: { name: 'd', port: { number: 80 } } } })],
      [['h.test', '/zzz', D]],
    );
    choose([ing('x', [{ host: 'h.test', paths: [['/a', 'Prefix', 'a']] }])], [['h.test', '/zzz', '404']]);
  });
  it('an Ingress and a DNS object on one host share its server; the DNS object keeps the paths it had', () => {
    const dns = {
      apiVersion: 'minik8s.io/v1',
      kind: 'DNS',
      metadata: { namespace: 'default', name: 'd', creationTimestamp: '2030-01-01T00:00:00Z' },
      spec: { host: 'h.test', paths: [{ path: '/p', serviceName: 'a', servicePort: 80 }] },
    } as unknown as Dns;
    choose(
      [
        ing('x', [
          {
            host: 'h.test',
            paths: [
              ['/p', 'Prefix', 'b'],
              ['/q', 'Prefix', 'b'],
            ],
          },
        ]),
      ],
      [
        ['h.test', '/p/1', A],
        ['h.test', '/q/1', B],
      ],
      [dns],
    );
    const text = renderNginxConfig(
      gatewayRoutes([dns], services).routes,
      ingressRouting([ing('x', [{ host: 'h.test', paths: [['/p', 'Prefix', 'b']] }])], services),
    );
    assert.equal((text.match(/location = \/p \{/g) ?? []).length, 1, 'nginx refuses a location written twice');
  });
});

describe('ingressRouting', () => {
  it('reports backends it cannot serve and serves the rest', () => {
    const r = ingressRouting(
      [
        ing('x', [
          {
            host: 'h.test',
            paths: [
              ['/ok', 'Prefix', 'a'],
              ['/gone', 'Prefix', 'missing'],
            ],
          },
        ]),
      ],
      services,
    );
    assert.deepEqual(
      r.problems.map((p) => p.message),
      ['service "missing" not found'],
    );
    assert.deepEqual(
      r.hosts.get('h.test')?.map((l) => `${l.exact ? '=' : ''}${l.base}`),
      ['=/ok', '/ok'],
    );
  });
  it('passes the path unchanged (no prefix stripping, unlike the DNS kind)', () => {
    const text = renderNginxConfig([], ingressRouting([ing('x', [{ host: 'h.test', paths: [['/api', 'Prefix', 'a']] }])], services));
    assert.match(text, /location \/api\/ \{\n\s+proxy_pass http:\/\/10\.96\.0\.1:80;/);
    assert.match(text, /location \/ \{\n\s+return 404;/);
  });
  it('refuses to write a path that could break out of its nginx directive', () => {
    const r = ingressRouting([ing('x', [{ host: 'h.test', paths: [['/a;b', 'ImplementationSpecific', 'a']] }])], services);
    assert.equal(r.hosts.get('h.test')?.length, 0);
    assert.match(r.problems[0]!.message, /characters the gateway cannot serve/);
  });
  it("serves TLS hosts with the Secret's certificate as files, never in the configuration", () => {
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { namespace: 'default', name: 'cert' },
      type: 'kubernetes.io/tls',
      data: { 'tls.crt': 'Q0VSVA==', 'tls.key': 'S0VZ' },
    } as unknown as Secret;
    const x = ing('x', [{ host: 'h.test', paths: [['/', 'Prefix', 'a']] }], { tls: [{ hosts: ['h.test'], secretName: 'cert' }] });
    const r = ingressRouting([x], services, [secret]);
    assert.deepEqual(r.tlsFiles, { 'default.cert.crt': 'Q0VSVA==', 'default.cert.key': 'S0VZ' });
    const text = renderNginxConfig([], r);
    assert.match(text, /listen 443 ssl;\n\s+ssl_certificate \/etc\/nginx\/tls\/default\.cert\.crt;/);
    assert.doesNotMatch(text, /Q0VSVA|S0VZ/);
  });
});

describe('isOurIngress', () => {
  const ours = minik8sIngressClass();
  const other = { ...minik8sIngressClass(), metadata: { name: 'nginx' }, spec: { controller: 'k8s.io/ingress-nginx' } } as IngressClass;
  const named = (className?: string) => ing('x', [{ host: 'h.test', paths: [['/', 'Prefix', 'a']] }], className ? { ingressClassName: className } : {});
  const cases: [string, Ingress, IngressClass[], boolean][] = [
    ['our class by name', named('minik8s'), [ours, other], true],
    ['another controller', named('nginx'), [ours, other], false],
    ['a class that does not exist', named('nope'), [ours], false],
    ['no class, ours the default', named(), [ours, other], true],
    ['no class, no default', named(), [{ ...ours, metadata: { name: 'minik8s' } }], false],
    ['no class, two defaults', named(), [ours, { ...other, metadata: { ...other.metadata, annotations: ours.metadata.annotations } }], false],
  ];
  for (const [title, i, classes, want] of cases) it(title, () => assert.equal(isOurIngress(i, classes), want));
});

describe('planGateway with Ingresses', () => {
  const gatewaySvc = { ...svc('minik8s-gateway', '10.96.0.30'), metadata: { namespace: 'kube-system', name: 'minik8s-gateway' } } as Service;
  it('runs the gateway for an Ingress alone and writes the gateway address into its status', () => {
    const plan = planGateway({
      dnses: [],
      services: [...services, gatewaySvc],
      pods: [],
      now: '2030-01-01T00:00:00Z',
      ingresses: [ing('x', [{ host: 'h.test', paths: [['/', 'Prefix', 'a']] }])],
      ingressClasses: [minik8sIngressClass()],
    });
    assert.deepEqual(
      plan.actions.map((a) => a.type),
      ['createPod', 'ingressStatus'],
    );
    assert.deepEqual(plan.actions[1], { type: 'ingressStatus', namespace: 'default', name: 'x', ip: '10.96.0.30' });
  });
  it("leaves another controller's Ingress alone: without DNS objects there is no gateway", () => {
    const plan = planGateway({
      dnses: [],
      services: [...services, gatewaySvc],
      pods: [],
      now: '2030-01-01T00:00:00Z',
      ingresses: [ing('x', [{ host: 'h.test', paths: [['/', 'Prefix', 'a']] }], { ingressClassName: 'nginx' })],
      ingressClasses: [minik8sIngressClass()],
    });
    assert.deepEqual(
      plan.actions.map((a) => a.type),
      ['deleteService'],
    );
  });
  it('copies TLS material into the gateway Secret before a pod mounts it', () => {
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { namespace: 'default', name: 'cert' },
      type: 'kubernetes.io/tls',
      data: { 'tls.crt': 'Q0VSVA==', 'tls.key': 'S0VZ' },
    } as unknown as Secret;
    const plan = planGateway({
      dnses: [],
      services: [...services, gatewaySvc],
      pods: [],
      now: '2030-01-01T00:00:00Z',
      ingresses: [ing('x', [{ host: 'h.test', paths: [['/', 'Prefix', 'a']] }], { tls: [{ hosts: ['h.test'], secretName: 'cert' }] })],
      ingressClasses: [minik8sIngressClass()],
      secrets: [secret],
    });
    assert.deepEqual(
      plan.actions.map((a) => a.type),
      ['tlsSecret', 'createPod', 'ingressStatus'],
    );
    const pod = (plan.actions[1] as { pod: { spec: { volumes?: { secret?: { secretName: string } }[]; containers: { env?: { value?: string }[] }[] } } }).pod;
    assert.equal(pod.spec.volumes?.[0]?.secret?.secretName, 'minik8s-gateway-tls');
    assert.doesNotMatch(JSON.stringify(pod), /Q0VSVA|S0VZ/, 'no certificate or key in the pod spec');
    const copy = {
      ...(plan.actions[0] as { secret: Secret }).secret,
      metadata: { name: 'minik8s-gateway-tls', namespace: 'kube-system', resourceVersion: '7' },
    };
    const renewed = { ...secret, data: { 'tls.crt': 'TkVX', 'tls.key': 'S0VZ' } } as unknown as Secret;
    const again = (secrets: Secret[]) =>
      planGateway({
        dnses: [],
        services: [...services, gatewaySvc],
        pods: [],
        now: '2030-01-01T00:00:00Z',
        ingresses: [ing('x', [{ host: 'h.test', paths: [['/', 'Prefix', 'a']] }], { tls: [{ hosts: ['h.test'], secretName: 'cert' }] })],
        ingressClasses: [minik8sIngressClass()],
        secrets,
      });
    assert.ok(!again([secret, copy as Secret]).actions.some((a) => a.type === 'tlsSecret'), 'an up-to-date copy is left alone');
    const renew = again([renewed, copy as Secret]);
    const write = renew.actions.find((a) => a.type === 'tlsSecret') as { replace: boolean; secret: Secret } | undefined;
    assert.equal(write?.replace, true, 'a renewed certificate replaces the copy in place');
    assert.equal(write?.secret.metadata.resourceVersion, '7');
    assert.notEqual(renew.hash, plan.hash, 'and makes a new configuration, so a new pod');
  });
});
