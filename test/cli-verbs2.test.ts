// The second batch of kubectl verbs against a real TLS master: describe deployment and job, events, diff, edit and create job|cronjob, compared with stock kubectl where it is installed.
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { deploymentKind } from '../src/core/api/deployment.js';
import { eventKind } from '../src/core/api/event.js';
import { jobKind, type Job } from '../src/core/api/job.js';
import { namespaceKind } from '../src/core/api/namespace.js';
import { ApiClient } from '../src/core/client/api-client.js';
import { waitFor } from '../src/core/wait-for.js';
import { BINARY, startMaster, type MasterProcess } from './helpers/master.js';

const HAS_KUBECTL = spawnSync('kubectl', ['version', '--client', '-o', 'json'], { encoding: 'utf8' }).status === 0;
const NS = 'cli-verbs2';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function exec(file: string, args: string[], env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolve) => {
    execFile(file, args, { env, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

const manifest = (replicas: number) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: applied
  namespace: ${NS}
spec:
  replicas: ${replicas}
  selector:
    matchLabels:
      app: applied
  template:
    metadata:
      labels:
        app: applied
    spec:
      containers:
      - name: web
        image: nginx:1.27
`;

describe('CLI verbs, second batch, against a TLS master', () => {
  let master: MasterProcess;
  let admin: ApiClient;
  let dir: string;
  const minik8s = (args: string[], env: NodeJS.ProcessEnv = {}) => exec(process.execPath, [BINARY, ...args], { ...master.env, ...env });
  const kubectl = (args: string[]) => exec('kubectl', ['--kubeconfig', master.kubeconfig!, ...args], { ...process.env, HOME: master.home });
  const file = (name: string, text: string, mode = 0o644) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    chmodSync(path, mode);
    return path;
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'minik8s-cli-verbs2-'));
    master = await startMaster({ tls: true, registry: false });
    admin = new ApiClient({ server: master.url, token: master.token, tls: { ca: master.ca! } });
    await admin.create(namespaceKind, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    // Made through the API, not apply: kubectl would show minik8s' last-applied annotation, which it does not know to hide.
    await admin.create(deploymentKind, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: NS, labels: { app: 'web' } },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { containers: [{ name: 'nginx', image: 'nginx:1.27', ports: [{ containerPort: 80 }], env: [{ name: 'MODE', value: 'test' }] }] },
        },
      },
    });
  });
  after(async () => {
    admin?.close();
    await master?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('describe deployment: replicas, strategy, template, and the new ReplicaSet once the controller made it', async () => {
    // No worker: the pods stay Pending, so the ReplicaSet has 2 pods created and none available.
    const run = await waitFor(
      async () => {
        const r = await minik8s(['describe', 'deployment', 'web', '-n', NS]);
        return /\nNewReplicaSet: +web-\w+ \(2\/2 replicas created\)\n/.test(r.stdout) ? r : undefined;
      },
      { timeoutMs: 30_000, description: 'the new ReplicaSet with 2 pods in describe' },
    );
    assert.equal(run.code, 0, run.stderr);
    const lines = run.stdout.split('\n');
    for (const expected of [
      'Name:                   web',
      `Namespace:              ${NS}`,
      'Labels:                 app=web',
      'Selector:               app=web',
      'StrategyType:           RollingUpdate',
      'MinReadySeconds:        0',
      'RollingUpdateStrategy:  25% max unavailable, 25% max surge',
      'Pod Template:',
      '  Labels:  app=web',
      '  Containers:',
      '   nginx:',
      '    Image:      nginx:1.27',
      '    Port:       80/TCP',
      '    Host Port:  0/TCP',
      '    Environment:',
      // The variable shares the template's column block: no line without a tab comes between.
      '      MODE:        test',
      '    Mounts:        <none>',
      '  Volumes:         <none>',
      '  Node-Selectors:  <none>',
      '  Tolerations:     <none>',
      'OldReplicaSets:  <none>',
    ])
      assert.ok(lines.includes(expected), `missing line ${JSON.stringify(expected)} in:\n${run.stdout}`);
    assert.match(run.stdout, /\nReplicas: {15}2 desired \| 2 updated \| 2 total \| 0 available \| 2 unavailable\n/);
    assert.match(run.stdout, /\nCreationTimestamp: {6}\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} \+0000\n/);
    if (HAS_KUBECTL) {
      // Stock kubectl's describe of the same object, line for line (event ages may tick between the two runs: compared without them).
      const theirs = await kubectl(['describe', 'deployment', 'web', '-n', NS]);
      const ours = await minik8s(['describe', 'deployment', 'web', '-n', NS]);
      const upToEvents = (s: string) => s.split(/\nEvents:/)[0];
      assert.equal(upToEvents(ours.stdout), upToEvents(theirs.stdout));
    }
  });

  test('events lists an event made through the API, kubectl events alike', async () => {
    const now = new Date().toISOString();
    await admin.create(eventKind, {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'web.cli2', namespace: NS },
      involvedObject: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', namespace: NS },
      type: 'Warning',
      reason: 'TestedByCli2',
      message: 'made by the cli-verbs2 test',
      source: { component: 'cli2-test' },
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    });
    const run = await minik8s(['events', '-n', NS, '--types', 'Warning']);
    assert.equal(run.code, 0, run.stderr);
    const lines = run.stdout.trimEnd().split('\n');
    assert.match(lines[0]!, /^LAST SEEN +TYPE +REASON +OBJECT +MESSAGE$/);
    assert.ok(
      lines.some((l) => /^\S+ +Warning +TestedByCli2 +Deployment\/web +made by the cli-verbs2 test$/.test(l)),
      run.stdout,
    );
    const forOther = await minik8s(['events', '-n', NS, '--for', 'pod/nothing-here']);
    assert.equal(forOther.stderr, `No events found in ${NS} namespace.\n`);
    if (HAS_KUBECTL) {
      const theirs = await kubectl(['events', '-n', NS, '--types', 'Warning']);
      assert.equal(theirs.stdout.split('\n')[0], lines[0]);
      assert.match(theirs.stdout, /Warning +TestedByCli2 +Deployment\/web +made by the cli-verbs2 test/);
    }
  });

  test('diff: a changed manifest exits 1 and shows the changed line; the applied one exits 0 with nothing', async () => {
    const applied = await minik8s(['apply', '-f', file('v1.yaml', manifest(2))]);
    assert.equal(applied.code, 0, applied.stderr);
    const changed = await minik8s(['diff', '-f', file('v2.yaml', manifest(3))]);
    assert.equal(changed.code, 1, changed.stderr);
    assert.match(
      changed.stdout,
      new RegExp(`^diff -u -N /tmp/LIVE-\\d+/apps\\.v1\\.Deployment\\.${NS}\\.applied /tmp/MERGED-\\d+/apps\\.v1\\.Deployment\\.${NS}\\.applied\\n`),
    );
    assert.deepEqual(
      changed.stdout.split('\n').filter((l) => /^[-+] /.test(l)),
      ['-  replicas: 2', '+  replicas: 3'],
    );
    const live = (await admin.get(deploymentKind, { namespace: NS, name: 'applied' })) as { spec: { replicas: number } };
    assert.equal(live.spec.replicas, 2, 'diff must not change the object');
    const same = await minik8s(['diff', '-f', join(dir, 'v1.yaml')]);
    assert.equal(same.stderr, '');
    assert.equal(same.stdout, '');
    assert.equal(same.code, 0);
  });

  test('edit: a label changed in the editor is stored; no change is cancelled; a refused change keeps the file', async () => {
    const labelled = file('label.sh', `#!/bin/sh\nsed -i 's/^    app: web$/    app: web\\n    edited: "yes"/' "$1"\n`, 0o755);
    const run = await minik8s(['edit', 'deployment/web', '-n', NS], { EDITOR: labelled });
    assert.equal(run.stderr, '');
    assert.equal(run.stdout, 'deployment.apps/web edited\n');
    assert.equal(run.code, 0);
    const stored = (await admin.get(deploymentKind, { namespace: NS, name: 'web' })) as { metadata: { labels: Record<string, string> } };
    assert.deepEqual(stored.metadata.labels, { app: 'web', edited: 'yes' });

    const untouched = await minik8s(['edit', 'deploy', 'web', '-n', NS], { EDITOR: 'true' });
    assert.equal(untouched.code, 0);
    assert.equal(untouched.stderr, 'Edit cancelled, no changes made.\n');

    const negative = file('negative.sh', `#!/bin/sh\nsed -i 's/^  replicas: 2$/  replicas: -1/' "$1"\n`, 0o755);
    const refused = await minik8s(['edit', 'deployment/web', '-n', NS], { KUBE_EDITOR: negative });
    assert.equal(refused.code, 1);
    // As kubectl: the editor reopens with the server's reasons; saved unchanged, the edit gives up and keeps the file.
    const m =
      /^error: deployments\.apps "web" is invalid\nerror: Edit cancelled, no valid changes were saved\.\nA copy of your changes has been stored to "(\S+)"\n$/.exec(
        refused.stderr,
      );
    assert.ok(m, refused.stderr);
    assert.match(readFileSync(m[1]!, 'utf8'), /\n# deployments\.apps "web" was not valid:\n# \* spec\.replicas: /);
    rmSync(m[1]!);
  });

  test('create cronjob, create job --image and --from=cronjob, describe job: stored as kubectl stores them, described as kubectl describes', async () => {
    const cron = await minik8s(['create', 'cronjob', 'yearly', '--image=busybox', '--schedule=0 0 1 1 *', '-n', NS, '--', 'date']);
    assert.equal(cron.stdout, 'cronjob.batch/yearly created\n', cron.stderr);
    const fromCron = await minik8s(['create', 'job', 'yearly-now', '--from=cronjob/yearly', '-n', NS]);
    assert.equal(fromCron.stdout, 'job.batch/yearly-now created\n', fromCron.stderr);
    const owned = (await admin.get(jobKind, { namespace: NS, name: 'yearly-now' })) as Job;
    assert.equal(owned.metadata.ownerReferences?.[0]?.name, 'yearly');
    assert.equal(owned.metadata.annotations?.['cronjob.kubernetes.io/instantiate'], 'manual');
    const job = await minik8s(['create', 'job', 'pi', '--image=busybox', '-n', NS, '--', 'sh', '-c', 'echo hi']);
    assert.equal(job.stdout, 'job.batch/pi created\n', job.stderr);
    // No worker: the pod stays Pending, so the counts settle at 1 active.
    const run = await waitFor(
      async () => {
        const r = await minik8s(['describe', 'job', 'pi', '-n', NS]);
        return /\nPods Statuses: +1 Active (\(0 Ready\) )?\/ 0 Succeeded \/ 0 Failed\n/.test(r.stdout) ? r : undefined;
      },
      { timeoutMs: 30_000, description: 'the Job with its pod in describe' },
    );
    const lines = run.stdout.split('\n');
    for (const expected of ['Completions:      1', 'Completion Mode:  NonIndexed', 'Pod Template:', '   pi:', '    Image:      busybox', '      echo hi'])
      assert.ok(lines.includes(expected), `missing line ${JSON.stringify(expected)} in:\n${run.stdout}`);
    assert.match(run.stdout, /\nSelector: +batch\.kubernetes\.io\/controller-uid=[-\w]+\n/);
    if (HAS_KUBECTL) {
      const theirs = await kubectl(['describe', 'job', 'pi', '-n', NS]);
      const ours = await minik8s(['describe', 'job', 'pi', '-n', NS]);
      const upToEvents = (s: string) => s.split(/\nEvents:/)[0];
      assert.equal(upToEvents(ours.stdout), upToEvents(theirs.stdout));
    }
  });
});
