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
    // As the real server: negative replicas are refused with the field named.
    api = await startTestApiServer({
      validate: (obj) =>
        ((obj.spec as { replicas?: number }).replicas ?? 0) < 0
          ? [{ field: 'spec.replicas', message: 'Invalid value: -1: must be greater than or equal to 0' }]
          : [],
    });
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

  it('reopens the editor with the reasons when the server finds the change invalid, then sends the fixed one', async () => {
    const script = editor(
      'invalid-then-fixed.sh',
      `if grep -q 'was not valid' "$1"; then sed -i 's/^  replicas: -1$/  replicas: 4/' "$1"; else sed -i 's/^  replicas: 2$/  replicas: -1/' "$1"; fi`,
    );
    const run = await edit(script);
    assert.equal(run.err, 'error: deployments.apps "web" is invalid\n');
    assert.equal(run.out, 'deployment.apps/web edited\n');
    assert.equal(run.code, 0);
    // What the editor saw the second time: kubectl's header, the reasons, then the user's own text.
    const reopened = readFileSync(join(dir, 'seen'), 'utf8');
    assert.ok(
      reopened.includes(
        '# reopened with the relevant failures.\n#\n# deployments.apps "web" was not valid:\n# * spec.replicas: Invalid value: -1: must be greater than or equal to 0\n#\n',
      ),
      reopened,
    );
    assert.match(reopened, /\n {2}replicas: -1\n/);
    assert.equal((api.objects.get(KEY)!.spec as { replicas: number }).replicas, 4);
  });

  it('gives up, keeping the file, when the reopened file is saved unchanged', async () => {
    const run = await edit(editor('invalid-twice.sh', `sed -i 's/^  replicas: [0-9][0-9]*$/  replicas: -1/' "$1"`));
    assert.equal(run.code, 1);
    const m =
      /^error: deployments\.apps "web" is invalid\nerror: Edit cancelled, no valid changes were saved\.\nA copy of your changes has been stored to "(\S+)"\n$/.exec(
        run.err,
      );
    assert.ok(m, run.err);
    rmSync(m[1]!);
    assert.equal((api.objects.get(KEY)!.spec as { replicas: number }).replicas, 4);
  });

  it('on a conflict (the user pinned another resourceVersion) says so in kubectl words and keeps the file', async () => {
    const run = await edit(editor('pin.sh', `sed -i -e 's/^  resourceVersion: .*$/  resourceVersion: "1"/' -e 's/^  replicas: 4$/  replicas: 5/' "$1"`));
    assert.equal(run.code, 1);
    const m =
      /^error: deployments\.apps "web" could not be patched: Operation cannot be fulfilled on deployments "web": the object has been modified; please apply your changes to the latest version and try again\nYour changes are in "(\S+)"; run `minik8s edit deployment\.apps\/web` to edit the latest version\.\n$/.exec(
        run.err,
      );
    assert.ok(m, run.err);
    assert.match(readFileSync(m[1]!, 'utf8'), /replicas: 5/);
    rmSync(m[1]!);
    assert.equal((api.objects.get(KEY)!.spec as { replicas: number }).replicas, 4);
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
