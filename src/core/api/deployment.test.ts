// Deployment and ReplicaSet: defaults, selector/template rules, strategy rules and columns.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { deploymentKind, resolveIntOrPercent, type Deployment } from './deployment.js';
import { replicaSetKind, type ReplicaSet } from './replicaset.js';
import { validateObject } from './validate.js';

const template = {
  metadata: { labels: { app: 'web', tier: 'front' } },
  spec: {
    containers: [
      { name: 'c', image: 'busybox' },
      { name: 'd', image: 'nginx:1' },
    ],
  },
};
const deploy = (spec: Record<string, unknown>) =>
  validateObject(deploymentKind, {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'd' },
    spec: { selector: { matchLabels: { app: 'web' } }, template, ...spec },
  }) as Deployment;
const rs = (spec: Record<string, unknown>) =>
  validateObject(replicaSetKind, {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name: 'r' },
    spec: { selector: { matchLabels: { app: 'web' } }, template, ...spec },
  }) as ReplicaSet;
const fieldsOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return (err as { details: { causes: { field: string }[] } }).details.causes.map((c) => c.field);
  }
  return [];
};

describe('deployment', () => {
  it('fills defaults', () => {
    const d = deploy({});
    assert.equal(d.spec.replicas, 1);
    assert.deepEqual(d.spec.strategy, { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } });
    assert.deepEqual([d.spec.minReadySeconds, d.spec.revisionHistoryLimit, d.spec.progressDeadlineSeconds], [0, 10, 600]);
    assert.equal(d.spec.template.spec.restartPolicy, 'Always');
    assert.equal(d.spec.template.spec.containers[0].imagePullPolicy, 'Always');
  });
  it('keeps Recreate without a rollingUpdate block', () => assert.deepEqual(deploy({ strategy: { type: 'Recreate' } }).spec.strategy, { type: 'Recreate' }));
  const bad: [string, Record<string, unknown>, string][] = [
    ['selector not matching', { selector: { matchLabels: { app: 'db' } } }, 'spec.template.metadata.labels'],
    [
      'selector expression not matching',
      { selector: { matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['front'] }] } },
      'spec.template.metadata.labels',
    ],
    ['empty selector', { selector: {} }, 'spec.selector'],
    ['Recreate with rollingUpdate', { strategy: { type: 'Recreate', rollingUpdate: { maxSurge: 1 } } }, 'spec.strategy.rollingUpdate'],
    ['both zero', { strategy: { rollingUpdate: { maxSurge: 0, maxUnavailable: '0%' } } }, 'spec.strategy.rollingUpdate.maxUnavailable'],
    ['bad percent', { strategy: { rollingUpdate: { maxSurge: '25 percent' } } }, 'spec.strategy.rollingUpdate.maxSurge'],
    ['maxUnavailable over 100%', { strategy: { rollingUpdate: { maxUnavailable: '150%' } } }, 'spec.strategy.rollingUpdate.maxUnavailable'],
    ['negative replicas', { replicas: -1 }, 'spec.replicas'],
  ];
  for (const [name, spec, field] of bad)
    it(`rejects ${name}`, () => assert.ok(fieldsOf(() => deploy(spec)).includes(field), JSON.stringify(fieldsOf(() => deploy(spec)))));
  it('prints READY, UP-TO-DATE, AVAILABLE and wide columns', () => {
    const d = { ...deploy({ replicas: 3 }), status: { readyReplicas: 2, updatedReplicas: 3, availableReplicas: 2 } } as Deployment;
    const values = Object.fromEntries(deploymentKind.columns!.map((c) => [c.name, c.value(d)]));
    assert.deepEqual(values, { READY: '2/3', 'UP-TO-DATE': '3', AVAILABLE: '2', CONTAINERS: 'c,d', IMAGES: 'busybox,nginx:1', SELECTOR: 'app=web' });
  });
  const resolve: [number | string, number, boolean, number][] = [
    [2, 10, true, 2],
    ['25%', 10, true, 3],
    ['25%', 10, false, 2],
    ['0%', 5, true, 0],
    ['100%', 4, false, 4],
  ];
  for (const [value, total, roundUp, want] of resolve)
    it(`resolveIntOrPercent(${value}, ${total}, ${roundUp}) = ${want}`, () => assert.equal(resolveIntOrPercent(value, { total, roundUp }), want));
});

describe('replicaset', () => {
  it('fills defaults and prints columns', () => {
    const r = { ...rs({}), status: { replicas: 1, readyReplicas: 1 } } as ReplicaSet;
    assert.equal(r.spec.replicas, 1);
    const values = Object.fromEntries(replicaSetKind.columns!.map((c) => [c.name, c.value(r)]));
    assert.deepEqual(values, { DESIRED: '1', CURRENT: '1', READY: '1', CONTAINERS: 'c,d', IMAGES: 'busybox,nginx:1', SELECTOR: 'app=web' });
  });
  it('rejects a selector that does not match the template', () =>
    assert.deepEqual(
      fieldsOf(() => rs({ selector: { matchLabels: { app: 'x' } } })),
      ['spec.template.metadata.labels'],
    ));
  it('accepts template metadata as kubectl writes it', () =>
    assert.equal(rs({ template: { ...template, metadata: { ...template.metadata, creationTimestamp: null } } }).spec.replicas, 1));
});
