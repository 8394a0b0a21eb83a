// End to end on Docker: a pod takes env and files from a ConfigMap (and a Secret, a downward API file), the mounted file follows an update, and a missing ConfigMap holds a container until it is created.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Pod } from '../src/core/api/pod.js';
import { waitFor } from '../src/core/wait-for.js';
import { BINARY, startMaster, type MasterProcess } from './helpers/master.js';
import { startWorker, type WorkerProcess } from './helpers/worker.js';

const NS = `cm-e2e-${process.pid}`;
const IMAGE = 'busybox:1.35';

describe('ConfigMaps in pods on Docker', () => {
  let master: MasterProcess;
  let worker: WorkerProcess;
  let files: string;

  const cli = (...args: string[]) => spawnSync(process.execPath, [BINARY, ...args], { env: master.env, encoding: 'utf8', timeout: 60_000 });
  const ok = (...args: string[]) => {
    const r = cli(...args);
    assert.equal(r.status, 0, `minik8s ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
    return r.stdout;
  };
  const api = async <T = unknown>(method: string, path: string, body?: unknown, contentType = 'application/json') => {
    const res = await fetch(`${master.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${master.token}`, 'content-type': contentType },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json: unknown = await res.json();
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${(json as { message?: string } | null)?.message}`);
    return json as T;
  };
  const waitPod = (name: string, what: string, check: (pod: Pod) => boolean, timeoutMs = 90_000) =>
    waitFor(
      async () => {
        const pod = await api<Pod>('GET', `/api/v1/namespaces/${NS}/pods/${name}`).catch(() => undefined);
        return pod && check(pod) ? pod : undefined;
      },
      { timeoutMs, intervalMs: 300, description: `pod ${name} ${what}` },
    );
  const running = (pod: Pod) => (pod.status?.containerStatuses ?? []).some((c) => c.state?.running);
  const pod = (name: string, container: object, volumes: object[] = []) =>
    api('POST', `/api/v1/namespaces/${NS}/pods`, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: NS, labels: { app: 'cm-e2e' } },
      spec: {
        nodeName: worker.nodeName,
        terminationGracePeriodSeconds: 1,
        containers: [{ name: 'app', image: IMAGE, command: ['sleep', '3600'], ...container }],
        volumes,
      },
    });

  before(
    async () => {
      master = await startMaster({ seedImages: true });
      worker = await startWorker({ server: master.url, joinToken: master.joinToken });
      files = mkdtempSync(join(tmpdir(), 'cm-e2e-'));
      writeFileSync(join(files, 'app.conf'), 'mode=fast\n');
      ok('create', 'namespace', NS);
      ok('create', 'configmap', 'settings', '-n', NS, '--from-literal=GREETING=hello $(HOME)', `--from-file=${join(files, 'app.conf')}`);
      ok('create', 'secret', 'generic', 'creds', '-n', NS, '--from-literal=password=hunter2');
      await Promise.all([
        pod(
          'reader',
          {
            env: [
              { name: 'GREETING', valueFrom: { configMapKeyRef: { name: 'settings', key: 'GREETING' } } },
              { name: 'HOST_IP', valueFrom: { fieldRef: { fieldPath: 'status.hostIP' } } },
            ],
            envFrom: [{ secretRef: { name: 'creds' }, prefix: 'S_' }],
            volumeMounts: [
              { name: 'config', mountPath: '/etc/app' },
              { name: 'all', mountPath: '/etc/all' },
            ],
          },
          [
            { name: 'config', configMap: { name: 'settings', items: [{ key: 'app.conf', path: 'app.conf', mode: 0o600 }] } },
            {
              name: 'all',
              projected: {
                sources: [{ secret: { name: 'creds' } }, { downwardAPI: { items: [{ path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } }] } }],
              },
            },
          ],
        ),
        pod('waiter', { env: [{ name: 'LATER', valueFrom: { configMapKeyRef: { name: 'later', key: 'k' } } }] }),
      ]);
    },
    { timeout: 180_000 },
  );

  after(async () => {
    await worker?.destroy();
    await master?.stop();
    if (files) rmSync(files, { recursive: true, force: true });
  });

  it('gets the ConfigMap as kubectl shows it', () => {
    assert.match(ok('get', 'cm', 'settings', '-n', NS), /^NAME\s+DATA\s+AGE\nsettings\s+2\s+\S+\n$/);
  });

  it('reads env from the ConfigMap, the Secret (envFrom with a prefix) and the node, and files from both volumes', async () => {
    await waitPod('reader', 'running', running);
    const env = ok('exec', '-n', NS, 'reader', '--', 'env');
    assert.match(env, /^GREETING=hello \$\(HOME\)$/m, 'a value from an object is taken as written');
    assert.match(env, /^S_password=hunter2$/m);
    assert.match(env, /^HOST_IP=127\.0\.0\.1$/m);
    assert.equal(ok('exec', '-n', NS, 'reader', '--', 'cat', '/etc/app/app.conf'), 'mode=fast\n');
    assert.match(ok('exec', '-n', NS, 'reader', '--', 'stat', '-L', '-c', '%a', '/etc/app/app.conf'), /^600$/m);
    assert.equal(ok('exec', '-n', NS, 'reader', '--', 'cat', '/etc/all/password'), 'hunter2');
    assert.equal(ok('exec', '-n', NS, 'reader', '--', 'cat', '/etc/all/labels'), 'app="cm-e2e"');
    assert.match(ok('exec', '-n', NS, 'reader', '--', 'ls', '-a', '/etc/app'), /\.\.data/);
    const write = cli('exec', '-n', NS, 'reader', '--', 'sh', '-c', 'echo x > /etc/app/new');
    assert.notEqual(write.status, 0, 'the volume is read-only');
  });

  it('shows an update of the ConfigMap in the mounted file within a minute', async () => {
    await waitPod('reader', 'running', running);
    await api('PATCH', `/api/v1/namespaces/${NS}/configmaps/settings`, { data: { 'app.conf': 'mode=slow\n' } }, 'application/merge-patch+json');
    const started = Date.now();
    await waitFor(() => cli('exec', '-n', NS, 'reader', '--', 'cat', '/etc/app/app.conf').stdout === 'mode=slow\n' || undefined, {
      timeoutMs: 60_000,
      intervalMs: 500,
      description: 'the mounted file to show the new data',
    });
    console.log(`# mounted file updated ${((Date.now() - started) / 1000).toFixed(1)} s after the ConfigMap`);
  });

  it('holds a container in CreateContainerConfigError until its ConfigMap exists', async () => {
    const waiting = await waitPod(
      'waiter',
      'waiting for its ConfigMap',
      (p) => p.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'CreateContainerConfigError',
    );
    assert.equal(waiting.status?.containerStatuses?.[0]?.state?.waiting?.message, 'configmap "later" not found');
    ok('create', 'configmap', 'later', '-n', NS, '--from-literal=k=now');
    await waitPod('waiter', 'running once the ConfigMap exists', running, 90_000);
    assert.match(ok('exec', '-n', NS, 'waiter', '--', 'env'), /^LATER=now$/m);
  });

  it('refuses changes to an immutable ConfigMap with Kubernetes wording', async () => {
    await api('POST', `/api/v1/namespaces/${NS}/configmaps`, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'fixed' },
      data: { a: '1' },
      immutable: true,
    });
    await assert.rejects(
      api('PATCH', `/api/v1/namespaces/${NS}/configmaps/fixed`, { data: { a: '2' } }, 'application/merge-patch+json'),
      /422 ConfigMap "fixed" is invalid: data: Forbidden: field is immutable when `immutable` is set/,
    );
  });
});
