// validateObject: Kubernetes-shaped 422 messages and causes built from valibot issues.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { InvalidError } from '../errors.js';
import type { KindDefinition } from './kind.js';
import { deploymentKind } from './deployment.js';
import { podKind } from './pod.js';
import { serviceKind } from './service.js';
import { shortValue, validateObject } from './validate.js';

const container = { name: 'c', image: 'busybox' };
const pod = (spec: Record<string, unknown>, metadata: Record<string, unknown> = { name: 'web' }) => ({ apiVersion: 'v1', kind: 'Pod', metadata, spec });

function invalid(def: KindDefinition, input: unknown): InvalidError {
  try {
    validateObject(def, input);
  } catch (err) {
    assert.ok(err instanceof InvalidError, String(err));
    return err;
  }
  assert.fail('expected InvalidError');
}

describe('validateObject', () => {
  it('returns the defaulted object', () => {
    const out = validateObject(podKind, pod({ containers: [container] }));
    assert.equal((out.spec as { restartPolicy: string }).restartPolicy, 'Always');
  });

  it('formats several causes in brackets, Kubernetes style', () => {
    const err = invalid(podKind, pod({ containers: [{ name: 'c' }] }, { name: 'Web' }));
    assert.equal(err.code, 422);
    assert.match(
      err.message,
      /^Pod "Web" is invalid: \[metadata\.name: Invalid value: "Web": a lowercase RFC 1123 subdomain .*, spec\.containers\[0\]\.image: Required value\]$/,
    );
    assert.deepEqual(
      err.details.causes!.map((c) => [c.field, c.reason]),
      [
        ['metadata.name', 'FieldValueInvalid'],
        ['spec.containers[0].image', 'FieldValueRequired'],
      ],
    );
    assert.equal(err.details.name, 'Web');
    assert.equal(err.details.kind, 'Pod');
  });

  it('formats one cause without brackets', () => {
    const err = invalid(podKind, pod({ containers: [{ name: 'c' }] }));
    assert.equal(err.message, 'Pod "web" is invalid: spec.containers[0].image: Required value');
  });

  const cases: { name: string; def?: KindDefinition; input: unknown; field: string; reason: string; message: RegExp }[] = [
    {
      name: 'unknown field',
      input: pod({ containers: [container], foo: 1 }),
      field: 'spec.foo',
      reason: 'FieldValueNotSupported',
      message: /^unknown field "spec\.foo"$/,
    },
    {
      name: 'unknown top-level field',
      input: { ...pod({ containers: [container] }), spek: {} },
      field: 'spek',
      reason: 'FieldValueNotSupported',
      message: /unknown field "spek"/,
    },
    {
      name: 'picklist',
      input: pod({ containers: [container], restartPolicy: 'Sometimes' }),
      field: 'spec.restartPolicy',
      reason: 'FieldValueNotSupported',
      message: /^Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"$/,
    },
    {
      name: 'wrong type',
      input: pod({ containers: [{ ...container, ports: [{ containerPort: '80' }] }] }),
      field: 'spec.containers[0].ports[0].containerPort',
      reason: 'FieldValueTypeInvalid',
      message: /^Invalid value: "80": must be of type number$/,
    },
    {
      name: 'out of range',
      input: pod({ containers: [{ ...container, ports: [{ containerPort: 70000 }] }] }),
      field: 'spec.containers[0].ports[0].containerPort',
      reason: 'FieldValueInvalid',
      message: /^Invalid value: 70000: must be less than or equal to 65535$/,
    },
    {
      name: 'map entry',
      input: pod({ containers: [{ ...container, resources: { limits: { cpu: 'lots' } } }] }),
      field: 'spec.containers[0].resources.limits[cpu]',
      reason: 'FieldValueInvalid',
      message: /quantities must match the regular expression/,
    },
    {
      name: 'duplicate',
      input: pod({ containers: [container, container] }),
      field: 'spec.containers[1].name',
      reason: 'FieldValueDuplicate',
      message: /^Duplicate value: "c"$/,
    },
    { name: 'no containers', input: pod({ containers: [] }), field: 'spec.containers', reason: 'FieldValueRequired', message: /^Required value/ },
    {
      name: 'missing name',
      input: pod({ containers: [container] }, {}),
      field: 'metadata.name',
      reason: 'FieldValueRequired',
      message: /name or generateName is required/,
    },
    {
      name: 'missing metadata',
      input: { apiVersion: 'v1', kind: 'Pod', spec: { containers: [container] } },
      field: 'metadata',
      reason: 'FieldValueRequired',
      message: /^Required value$/,
    },
    {
      name: 'spec of the wrong type',
      input: pod('run' as never),
      field: 'spec',
      reason: 'FieldValueTypeInvalid',
      message: /^Invalid value: "run": must be of type object$/,
    },
    {
      name: 'service port names',
      def: serviceKind,
      input: {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 's' },
        spec: {
          ports: [
            { name: 'a', port: 80 },
            { name: 'a', port: 81 },
          ],
        },
      },
      field: 'spec.ports[1].name',
      reason: 'FieldValueDuplicate',
      message: /Duplicate value: "a"/,
    },
    {
      name: 'selector versus template',
      def: deploymentKind,
      input: {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'd' },
        spec: { selector: { matchLabels: { app: 'y' } }, template: { metadata: { labels: { app: 'x' } }, spec: { containers: [container] } } },
      },
      field: 'spec.template.metadata.labels',
      reason: 'FieldValueInvalid',
      message: /^Invalid value: "app=x": `selector` does not match template `labels`$/,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const err = invalid(c.def ?? podKind, c.input);
      const cause = err.details.causes!.find((x) => x.field === c.field);
      assert.ok(cause, `no cause for ${c.field} in ${JSON.stringify(err.details.causes)}`);
      assert.equal(cause.reason, c.reason);
      assert.match(cause.message, c.message);
    });
  }

  it('never echoes long values in full', () => {
    const long = 'x'.repeat(10_000);
    const err = invalid(podKind, pod({ containers: [{ ...container, name: long }] }));
    assert.ok(err.message.length < 1000, err.message);
    assert.ok(!err.message.includes('x'.repeat(100)));
  });

  it('keeps the message short when there are many problems', () => {
    const containers = Array.from({ length: 200 }, (_, i) => ({ name: `C${i}` }));
    const err = invalid(podKind, pod({ containers }));
    assert.match(err.message, /and \d+ more\]$/);
    assert.ok(err.message.length < 4096);
  });
});

describe('shortValue', () => {
  const cases: [unknown, string][] = [
    ['a', '"a"'],
    [5, '5'],
    [true, 'true'],
    [null, 'null'],
    [{}, '"object"'],
    [[1], '"array"'],
    ['y'.repeat(100), `"${'y'.repeat(64)}..."`],
  ];
  for (const [value, want] of cases) it(`${JSON.stringify(value).slice(0, 20)} -> ${want.slice(0, 20)}`, () => assert.equal(shortValue(value), want));
});
