// stampJson must produce exactly what parsing, stamping and serialising would.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { stampJson } from './object-service.js';

const cases: [string, unknown][] = [
  ['usual shape', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'a', namespace: 'default' }, spec: { x: 1 } }],
  ['empty metadata', { apiVersion: 'v1', kind: 'Pod', metadata: {}, spec: {} }],
  [
    'nested metadata text in spec',
    { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: { template: { metadata: { labels: { a: 'b' } } } } },
  ],
  ['other key order falls back to parsing', { kind: 'Pod', apiVersion: 'v1', spec: { template: { metadata: {} } }, metadata: { name: 'z' } }],
];
for (const [name, obj] of cases) {
  test(`stampJson: ${name}`, () => {
    const stamped = JSON.parse(stampJson(JSON.stringify(obj), 42));
    const want = structuredClone(obj) as { metadata: Record<string, unknown> };
    want.metadata.resourceVersion = '42';
    assert.deepEqual(stamped, want);
  });
}
