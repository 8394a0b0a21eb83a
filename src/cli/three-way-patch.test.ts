// Table tests for apply's three-way merge patch and its last-applied bookkeeping.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { canonicalJson } from '../core/api/canonical-json.js';
import { LAST_APPLIED_ANNOTATION, lastApplied, threeWayMergePatch, withLastApplied } from './three-way-patch.js';

describe('threeWayMergePatch', () => {
  const cases: { name: string; original: unknown; modified: unknown; current: unknown; want: unknown }[] = [
    {
      name: 'nothing changed',
      original: { spec: { replicas: 2 } },
      modified: { spec: { replicas: 2 } },
      current: { spec: { replicas: 2, paused: false }, status: { ready: 2 } },
      want: {},
    },
    {
      name: 'a changed scalar',
      original: { spec: { replicas: 2 } },
      modified: { spec: { replicas: 3 } },
      current: { spec: { replicas: 2 } },
      want: { spec: { replicas: 3 } },
    },
    {
      name: 'a field added to the manifest',
      original: { metadata: { name: 'a' } },
      modified: { metadata: { name: 'a', labels: { app: 'x' } } },
      current: { metadata: { name: 'a', uid: 'u1' } },
      want: { metadata: { labels: { app: 'x' } } },
    },
    {
      name: 'a field removed from the manifest is deleted with null',
      original: { metadata: { labels: { app: 'x', tier: 'fe' } } },
      modified: { metadata: { labels: { app: 'x' } } },
      current: { metadata: { labels: { app: 'x', tier: 'fe', owner: 'ops' } } },
      want: { metadata: { labels: { tier: null } } },
    },
    {
      name: 'a removed field already gone from the live object needs no patch',
      original: { spec: { paused: true } },
      modified: { spec: {} },
      current: { spec: {} },
      want: {},
    },
    {
      name: 'fields others set and the manifest never had are kept',
      original: { spec: { replicas: 1 } },
      modified: { spec: { replicas: 1 } },
      current: { spec: { replicas: 1, nodeName: 'n1' } },
      want: {},
    },
    {
      name: 'no last-applied: nothing is pruned',
      original: undefined,
      modified: { spec: { a: 1 } },
      current: { spec: { a: 1, b: 2 } },
      want: {},
    },
    {
      name: 'arrays are replaced whole',
      original: { spec: { containers: [{ name: 'a', image: 'x:1' }] } },
      modified: { spec: { containers: [{ name: 'a', image: 'x:2' }] } },
      current: { spec: { containers: [{ name: 'a', image: 'x:1', imagePullPolicy: 'IfNotPresent' }] } },
      want: { spec: { containers: [{ name: 'a', image: 'x:2' }] } },
    },
    {
      name: 'an unchanged array the server defaulted into is left alone',
      original: { spec: { containers: [{ name: 'a', ports: [{ containerPort: 80 }] }] } },
      modified: { spec: { containers: [{ name: 'a', ports: [{ containerPort: 80 }] }] } },
      current: { spec: { containers: [{ name: 'a', imagePullPolicy: 'Always', ports: [{ containerPort: 80, protocol: 'TCP' }] }] } },
      want: {},
    },
    {
      name: 'named elements admission added to an unchanged list are left alone',
      original: { spec: { volumes: [{ name: 'data', emptyDir: {} }] } },
      modified: { spec: { volumes: [{ name: 'data', emptyDir: {} }] } },
      current: {
        spec: {
          volumes: [
            { name: 'kube-api-access-x1', projected: {} },
            { name: 'data', emptyDir: {} },
          ],
        },
      },
      want: {},
    },
    {
      name: 'a named element missing from the live list resends the list',
      original: { spec: { volumes: [{ name: 'data', emptyDir: {} }] } },
      modified: { spec: { volumes: [{ name: 'data', emptyDir: {} }] } },
      current: { spec: { volumes: [{ name: 'other', emptyDir: {} }] } },
      want: { spec: { volumes: [{ name: 'data', emptyDir: {} }] } },
    },
    {
      name: 'a field dropped from an array element resends the array',
      original: { spec: { containers: [{ name: 'a', ports: [{ containerPort: 80 }] }] } },
      modified: { spec: { containers: [{ name: 'a' }] } },
      current: { spec: { containers: [{ name: 'a', ports: [{ containerPort: 80, protocol: 'TCP' }] }] } },
      want: { spec: { containers: [{ name: 'a' }] } },
    },
    {
      name: 'an array someone else changed is restored',
      original: { spec: { args: ['a'] } },
      modified: { spec: { args: ['a'] } },
      current: { spec: { args: ['b'] } },
      want: { spec: { args: ['a'] } },
    },
    {
      name: 'status is never touched',
      original: { status: { phase: 'A' } },
      modified: { status: { phase: 'B' }, spec: { x: 1 } },
      current: { status: { phase: 'C' }, spec: { x: 1 } },
      want: {},
    },
    {
      name: 'an object replacing a scalar is sent whole',
      original: { spec: { v: 1 } },
      modified: { spec: { v: { a: 1 } } },
      current: { spec: { v: 1 } },
      want: { spec: { v: { a: 1 } } },
    },
    {
      name: 'an explicit null removes a live field',
      original: {},
      modified: { spec: { x: null } },
      current: { spec: { x: 5 } },
      want: { spec: { x: null } },
    },
    {
      name: 'a whole removed section',
      original: { spec: { a: 1 }, data: { k: 'v' } },
      modified: { spec: { a: 1 } },
      current: { spec: { a: 1 }, data: { k: 'v' } },
      want: { data: null },
    },
  ];
  for (const c of cases) {
    it(c.name, () => assert.deepEqual(threeWayMergePatch({ original: c.original, modified: c.modified, current: c.current }), c.want));
  }
});

