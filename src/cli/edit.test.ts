// `minik8s edit`: the editor sees kubectl's header and the object; what changed goes up as a merge patch; no change, bad YAML and refusals are reported as kubectl does.
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { KubeObject } from '../core/api/meta.js';
import { runCliAgainst } from './cli-test-run.js';
import { checkIdentity, editPatch, editorCommand } from './edit.js';
import { startTestApiServer, type TestApiServer } from './test-api-server.js';

const KEY = '/apis/apps/v1/namespaces/default/deployments/web';

describe('edit', () => {
  let api: TestApiServer;
  let dir: string;
  /** An editor: a shell script that copies the file it is given aside, then runs `body` on it ($1). */
  const editor = (name: string, body: string) => {
    const path = join(dir, name);
    writeFileSync(path, `#!/bin/sh\nstat -c %a "$1" > "${dir}/mode"\ncp "$1" "${dir}/seen"\n${body}\n`);
    chmodSync(path, 0o755);
    return path;
  };
  const edit = (script: string, args: string[] = ['deployment/web']) =>
    runCliAgainst(api.url, ['edit', ...args], { env: { PATH: process.env.PATH, EDITOR: script } });

  before(async () => {
    api = await startTestApiServer();
    dir = mkdtempSync(join(tmpdir(), 'minik8s-edit-test-'));
    api.objects.set(KEY, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'default', labels: { app: 'web' }, resourceVersion: '5', managedFields: [{ manager: 'x' }] },
      spec: { replicas: 2, selector: { matchLabels: { app: 'web' } } },
      status: { replicas: 2 },
    });
  });
  after(async () => {
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('sends the edited label as a merge patch and says "edited"', async () => {
    const run = await edit(editor('label.sh', `sed -i 's/^    app: web$/    app: web\\n    tier: front/' "$1"`));
    assert.equal(run.err, '');
    assert.equal(run.out, 'deployment.apps/web edited\n');
    assert.equal(run.code, 0);
    const seen = readFileSync(join(dir, 'seen'), 'utf8');
    assert.match(seen, /^# Please edit the object below\. Lines beginning with a '#' will be ignored,\n/);
    assert.match(seen, /\napiVersion: apps\/v1\nkind: Deployment\nmetadata:\n/);
    assert.doesNotMatch(seen, /managedFields/);
    assert.equal(readFileSync(join(dir, 'mode'), 'utf8').trim(), '600');
    const patch = api.requests.find((r) => r.method === 'PATCH');
    assert.deepEqual(JSON.parse(patch!.body), { metadata: { labels: { tier: 'front' } } });
    assert.deepEqual((api.objects.get(KEY)!.metadata as { labels: unknown }).labels, { app: 'web', tier: 'front' });
  });

  it('cancels without a request when nothing changed, and removes its file', async () => {
    const before = api.requests.length;
    const run = await edit(editor('none.sh', 'true'), ['deployment', 'web']);
    assert.equal(run.code, 0);
    assert.equal(run.err, 'Edit cancelled, no changes made.\n');
    assert.equal(run.out, '');
    assert.deepEqual(
      api.requests.slice(before).map((r) => r.method),
      ['GET'],
    );
  });

  it('keeps the file and says where when the YAML does not parse', async () => {
    const run = await edit(editor('broken.sh', `printf 'spec: [\\n' >> "$1"`));
    assert.equal(run.code, 1);
    const m = /^error: error parsing (\S+): yaml: .*\nA copy of your changes has been stored to "(\S+)"\n$/.exec(run.err);
    assert.ok(m, run.err);
    assert.equal(m[1], m[2]);
    assert.ok(existsSync(m[2]!));
    assert.equal(statSync(m[2]!).mode & 0o777, 0o600);
    rmSync(m[2]!);
  });

  it('refuses a renamed object, keeping the file, and reports a failed editor', async () => {
    const run = await edit(editor('rename.sh', `sed -i 's/^kind: Deployment$/kind: ReplicaSet/' "$1"`));
    assert.equal(run.code, 1);
    assert.match(run.err, /^error: At least one of apiVersion, kind and name was changed\nA copy of your changes has been stored to "(\S+)"\n$/);
    rmSync(/"(\S+)"/.exec(run.err)![1]!);
    const failing = await edit(editor('fail.sh', 'exit 3'));
    assert.equal(failing.code, 1);
    assert.match(failing.err, /^error: there was a problem with the editor ".*fail\.sh" \(exit status 3\)\n$/);
  });

  it('computes patches and picks the editor as kubectl does', () => {
    const a = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', labels: { x: '1' } }, data: { k: 'v' } } as unknown as KubeObject;
    const b = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { k: 'w' } } as unknown as KubeObject;
    assert.deepEqual(editPatch(a, b), { metadata: { labels: null }, data: { k: 'w' } });
    assert.throws(() => checkIdentity(a, { ...b, metadata: { name: 'd' } }), /At least one of apiVersion, kind and name was changed/);
    assert.equal(editorCommand({ KUBE_EDITOR: 'nano', EDITOR: 'vim' }), 'nano');
    assert.equal(editorCommand({ EDITOR: 'vim' }), 'vim');
    assert.equal(editorCommand({}), 'vi');
  });
});
