// Client libraries as their users run them against a real TLS master with DATA_DIR/admin.kubeconfig: @kubernetes/client-node's informer (list, then watch) and Debian's python3-kubernetes list and watch.
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { CoreV1Api, KubeConfig, makeInformer, type V1Pod } from '@kubernetes/client-node';
import { podKind } from '../src/core/api/pod.js';
import { ApiClient } from '../src/core/client/api-client.js';
import { waitFor } from '../src/core/wait-for.js';
import { startMaster, type MasterProcess } from './helpers/master.js';

/** Debian's python3-kubernetes is for the system python (a python3 earlier on PATH may be another). */
const SYSTEM_PYTHON = '/usr/bin/python3';
const PYTHON_CLIENT = spawnSync(SYSTEM_PYTHON, ['-c', 'import kubernetes; print(kubernetes.__version__)'], { encoding: 'utf8' });

function pod(name: string, labels: Record<string, string> = { app: 'libs' }) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels },
    spec: { containers: [{ name: 'c', image: 'busybox:1.36', command: ['sleep', '3600'] }] },
  };
}

describe('client libraries', () => {
  let master: MasterProcess;
  let client: ApiClient;
  before(async () => {
    master = await startMaster({ tls: true, registry: false });
    client = new ApiClient({ server: master.url, token: master.token, tls: { ca: master.ca! } });
  });
  after(async () => {
    await master?.stop();
  });

  test('@kubernetes/client-node: a typed list, and an informer that lists, then sees add, update and delete', async () => {
    const kc = new KubeConfig();
    kc.loadFromFile(master.kubeconfig!);
    const core = kc.makeApiClient(CoreV1Api);
    await client.create(podKind, pod('listed'), { namespace: 'default' });
    const listed = await core.listNamespacedPod({ namespace: 'default' });
    assert.deepEqual(
      listed.items.map((p) => p.metadata?.name),
      ['listed'],
    );
    assert.equal(listed.items[0]!.spec?.containers[0]?.image, 'busybox:1.36');

    const informer = makeInformer<V1Pod>(kc, '/api/v1/namespaces/default/pods', () => core.listNamespacedPod({ namespace: 'default' }));
    const seen: string[] = [];
    const errors: unknown[] = [];
    informer.on('add', (p) => seen.push(`add ${p.metadata?.name}`));
    informer.on('update', (p) => seen.push(`update ${p.metadata?.name} ${p.metadata?.labels?.tier ?? ''}`));
    informer.on('delete', (p) => seen.push(`delete ${p.metadata?.name}`));
    informer.on('error', (err) => errors.push(err));
    await informer.start();
    try {
      await waitFor(() => seen.includes('add listed'), { timeoutMs: 10_000, description: 'the informer to list the existing pod' });
      await client.create(podKind, pod('watched'), { namespace: 'default' });
      await waitFor(() => seen.includes('add watched'), { timeoutMs: 10_000, description: 'the informer to see the new pod' });
      await client.patch(podKind, { namespace: 'default', name: 'watched' }, { metadata: { labels: { tier: 'web' } } });
      await waitFor(() => seen.includes('update watched web'), { timeoutMs: 10_000, description: 'the informer to see the update' });
      await client.delete(podKind, { namespace: 'default', name: 'watched' }, { gracePeriodSeconds: 0 });
      await waitFor(() => seen.includes('delete watched'), { timeoutMs: 10_000, description: 'the informer to see the delete' });
      assert.deepEqual(
        informer.list('default').map((p) => p.metadata?.name),
        ['listed'],
      );
      assert.deepEqual(errors, []);
    } finally {
      await informer.stop();
    }
  });

  test(`python3-kubernetes ${PYTHON_CLIENT.stdout.trim()}: list, and a watch that sees a pod created while it runs`, {
    skip: PYTHON_CLIENT.status !== 0 ? `${SYSTEM_PYTHON} has no kubernetes module (Debian's python3-kubernetes; .ci/run installs it)` : false,
  }, async () => {
    // The script lists, then watches from the list's resourceVersion for up to 20 s and prints one line per event.
    const script = `
import json, sys
from kubernetes import client, config, watch
config.load_kube_config(config_file=sys.argv[1])
v1 = client.CoreV1Api()
pods = v1.list_namespaced_pod("default", label_selector="app=py")
print(json.dumps({"listed": sorted(p.metadata.name for p in pods.items)}), flush=True)
w = watch.Watch()
for event in w.stream(v1.list_namespaced_pod, "default", label_selector="app=py", resource_version=pods.metadata.resource_version, timeout_seconds=20):
    print(json.dumps({"type": event["type"], "name": event["object"].metadata.name, "image": event["object"].spec.containers[0].image}), flush=True)
    if event["type"] == "DELETED":
        w.stop()
`;
    await client.create(podKind, pod('py-before', { app: 'py' }), { namespace: 'default' });
    const lines: string[] = [];
    let stderr = '';
    const child = execFile(SYSTEM_PYTHON, ['-c', script, master.kubeconfig!], { timeout: 60_000 });
    child.stdout!.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean)));
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const exited = new Promise<number>((resolve) => child.on('exit', (code) => resolve(code ?? 1)));
    try {
      await waitFor(() => lines.length >= 1, { timeoutMs: 30_000, description: `the python client to list (stderr: ${stderr})` });
      assert.deepEqual(JSON.parse(lines[0]!), { listed: ['py-before'] });
      await client.create(podKind, pod('py-after', { app: 'py' }), { namespace: 'default' });
      await waitFor(() => lines.some((l) => l.includes('"ADDED"')), { timeoutMs: 20_000, description: `the python watch to see the pod (stderr: ${stderr})` });
      await client.delete(podKind, { namespace: 'default', name: 'py-after' }, { gracePeriodSeconds: 0 });
      assert.equal(await exited, 0, `python exited with stderr: ${stderr}`);
      const events = lines.slice(1).map((l) => JSON.parse(l) as { type: string; name: string; image: string });
      assert.deepEqual(events[0], { type: 'ADDED', name: 'py-after', image: 'busybox:1.36' });
      assert.deepEqual(events.at(-1), { type: 'DELETED', name: 'py-after', image: 'busybox:1.36' });
    } finally {
      child.kill();
    }
  });
});