describe('last-applied annotation', () => {
  const manifest = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', resourceVersion: '7', uid: 'u', annotations: { note: 'hi' } },
    spec: { containers: [{ name: 'c', image: 'nginx' }] },
    status: { phase: 'Running' },
  };

  it('drops status and server metadata, and records itself without the annotation', () => {
    const out = withLastApplied(manifest);
    const meta = out.metadata as { annotations: Record<string, string>; resourceVersion?: string; uid?: string };
    assert.equal(out.status, undefined);
    assert.equal(meta.resourceVersion, undefined);
    assert.equal(meta.uid, undefined);
    assert.equal(meta.annotations.note, 'hi');
    const recorded = JSON.parse(meta.annotations[LAST_APPLIED_ANNOTATION]!) as { metadata: { annotations: Record<string, string> } };
    assert.deepEqual(recorded.metadata.annotations, { note: 'hi' });
    assert.deepEqual(lastApplied(out), recorded);
  });

  it('is stable under key order and re-application', () => {
    const reordered = { spec: manifest.spec, metadata: { annotations: { note: 'hi' }, name: 'web' }, kind: 'Pod', apiVersion: 'v1' };
    const a = withLastApplied(manifest);
    const b = withLastApplied(reordered);
    assert.equal(canonicalJson(a), canonicalJson(b));
    assert.deepEqual(withLastApplied(a), a);
  });

  it('a second apply of the same manifest is a no-op; a dropped annotation is pruned', () => {
    const first = withLastApplied(manifest);
    const live = { ...first, metadata: { ...(first.metadata as object), uid: 'u', resourceVersion: '8' }, status: { phase: 'Running' } };
    assert.deepEqual(threeWayMergePatch({ original: lastApplied(live), modified: withLastApplied(manifest), current: live }), {});
    const second = withLastApplied({ ...manifest, metadata: { name: 'web' } });
    const patch = threeWayMergePatch({ original: lastApplied(live), modified: second, current: live }) as {
      metadata: { annotations: Record<string, unknown> };
    };
    assert.equal(patch.metadata.annotations.note, null);
    assert.equal(typeof patch.metadata.annotations[LAST_APPLIED_ANNOTATION], 'string');
  });

  it('a corrupt annotation counts as none', () => {
    assert.equal(lastApplied({ metadata: { annotations: { [LAST_APPLIED_ANNOTATION]: '{nope' } } }), undefined);
    assert.equal(lastApplied({ metadata: {} }), undefined);
  });
});
