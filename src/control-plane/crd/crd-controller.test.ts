// Table tests of the CRD kind's checks and of the status the CRD controller plans (names accepted or in conflict, stored versions, terminating).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { crdKind, type CustomResourceDefinition } from '../../core/api/crd.js';
import { validateObject } from '../../core/api/validate.js';
import { planCrdStatus } from './crd-controller.js';

const crd = (name: string, plural: string, kind: string, extra: Record<string, unknown> = {}): CustomResourceDefinition =>
  validateObject(crdKind, {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name, ...extra },
    spec: {
      group: 'example.com',
      names: { plural, kind },
      scope: 'Namespaced',
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } }],
    },
  }) as CustomResourceDefinition;

function invalid(spec: Record<string, unknown>, name = 'foos.example.com'): string {
  try {
    validateObject(crdKind, { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name }, spec });
    return '';
  } catch (err) {
    return (err as Error).message;
  }
}

const version = (name: string, storage: boolean) => ({ name, served: true, storage, schema: { openAPIV3Schema: { type: 'object' } } });
const names = { plural: 'foos', kind: 'Foo' };

describe('CustomResourceDefinition checks', () => {
  const cases: [string, Record<string, unknown>, string, RegExp | ''][] = [
    ['a valid CRD', { group: 'example.com', names, scope: 'Namespaced', versions: [version('v1', true)] }, 'foos.example.com', ''],
    [
      'a name other than plural.group',
      { group: 'example.com', names, scope: 'Namespaced', versions: [version('v1', true)] },
      'bars.example.com',
      /metadata.name: Invalid value: "bars.example.com": must be spec.names.plural\+"."\+spec.group/,
    ],
    [
      'no storage version',
      { group: 'example.com', names, scope: 'Namespaced', versions: [version('v1', false)] },
      'foos.example.com',
      /spec.versions: Invalid value: "v1": must have exactly one version marked as storage version/,
    ],
    [
      'two storage versions',
      { group: 'example.com', names, scope: 'Namespaced', versions: [version('v1', true), version('v2', true)] },
      'foos.example.com',
      /must have exactly one version marked as storage version/,
    ],
    [
      'a group without a dot',
      { group: 'example', names, scope: 'Namespaced', versions: [version('v1', true)] },
      'foos.example',
      /spec.group: Invalid value: "example": should be a domain with at least one dot/,
    ],
    [
      'a bad scope',
      { group: 'example.com', names, scope: 'Global', versions: [version('v1', true)] },
      'foos.example.com',
      /spec.scope: Unsupported value: "Global"/,
    ],
    [
      'no schema',
      { group: 'example.com', names, scope: 'Namespaced', versions: [{ name: 'v1', served: true, storage: true }] },
      'foos.example.com',
      /spec.versions\[0\].schema.openAPIV3Schema: Required value: schemas are required/,
    ],
  ];
  for (const [what, spec, name, expected] of cases) {
    test(what, () => (expected === '' ? assert.equal(invalid(spec, name), '') : assert.match(invalid(spec, name), expected)));
  }

  test('singular and listKind are defaulted', () => {
    const out = crd('foos.example.com', 'foos', 'Foo');
    assert.equal(out.spec.names.singular, 'foo');
    assert.equal(out.spec.names.listKind, 'FooList');
  });
});

describe('planCrdStatus', () => {
  const now = new Date('2026-01-01T00:00:00Z');
  test('accepts free names and records the storage version', () => {
    const status = planCrdStatus(crd('foos.example.com', 'foos', 'Foo'), [], now);
    assert.deepEqual(
      status.conditions.map((c) => [c.type, c.status, c.reason]),
      [
        ['NamesAccepted', 'True', 'NoConflicts'],
        ['Established', 'True', 'InitialNamesAccepted'],
      ],
    );
    assert.deepEqual(status.storedVersions, ['v1']);
    assert.equal(status.acceptedNames.kind, 'Foo');
  });
  test('refuses a kind an older CRD of the group has', () => {
    const status = planCrdStatus(crd('bars.example.com', 'bars', 'Foo'), [crd('foos.example.com', 'foos', 'Foo')], now);
    assert.deepEqual(
      status.conditions.map((c) => [c.type, c.status, c.reason, c.message]),
      [
        ['NamesAccepted', 'False', 'KindConflict', '"Foo" is already in use'],
        ['Established', 'False', 'NotAccepted', 'not all names are accepted'],
      ],
    );
  });
  test('a CRD being deleted is Terminating', () => {
    const status = planCrdStatus(crd('foos.example.com', 'foos', 'Foo', { deletionTimestamp: '2026-01-01T00:00:00Z' }), [], now);
    assert.deepEqual(status.conditions.at(-1)?.type, 'Terminating');
  });
});
