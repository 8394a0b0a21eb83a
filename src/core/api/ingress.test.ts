// Validation of Ingress and IngressClass: manifests written for Kubernetes apply, bad ones get Kubernetes' messages.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ingressKind } from './ingress.js';
import { ingressClassKind, minik8sIngressClass } from './ingressclass.js';
import { validateObject } from './validate.js';

const base = (spec: unknown) => ({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'web', namespace: 'default' }, spec });
const path = (extra: Record<string, unknown>) => ({
  rules: [{ host: 'shop.example.com', http: { paths: [{ backend: { service: { name: 'web', port: { number: 80 } } }, ...extra }] } }],
});

function message(obj: unknown): string {
  try {
    validateObject(ingressKind, obj);
    return 'valid';
  } catch (err) {
    return (err as Error).message;
  }
}

describe('Ingress validation', () => {
  it('accepts a chart-style Ingress with class, TLS, wildcard host and a named port', () => {
    const spec = {
      ingressClassName: 'minik8s',
      tls: [{ hosts: ['*.example.com'], secretName: 'cert' }],
      rules: [{ host: '*.example.com', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { name: 'http' } } } }] } }],
    };
    assert.equal(message(base(spec)), 'valid');
  });
  const cases: [string, unknown, string][] = [
    ['no pathType', path({ path: '/a' }), 'spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified'],
    ['unknown pathType', path({ path: '/a', pathType: 'Regex' }), 'supported values: "Exact", "ImplementationSpecific", "Prefix"'],
    ['relative path', path({ path: 'a', pathType: 'Prefix' }), 'spec.rules[0].http.paths[0].path: Invalid value: "a": must be an absolute path'],
    ['double slash', path({ path: '/a//b', pathType: 'Exact' }), "must not contain '//'"],
    ['neither rules nor default backend', {}, 'either `defaultBackend` or `rules` must be specified'],
    ['an IP address as host', { rules: [{ host: '10.0.0.1' }] }, 'spec.rules[0].host: Invalid value: "10.0.0.1": must be a DNS name, not an IP address'],
    ['a bad wildcard', { rules: [{ host: 'a.*.com' }] }, 'a lowercase RFC 1123 subdomain'],
    [
      'a port with both name and number',
      { defaultBackend: { service: { name: 'web', port: { name: 'http', number: 80 } } } },
      'spec.defaultBackend.service.port: Invalid value: "": cannot specify both port name and port number',
    ],
  ];
  for (const [title, spec, want] of cases) {
    it(`refuses ${title}`, () => {
      const got = message(base(spec));
      assert.ok(got.startsWith('Ingress.networking.k8s.io "web" is invalid') || got.startsWith('Ingress "web" is invalid'), got);
      assert.ok(got.includes(want), `${got}\n  should include: ${want}`);
    });
  }
});

describe('IngressClass', () => {
  it("the master's class is valid and marked as the default", () => {
    assert.doesNotThrow(() => validateObject(ingressClassKind, minik8sIngressClass()));
    assert.equal(minik8sIngressClass().metadata.annotations?.['ingressclass.kubernetes.io/is-default-class'], 'true');
  });
  it("a class's controller cannot change", () => {
    const next = { ...minik8sIngressClass(), spec: { controller: 'example.com/other' } };
    assert.match(ingressClassKind.validateUpdate!(minik8sIngressClass(), next)[0]!.detail!, /immutable/);
  });
});
