// End to end on a simulated machine: a pod's mounted service account token, CA and namespace reach the API through Service default/kubernetes, refused until an admin binds the view role, then allowed in its own namespace only; a controller pod on its own Role watches ConfigMaps; @kubernetes/client-node runs inside a pod; automount off gives no volume.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import type { ConfigMap } from '../src/core/api/configmap.js';
import type { Pod } from '../src/core/api/pod.js';
import { waitFor } from '../src/core/wait-for.js';
import { BINARY } from './helpers/master.js';
import { createNetnsCluster, netnsSkipReason, type NetnsCluster } from './helpers/netns-node.js';

const NS = `sa-e2e-${process.pid}`;
const OTHER = `sa-e2e-other-${process.pid}`;
const IMAGE = 'python:3.11';
const MOUNT = '/var/run/secrets/kubernetes.io/serviceaccount';
const skip = netnsSkipReason();

/** What an in-cluster client does: the env's address, the mounted token and CA; prints the answer's status and body as JSON. */
const CLIENT = [
  'import json, os, ssl, sys, urllib.error, urllib.request',
  `d = "${MOUNT}"`,
  'token = open(d + "/token").read()',
  'own = open(d + "/namespace").read()',
  'ctx = ssl.create_default_context(cafile=d + "/ca.crt")',
  'ns = sys.argv[1] if len(sys.argv) > 1 else own',
  'url = "https://%s:%s/api/v1/namespaces/%s/pods" % (os.environ["KUBERNETES_SERVICE_HOST"], os.environ["KUBERNETES_SERVICE_PORT"], ns)',
  'req = urllib.request.Request(url, headers={"Authorization": "Bearer " + token})',
  'try:',
  '    res = urllib.request.urlopen(req, context=ctx, timeout=10)',
  '    code, body = res.status, json.load(res)',
  'except urllib.error.HTTPError as e:',
  '    code, body = e.code, json.load(e)',
  'print(json.dumps({"own": own, "code": code, "body": body}))',
].join('\n');

/**
 * A controller as users write them, in the pod with its service account's token: lists the
 * ConfigMaps labelled mirror=yes, watches from the list's resourceVersion, and keeps a copy
 * NAME-mirror of each with the same data (create, or merge-patch when it exists).
 */
const MIRROR_CONTROLLER = [
  'import json, os, ssl, urllib.error, urllib.request',
  `d = "${MOUNT}"`,
  'token = open(d + "/token").read()',
  'ns = open(d + "/namespace").read()',
  'ctx = ssl.create_default_context(cafile=d + "/ca.crt")',
  'base = "https://%s:%s/api/v1/namespaces/%s/configmaps" % (os.environ["KUBERNETES_SERVICE_HOST"], os.environ["KUBERNETES_SERVICE_PORT"], ns)',
  'def call(method, url, body=None, ctype="application/json"):',
  '    data = None if body is None else json.dumps(body).encode()',
  '    req = urllib.request.Request(url, data=data, method=method, headers={"Authorization": "Bearer " + token, "Content-Type": ctype})',
  '    return urllib.request.urlopen(req, context=ctx)',
  'def mirror(cm):',
  '    name, data = cm["metadata"]["name"] + "-mirror", cm.get("data", {})',
  '    try:',
  '        call("POST", base, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}).read()',
  '    except urllib.error.HTTPError as e:',
  '        if e.code != 409: raise',
  '        call("PATCH", base + "/" + name, {"data": data}, "application/merge-patch+json").read()',
  '    print("mirrored", name, flush=True)',
  'listed = json.load(call("GET", base + "?labelSelector=mirror%3Dyes"))',
  'for cm in listed["items"]: mirror(cm)',
  'rv = listed["metadata"]["resourceVersion"]',
  'while True:',
  '    for line in call("GET", base + "?watch=1&labelSelector=mirror%3Dyes&resourceVersion=" + rv):',
  '        event = json.loads(line)',
  '        if event["type"] in ("ADDED", "MODIFIED"): mirror(event["object"])',
  '        rv = event["object"]["metadata"]["resourceVersion"]',
].join('\n');

