// Stock kubectl against a real master over TLS with DATA_DIR/admin.kubeconfig: what its users type, asserted on what it prints and on what the server stored.
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startMaster, type MasterProcess } from './helpers/master.js';

const KUBECTL_VERSION = spawnSync('kubectl', ['version', '--client', '-o', 'json'], { encoding: 'utf8' });

/** kubectl's exit code and output; never throws, so tests assert on what a user would see. */
function kubectl(master: MasterProcess, args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      'kubectl',
      ['--kubeconfig', master.kubeconfig!, ...args],
      { env: { ...process.env, HOME: master.home }, timeout: 60_000 },
      (err, stdout, stderr) => {
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
      },
    );
    if (input !== undefined) child.stdin!.end(input);
  });
}

describe('stock kubectl', { skip: KUBECTL_VERSION.status !== 0 ? 'kubectl is not on PATH' : false }, () => {
  let master: MasterProcess;
  let dir: string;
  before(async () => {
    const version = JSON.parse(KUBECTL_VERSION.stdout).clientVersion.gitVersion;
    console.log(`# kubectl ${version}`);
    dir = mkdtempSync(join(tmpdir(), 'minik8s-kubectl-'));
    master = await startMaster({ tls: true, registry: false });
  });
  after(async () => {
    await master?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('prints the kind in a validation error, as the API server names it: The Pod "bad" is invalid', async () => {
    const file = join(dir, 'bad-pod.yaml');
    writeFileSync(
      file,
      'apiVersion: v1\nkind: Pod\nmetadata:\n  name: bad\nspec:\n  containers:\n  - name: c\n    image: busybox\n  restartPolicy: Sometimes\n',
    );
    const r = await kubectl(master, ['create', '--validate=false', '-f', file]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /^The Pod "bad" is invalid: /m);
    const listed = await kubectl(master, ['get', 'pods', '-o', 'name']);
    assert.doesNotMatch(listed.stdout, /pod\/bad/);
  });
});
