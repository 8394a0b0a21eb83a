// The root CA publisher's plan for one namespace, as a table.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ConfigMap } from '../../core/api/configmap.js';
import type { Namespace } from '../../core/api/namespace.js';
import { planRootCa, type RootCaAction } from './root-ca-publisher.js';

const ns = (extra: Partial<Namespace['metadata']> = {}, phase?: string) =>
  ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team', ...extra }, ...(phase ? { status: { phase } } : {}) }) as Namespace;
const cm = (data: Record<string, string>, binaryData?: Record<string, string>) =>
  ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'kube-root-ca.crt', namespace: 'team', resourceVersion: '7' },
    data,
    ...(binaryData ? { binaryData } : {}),
  }) as ConfigMap;

describe('planRootCa', () => {
  const cases: [string, Namespace | undefined, ConfigMap | undefined, RootCaAction][] = [
    ['a new namespace gets the ConfigMap', ns(), undefined, { type: 'create' }],
    ['an up-to-date ConfigMap is left alone', ns(), cm({ 'ca.crt': 'CA' }), { type: 'none' }],
    ['another CA is replaced', ns(), cm({ 'ca.crt': 'OLD' }), { type: 'update', resourceVersion: '7' }],
    ['extra keys are removed', ns(), cm({ 'ca.crt': 'CA', extra: 'x' }), { type: 'update', resourceVersion: '7' }],
    ['binaryData is removed', ns(), cm({ 'ca.crt': 'CA' }, { b: 'eA==' }), { type: 'update', resourceVersion: '7' }],
    ['a namespace being deleted gets nothing', ns({ deletionTimestamp: '2026-01-01T00:00:00Z' }), undefined, { type: 'none' }],
    ['a Terminating namespace gets nothing', ns({}, 'Terminating'), undefined, { type: 'none' }],
    ['a namespace that is gone gets nothing', undefined, undefined, { type: 'none' }],
  ];
  for (const [what, namespace, current, want] of cases) {
    it(what, () => assert.deepEqual(planRootCa(namespace, current, 'CA'), want));
  }
});
