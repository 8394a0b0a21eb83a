// Unit tests for the DNS kind: validation of host and paths, its names on the command line, and its printer columns.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { dnsKind, normalizePath } from './dns.js';
import { kindByName } from './registry.js';
import { validateObject } from './validate.js';
import { InvalidError } from '../errors.js';

const valid = {
  apiVersion: 'minik8s.io/v1',
  kind: 'DNS',
  metadata: { name: 'example', namespace: 'default' },
  spec: {
    host: 'example.com',
    paths: [
      { path: '/path1', serviceName: 'svc1', servicePort: 80 },
      { path: '/path2', serviceName: 'svc2', servicePort: 'http' },
    ],
  },
};

function causes(spec: unknown): string[] {
  try {
    validateObject(dnsKind, { ...valid, spec });
  } catch (err) {
    assert.ok(err instanceof InvalidError, String(err));
    return (err as InvalidError).toStatus().details?.causes?.map((c) => `${c.field}: ${c.reason}`) ?? [];
  }
  return [];
}

describe('DNS kind', () => {
  it("accepts the seeds' shape and prints host, paths and services", () => {
    const obj = validateObject(dnsKind, valid);
    assert.deepEqual(
      dnsKind.columns!.filter((c) => !c.wide).map((c) => [c.name, c.value(obj)]),
      [
        ['HOST', 'example.com'],
        ['PATHS', '/path1,/path2'],
        ['SERVICES', 'svc1:80,svc2:http'],
      ],
    );
  });

  it('is what `get dns`, `get dnses` and `get DNS.minik8s.io` name', () => {
    for (const name of ['dns', 'dnses', 'DNS', 'dns.minik8s.io']) assert.equal(kindByName(name), dnsKind, name);
  });

  const bad: [string, unknown, RegExp][] = [
    ['a host that is no DNS name', { host: 'Not A Host', paths: valid.spec.paths }, /spec\.host: FieldValueInvalid/],
    ['no paths', { host: 'a.com', paths: [] }, /spec\.paths: FieldValueInvalid/],
    ['a relative path', { host: 'a.com', paths: [{ path: 'p', serviceName: 's', servicePort: 80 }] }, /spec\.paths\[0\]\.path/],
    [
      'a path that would break the nginx configuration',
      { host: 'a.com', paths: [{ path: '/p; return 200', serviceName: 's', servicePort: 80 }] },
      /spec\.paths\[0\]\.path/,
    ],
    [
      'the same path twice (trailing slash or not)',
      {
        host: 'a.com',
        paths: [
          { path: '/p', serviceName: 's', servicePort: 80 },
          { path: '/p/', serviceName: 't', servicePort: 80 },
        ],
      },
      /spec\.paths\[1\]\.path: FieldValueDuplicate/,
    ],
    ['a port out of range', { host: 'a.com', paths: [{ path: '/p', serviceName: 's', servicePort: 70000 }] }, /spec\.paths\[0\]\.servicePort/],
    ['a service name that is no name', { host: 'a.com', paths: [{ path: '/p', serviceName: 'S_1', servicePort: 80 }] }, /spec\.paths\[0\]\.serviceName/],
  ];
  for (const [name, spec, want] of bad) it(`refuses ${name}`, () => assert.match(causes(spec).join('\n'), want));
});

describe('normalizePath', () => {
  for (const [input, want] of [
    ['/a', '/a'],
    ['/a/', '/a'],
    ['/a//', '/a'],
    ['/', '/'],
    ['//', '/'],
    ['/a/b/', '/a/b'],
  ] as const) {
    it(`${input} -> ${want}`, () => assert.equal(normalizePath(input), want));
  }
});