/** The project's node_modules: dist/test/x.js -> node_modules beside dist. */
const NODE_MODULES = fileURLToPath(new URL('../../node_modules', import.meta.url));
/** In the pod: the library's in-cluster config, a list in the pod's namespace, and the status of one in another. */
const NODE_LISTER = [
  "import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';",
  'const kc = new KubeConfig();',
  'kc.loadFromCluster();',
  'const namespace = kc.getContextObject(kc.getCurrentContext()).namespace;',
  'const core = kc.makeApiClient(CoreV1Api);',
  'const pods = (await core.listNamespacedPod({ namespace })).items.map((p) => p.metadata.name).sort();',
  `const other = await core.listNamespacedPod({ namespace: '${OTHER}' }).then(() => 200, (e) => e.code);`,
  'console.log(JSON.stringify({ namespace, pods, other }));',
].join('\n');

/** Debian's python3-kubernetes is for the system python (a python3 earlier on PATH may be another). */
const SYSTEM_PYTHON = '/usr/bin/python3';
const PYTHON_CLIENT = spawnSync(SYSTEM_PYTHON, ['-c', 'import kubernetes'], { encoding: 'utf8' });
/** load_incluster_config() with the paths and env handed in (its loader class takes them; the function reads fixed ones). */
const PYTHON_LISTER = [
  'import sys',
  'from kubernetes import client',
  'from kubernetes.config.incluster_config import InClusterConfigLoader',
  'd, host, port, ns = sys.argv[1:5]',
  'env = {"KUBERNETES_SERVICE_HOST": host, "KUBERNETES_SERVICE_PORT": port}',
  'InClusterConfigLoader(token_filename=d + "/token", cert_filename=d + "/ca.crt", environ=env).load_and_set()',
  'print(" ".join(sorted(p.metadata.name for p in client.CoreV1Api().list_namespaced_pod(ns).items)))',
].join('\n');

interface Answer {
  own: string;
  code: number;
  body: { message?: string; reason?: string; items?: Pod[] };
}

