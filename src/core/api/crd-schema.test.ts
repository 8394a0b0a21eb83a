// Table tests of a CRD schema as the API server applies it: errors and their wording, pruning, nulls, defaults, int-or-string, preserved fields.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { applyDefaults, customResourceSchema, pruneUnknown, schemaProblems, type SchemaNode } from './crd-schema.js';
import type { KindDefinition } from './kind.js';
import { validateObject, validateObjectWith } from './validate.js';

const schema: SchemaNode = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      required: ['color'],
      properties: {
        replicas: { type: 'integer', minimum: 0, maximum: 10, default: 1 },
        color: { type: 'string', enum: ['red', 'blue'] },
        label: { type: 'string', pattern: '^[a-z]+$', minLength: 2, maxLength: 4 },
        tags: { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 2 },
        port: { 'x-kubernetes-int-or-string': true },
        ratio: { type: 'number', minimum: 0, exclusiveMinimum: true },
        note: { type: 'string', nullable: true },
        extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        quotas: { type: 'object', additionalProperties: { type: 'integer' } },
        nested: { type: 'object', default: {}, properties: { depth: { type: 'integer', default: 3 } } },
      },
    },
  },
};

const kind: KindDefinition = {
  kind: 'Widget',
  group: 'example.com',
  version: 'v1',
  resource: 'widgets',
  singular: 'widget',
  shortNames: [],
  namespaced: true,
  statusSubresource: false,
  schema: customResourceSchema(schema, ['example.com/v1'], 'Widget', 'example.com/v1'),
};

const obj = (spec: Record<string, unknown>) => ({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'default' }, spec });

function message(spec: Record<string, unknown>): string {
  try {
    validateObject(kind, obj(spec));
    return '';
  } catch (err) {
    return (err as Error).message;
  }
}

describe('custom resource validation', () => {
  const cases: [string, Record<string, unknown>, string][] = [
    ['a valid object', { color: 'red' }, ''],
    [
      'a wrong type',
      { color: 'red', replicas: 'two' },
      'Widget "w" is invalid: spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"',
    ],
    ['a missing required field', {}, 'Widget "w" is invalid: spec.color: Required value'],
    ['a value outside the enum', { color: 'green' }, 'Widget "w" is invalid: spec.color: Unsupported value: "green": supported values: "red", "blue"'],
    ['a pattern', { color: 'red', label: 'AB' }, `Widget "w" is invalid: spec.label: Invalid value: "AB": spec.label in body should match '^[a-z]+$'`],
    [
      'a minimum',
      { color: 'red', replicas: -1 },
      'Widget "w" is invalid: spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0',
    ],
    [
      'a maximum',
      { color: 'red', replicas: 11 },
      'Widget "w" is invalid: spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10',
    ],
    [
      'an exclusive minimum (OpenAPI 3.0 boolean)',
      { color: 'red', ratio: 0 },
      'Widget "w" is invalid: spec.ratio: Invalid value: 0: spec.ratio in body should be greater than 0',
    ],
    ['a minLength', { color: 'red', label: 'a' }, 'Widget "w" is invalid: spec.label: Invalid value: "a": spec.label in body should be at least 2 chars long'],
    [
      'a maxLength',
      { color: 'red', label: 'abcde' },
      'Widget "w" is invalid: spec.label: Invalid value: "abcde": spec.label in body should be at most 4 chars long',
    ],
    ['minItems', { color: 'red', tags: [] }, 'Widget "w" is invalid: spec.tags: Invalid value: "array": spec.tags in body should have at least 1 items'],
    [
      'maxItems',
      { color: 'red', tags: ['a', 'b', 'c'] },
      'Widget "w" is invalid: spec.tags: Invalid value: "array": spec.tags in body should have at most 2 items',
    ],
    [
      'an item type',
      { color: 'red', tags: [1] },
      'Widget "w" is invalid: spec.tags[0]: Invalid value: "integer": spec.tags[0] in body must be of type string: "integer"',
    ],
    ['int-or-string takes both', { color: 'red', port: 80 }, ''],
    ['int-or-string takes a name', { color: 'red', port: 'http' }, ''],
    [
      'int-or-string refuses others',
      { color: 'red', port: true },
      'Widget "w" is invalid: spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean"',
    ],
    [
      'a map value type',
      { color: 'red', quotas: { cpu: 'x' } },
      'Widget "w" is invalid: spec.quotas.cpu: Invalid value: "string": spec.quotas.cpu in body must be of type integer: "string"',
    ],
    ['preserved unknown fields', { color: 'red', extra: { anything: { at: ['all'] } } }, ''],
    ['an unknown field (Strict)', { color: 'red', colour: 'red' }, 'Widget "w" is invalid: unknown field "spec.colour"'],
    [
      'several problems at once',
      { color: 'green', replicas: -1 },
      'Widget "w" is invalid: [spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0, spec.color: Unsupported value: "green": supported values: "red", "blue"]',
    ],
  ];
  for (const [name, spec, expected] of cases) {
    test(name, () => assert.equal(message(spec), expected));
  }

  test('the wrong apiVersion or kind is refused as for built-in kinds', () => {
    assert.throws(() => validateObject(kind, { ...obj({ color: 'red' }), kind: 'Gadget' }), /kind: Unsupported value: "Gadget": supported values: "Widget"/);
  });

  test('defaults are applied, nested ones inside defaulted objects too', () => {
    const out = validateObject(kind, obj({ color: 'red' })) as { spec: Record<string, unknown> };
    assert.deepEqual(out.spec, { color: 'red', replicas: 1, nested: { depth: 3 } });
  });

  test('Ignore and Warn prune unknown fields and report them', () => {
    const { object, unknownFields } = validateObjectWith(kind, { ...obj({ color: 'red', colour: 'x', extra: { kept: 1 } }), top: 1 }, 'Warn');
    assert.deepEqual(unknownFields, ['spec.colour', 'top']);
    assert.deepEqual((object as { spec: unknown }).spec, { color: 'red', extra: { kept: 1 }, replicas: 1, nested: { depth: 3 } });
    assert.equal((object as { top?: unknown }).top, undefined);
  });

  test('nulls are dropped unless the field is nullable', () => {
    const out = validateObject(kind, obj({ color: 'red', label: null, note: null })) as { spec: Record<string, unknown> };
    assert.equal('label' in out.spec, false);
    assert.equal(out.spec.note, null);
  });

  test('the output keeps apiVersion, kind, metadata first (stored objects start that way)', () => {
    const out = validateObject(kind, { spec: { color: 'red' }, metadata: { name: 'w', namespace: 'default' }, kind: 'Widget', apiVersion: 'example.com/v1' });
    assert.deepEqual(Object.keys(out).slice(0, 3), ['apiVersion', 'kind', 'metadata']);
  });

  test('pruneUnknown and applyDefaults on their own', () => {
    const value = { spec: { color: 'red', bogus: 1, tags: ['a'] }, status: {} };
    assert.deepEqual(pruneUnknown(schema, value), [['spec', 'bogus'], ['status']]);
    const defaulted: Record<string, unknown> = { spec: {} };
    applyDefaults(schema, defaulted);
    assert.deepEqual(defaulted, { spec: { replicas: 1, nested: { depth: 3 } } });
    assert.deepEqual(schemaProblems(schema, { spec: { color: 'red' } }), []);
  });
});
