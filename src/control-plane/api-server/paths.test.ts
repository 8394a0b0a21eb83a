// Table tests for resource path parsing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseResourcePath } from './paths.js';
import { NotFoundError } from '../../core/errors.js';

const ok: [string, { kind: string; namespace?: string; name?: string; subresource?: string }][] = [
  ['/api/v1/namespaces', { kind: 'Namespace' }],
  ['/api/v1/namespaces/default', { kind: 'Namespace', name: 'default' }],
  ['/api/v1/namespaces/default/status', { kind: 'Namespace', name: 'default', subresource: 'status' }],
  ['/api/v1/pods', { kind: 'Pod' }],
  ['/api/v1/namespaces/default/pods', { kind: 'Pod', namespace: 'default' }],
  ['/api/v1/namespaces/default/pods/web', { kind: 'Pod', namespace: 'default', name: 'web' }],
  ['/api/v1/namespaces/default/pods/web/status', { kind: 'Pod', namespace: 'default', name: 'web', subresource: 'status' }],
  ['/api/v1/namespaces/pods/pods/pods', { kind: 'Pod', namespace: 'pods', name: 'pods' }],
  ['/apis/apps/v1/namespaces/prod/deployments/api', { kind: 'Deployment', namespace: 'prod', name: 'api' }],
  ['/apis/autoscaling/v2/horizontalpodautoscalers', { kind: 'HorizontalPodAutoscaler' }],
  ['/api/v1/nodes/n1', { kind: 'Node', name: 'n1' }],
];

for (const [path, want] of ok) {
  test(`parses ${path}`, () => {
    const t = parseResourcePath(path)!;
    assert.equal(t.def.kind, want.kind);
    assert.equal(t.namespace, want.namespace);
    assert.equal(t.name, want.name);
    assert.equal(t.subresource, want.subresource);
  });
}

const notFound = [
  '/api/v1/widgets',
  '/api/v2/pods',
  '/apis/apps/v1/pods',
  '/api/v1/namespaces/default/pods/web/exec/extra',
  '/api/v1/namespaces/default/endpoints/x/status',
  '/api/v1/namespaces/default/pods/web/bogus',
];
for (const path of notFound) {
  test(`rejects ${path}`, () => {
    assert.throws(() => parseResourcePath(path), NotFoundError);
  });
}

test('non-resource paths are left to other routes', () => {
  assert.equal(parseResourcePath('/healthz'), undefined);
  assert.equal(parseResourcePath('/api'), undefined);
  assert.equal(parseResourcePath('/apis/apps'), undefined);
});