describe('service account tokens in pods', { skip }, () => {
  let cluster: NetnsCluster | undefined;
  const copies = mkdtempSync(join(tmpdir(), 'sa-e2e-'));
  const master = () => cluster!.master;

  const cli = (...args: string[]) => spawnSync(process.execPath, [BINARY, ...args], { env: master().env, encoding: 'utf8', timeout: 60_000 });
  const ok = (...args: string[]) => {
    const r = cli(...args);
    assert.equal(r.status, 0, `minik8s ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
    return r.stdout;
  };
  const api = async <T = unknown>(method: string, path: string, body?: unknown, contentType = 'application/json') => {
    const res = await fetch(`${master().url}${path}`, {
      method,
      headers: { authorization: `Bearer ${master().token}`, 'content-type': contentType },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json: unknown = await res.json();
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${(json as { message?: string } | null)?.message}`);
    return json as T;
  };
  const pod = (name: string, spec: object = {}) =>
    api<Pod>('POST', `/api/v1/namespaces/${NS}/pods`, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [{ name: 'app', image: IMAGE, command: ['python3', '-c', 'import time; time.sleep(3600)'] }],
        ...spec,
      },
    });
  const running = (name: string) =>
    waitFor(
      async () => {
        const p = await api<Pod>('GET', `/api/v1/namespaces/${NS}/pods/${name}`).catch(() => undefined);
        return p?.status?.containerStatuses?.some((c) => c.state?.running) ? p : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 300, description: `pod ${name} running` },
    );
  /** The in-cluster client's answer, run in the pod (its own namespace unless told). */
  const call = (namespace?: string): Answer => {
    const out = ok('exec', '-n', NS, 'client', '--', 'python3', '-c', CLIENT, ...(namespace ? [namespace] : []));
    return JSON.parse(out) as Answer;
  };
  /** The client pod's token, ca.crt and namespace, copied once to the same path under `copies` on the host. */
  let copied = false;
  const copyPodFiles = () => {
    const dir = join(copies, MOUNT);
    if (copied) return dir;
    copied = true;
    mkdirSync(dir, { recursive: true });
    for (const name of ['token', 'ca.crt', 'namespace']) writeFileSync(join(dir, name), ok('exec', '-n', NS, 'client', '--', 'cat', `${MOUNT}/${name}`));
    return dir;
  };
  const forbidden = (namespace: string) =>
    `pods is forbidden: User "system:serviceaccount:${NS}:default" cannot list resource "pods" in API group "" in the namespace "${namespace}"`;

  before(
    async () => {
      cluster = await createNetnsCluster({ machines: ['sa'] });
      ok('create', 'namespace', NS);
      ok('create', 'namespace', OTHER);
      await Promise.all([pod('client'), pod('plain', { automountServiceAccountToken: false })]);
    },
    { timeout: 240_000 },
  );

  after(async () => {
    await cluster?.destroy();
    rmSync(copies, { recursive: true, force: true });
  });

  it('publishes the cluster CA as ConfigMap kube-root-ca.crt in every namespace', async () => {
    const cm = await waitFor(() => api<ConfigMap>('GET', `/api/v1/namespaces/${OTHER}/configmaps/kube-root-ca.crt`).catch(() => undefined), {
      timeoutMs: 10_000,
      description: 'kube-root-ca.crt',
    });
    assert.deepEqual(Object.keys(cm.data ?? {}), ['ca.crt']);
    assert.equal(cm.data?.['ca.crt'], master().ca);
  });

  it('mounts token, ca.crt and namespace read-only, with the API service in the env', async () => {
    const p = await running('client');
    const volume = p.spec.volumes?.find((v) => v.name.startsWith('kube-api-access-'));
    assert.ok(volume, 'admission added the kube-api-access volume');
    assert.deepEqual(p.spec.containers[0]!.volumeMounts, [{ name: volume.name, readOnly: true, mountPath: MOUNT }]);
    assert.match(ok('exec', '-n', NS, 'client', '--', 'ls', MOUNT), /^ca\.crt\nnamespace\ntoken\n$/);
    assert.equal(ok('exec', '-n', NS, 'client', '--', 'cat', `${MOUNT}/namespace`), NS);
    assert.equal(ok('exec', '-n', NS, 'client', '--', 'cat', `${MOUNT}/ca.crt`), master().ca);
    const env = ok('exec', '-n', NS, 'client', '--', 'env');
    assert.match(env, /^KUBERNETES_SERVICE_HOST=10\.96\.0\.1$/m);
    assert.match(env, /^KUBERNETES_SERVICE_PORT=443$/m);
    assert.notEqual(cli('exec', '-n', NS, 'client', '--', 'sh', '-c', `echo x > ${MOUNT}/token`).status, 0, 'the volume is read-only');
  });

  it('is refused with 403 naming the service account until an admin binds a role', async () => {
    await running('client');
    const answer = call();
    assert.equal(answer.own, NS);
    assert.equal(answer.code, 403, JSON.stringify(answer.body));
    assert.equal(answer.body.reason, 'Forbidden');
    assert.equal(answer.body.message, forbidden(NS));
  });

  it('lists pods in its own namespace with view bound, and is still refused in another', async () => {
    await running('client');
    await api('POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'default-view' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
      subjects: [{ kind: 'ServiceAccount', name: 'default', namespace: NS }],
    });
    const allowed = await waitFor(
      () => {
        const a = call();
        return a.code === 200 ? a : undefined;
      },
      { timeoutMs: 15_000, intervalMs: 500, description: 'the binding to take effect' },
    );
    assert.deepEqual(allowed.body.items?.map((p) => p.metadata.name).sort(), ['client', 'plain']);
    const other = call(OTHER);
    assert.equal(other.code, 403);
    assert.equal(other.body.message, forbidden(OTHER));
  });

  it("meets @kubernetes/client-node's in-cluster config: its loadFromCluster() reads the pod's files and lists with them", async () => {
    await running('client');
    // The pod's files under a prefix on the host, and the env pointing at the API as the host reaches it (10.96.0.1 is for pods).
    copyPodFiles();
    const url = new URL(master().url);
    const saved = { host: process.env.KUBERNETES_SERVICE_HOST, port: process.env.KUBERNETES_SERVICE_PORT };
    const kc = new KubeConfig();
    try {
      process.env.KUBERNETES_SERVICE_HOST = url.hostname;
      process.env.KUBERNETES_SERVICE_PORT = url.port;
      kc.loadFromCluster(copies);
    } finally {
      for (const [name, value] of [
        ['KUBERNETES_SERVICE_HOST', saved.host],
        ['KUBERNETES_SERVICE_PORT', saved.port],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
    assert.equal(kc.getContextObject(kc.getCurrentContext())?.namespace, NS);
    const core = kc.makeApiClient(CoreV1Api);
    const list = await core.listNamespacedPod({ namespace: NS });
    assert.deepEqual(list.items.map((p) => p.metadata?.name).sort(), ['client', 'plain']);
    await assert.rejects(core.listNamespacedPod({ namespace: OTHER }), (err: { code?: number; body?: unknown }) => {
      assert.equal(err.code, 403);
      // The generated client hands the Status over parsed or as text, depending on its version.
      const status = (typeof err.body === 'string' ? JSON.parse(err.body) : err.body) as { message?: string };
      assert.equal(status.message, forbidden(OTHER));
      return true;
    });
  });

  it("meets Debian python3-kubernetes' in-cluster loader (on the host, with the pod's files)", {
    skip: PYTHON_CLIENT.status === 0 ? false : 'no python3-kubernetes on this host',
  }, async () => {
    await running('client');
    const dir = copyPodFiles();
    const url = new URL(master().url);
    const r = spawnSync(SYSTEM_PYTHON, ['-c', PYTHON_LISTER, dir, url.hostname, url.port, NS], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, 'client plain\n');
  });

  it('runs a controller pod on a Role of its own: it watches ConfigMaps and reacts to a change', async () => {
    await api('POST', `/api/v1/namespaces/${NS}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'mirror' } });
    await api('POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'configmap-mirror' },
      rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch', 'create', 'patch'] }],
    });
    await api('POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'configmap-mirror' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'configmap-mirror' },
      subjects: [{ kind: 'ServiceAccount', name: 'mirror', namespace: NS }],
    });
    await api('POST', `/api/v1/namespaces/${NS}/configmaps`, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'settings', labels: { mirror: 'yes' } },
      data: { color: 'blue' },
    });
    await pod('mirror', {
      serviceAccountName: 'mirror',
      containers: [{ name: 'controller', image: IMAGE, command: ['python3', '-c', MIRROR_CONTROLLER] }],
    });
    const mirrored = (color: string) =>
      waitFor(
        async () => {
          const cm = await api<ConfigMap>('GET', `/api/v1/namespaces/${NS}/configmaps/settings-mirror`).catch(() => undefined);
          return cm?.data?.color === color ? cm : undefined;
        },
        { timeoutMs: 120_000, intervalMs: 300, description: `settings-mirror with color ${color}` },
      );
    await mirrored('blue');
    // The change arrives on the pod's watch; nothing polls.
    await api('PATCH', `/api/v1/namespaces/${NS}/configmaps/settings`, { data: { color: 'green' } }, 'application/merge-patch+json');
    await mirrored('green');
    assert.match(ok('logs', '-n', NS, 'mirror'), /mirrored settings-mirror\nmirrored settings-mirror\n/);
  });

  it('runs @kubernetes/client-node inside a pod: loadFromCluster() with no configuration lists its namespace', async () => {
    // The pod gets this machine's node binary and the project's node_modules (the library as users install it) by hostPath.
    await pod('node-client', {
      containers: [
        {
          name: 'app',
          image: IMAGE,
          command: ['python3', '-c', 'import time; time.sleep(3600)'],
          workingDir: '/opt/client',
          volumeMounts: [
            { name: 'node', mountPath: '/usr/local/bin/node', readOnly: true },
            { name: 'modules', mountPath: '/opt/client/node_modules', readOnly: true },
          ],
        },
      ],
      volumes: [
        { name: 'node', hostPath: { path: process.execPath, type: 'File' } },
        { name: 'modules', hostPath: { path: NODE_MODULES, type: 'Directory' } },
      ],
    });
    await running('node-client');
    const out = ok('exec', '-n', NS, 'node-client', '--', '/usr/local/bin/node', '--input-type=module', '-e', NODE_LISTER);
    const answer = JSON.parse(out) as { namespace: string; pods: string[]; other: number };
    assert.equal(answer.namespace, NS);
    assert.ok(answer.pods.includes('node-client') && answer.pods.includes('client'), out);
    assert.equal(answer.other, 403);
  });

  it('gives a pod with automountServiceAccountToken: false no volume and no files', async () => {
    const p = await running('plain');
    assert.equal(p.spec.serviceAccountName, 'default');
    assert.deepEqual(p.spec.volumes ?? [], []);
    assert.equal(p.spec.containers[0]!.volumeMounts, undefined);
    assert.notEqual(cli('exec', '-n', NS, 'plain', '--', 'ls', MOUNT).status, 0);
  });
});
