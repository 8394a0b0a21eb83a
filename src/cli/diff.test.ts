// `minik8s diff -f`: the live object against the dry-run apply, masked as kubectl masks it, with kubectl diff's exit codes.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { KubeObject } from '../core/api/meta.js';
import { runCliAgainst } from './cli-test-run.js';
import { diffFileName, maskForDiff, unifiedDiff } from './diff.js';
import { startTestApiServer, type TestApiServer } from './test-api-server.js';

const now = new Date('2026-11-26T08:00:00Z');
const manifest = (replicas: number, image = 'nginx:1.27') => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: ${replicas}
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: web
        image: ${image}
`;

describe('diff', () => {
  let api: TestApiServer;
  let dir: string;
  const file = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
  before(async () => {
    api = await startTestApiServer();
    dir = mkdtempSync(join(tmpdir(), 'minik8s-diff-'));
    const applied = await runCliAgainst(api.url, ['apply', '-f', file('v1.yaml', manifest(2))], { now });
    assert.equal(applied.code, 0, applied.err);
  });
  after(async () => {
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('shows a changed field as a unified diff and exits 1, writing nothing', async () => {
    const before = JSON.stringify([...api.objects.values()]);
    const run = await runCliAgainst(api.url, ['diff', '-f', file('v2.yaml', manifest(3))], { now });
    assert.equal(run.code, 1, run.err);
    const lines = run.out.split('\n');
    assert.match(lines[0]!, /^diff -u -N \/tmp\/LIVE-\d+\/apps\.v1\.Deployment\.default\.web \/tmp\/MERGED-\d+\/apps\.v1\.Deployment\.default\.web$/);
    assert.match(lines[1]!, /^--- \/tmp\/LIVE-\d+\/apps\.v1\.Deployment\.default\.web\t2026-11-26 08:00:00\.000000000 \+0000$/);
    assert.match(lines[2]!, /^\+\+\+ \/tmp\/MERGED-\d+\/apps\.v1\.Deployment\.default\.web\t/);
    assert.match(lines[3]!, /^@@ -\d+,\d+ \+\d+,\d+ @@$/);
    assert.deepEqual(
      lines.filter((l) => /^[-+] /.test(l)),
      ['-  replicas: 2', '+  replicas: 3'],
    );
    // The resourceVersion and last-applied annotation change too, but are masked.
    assert.doesNotMatch(run.out, /resourceVersion|last-applied/);
    assert.equal(JSON.stringify([...api.objects.values()]), before);
  });

  it('prints nothing and exits 0 when the manifest is what is live', async () => {
    const run = await runCliAgainst(api.url, ['diff', '-f', join(dir, 'v1.yaml')], { now });
    assert.equal(run.err, '');
    assert.equal(run.out, '');
    assert.equal(run.code, 0);
  });

  it('diffs a missing object against nothing (a dry-run create)', async () => {
    const run = await runCliAgainst(
      api.url,
      ['diff', '-f', file('svc.yaml', 'apiVersion: v1\nkind: Service\nmetadata:\n  name: db\nspec:\n  ports:\n  - port: 5432\n')],
      {
        now,
      },
    );
    assert.equal(run.code, 1, run.err);
    assert.match(run.out, /^diff -u -N \/tmp\/LIVE-\d+\/v1\.Service\.default\.db /);
    assert.match(run.out, /\n@@ -0,0 \+1,\d+ @@\n\+apiVersion: v1\n/);
    assert.equal(api.objects.has('/api/v1/namespaces/default/services/db'), false);
  });

  it('exits 2 on an error, so that it differs from "differences found"', async () => {
    const run = await runCliAgainst(api.url, ['diff', '-f', join(dir, 'absent.yaml')], { now });
    assert.equal(run.code, 2);
    assert.match(run.err, /^error: the path ".*absent\.yaml" does not exist\n$/);
  });

  it('masks what every write changes, and names files as kubectl does', async () => {
    const obj = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'c',
        resourceVersion: '9',
        generation: 2,
        managedFields: [],
        annotations: { 'minik8s.io/last-applied-configuration': '{}', keep: 'me' },
      },
    } as unknown as KubeObject;
    assert.deepEqual(maskForDiff(obj)?.metadata, { name: 'c', annotations: { keep: 'me' } });
    assert.equal(diffFileName({ group: '', version: 'v1', kind: 'Namespace' }, undefined, 'x'), 'v1.Namespace..x');
    const text = await unifiedDiff({ live: 'a\nb\n', merged: 'a\nc\n', liveDir: '/L', mergedDir: '/M', file: 'f', now });
    assert.match(text, /\n@@ -1,2 \+1,2 @@\n a\n-b\n\+c\n$/);
    assert.equal(await unifiedDiff({ live: 'same\n', merged: 'same\n', liveDir: '/L', mergedDir: '/M', file: 'f', now }), '');
  });
});
