// ServiceAccounts on a real TLS master: the default account per namespace, pod admission (with the kube-api-access volume), kube-root-ca.crt, TokenRequest and `create token`, who a token authenticates as, and revocation with its pod.
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { decodeJwt } from 'jose';
import { type ConfigMap, configMapKind } from '../src/core/api/configmap.js';
import { namespaceKind } from '../src/core/api/namespace.js';
import { type Pod, podKind } from '../src/core/api/pod.js';
import { serviceAccountKind } from '../src/core/api/serviceaccount.js';
import { ApiClient } from '../src/core/client/api-client.js';
import { NotFoundError } from '../src/core/errors.js';
import { waitFor } from '../src/core/wait-for.js';
import { BINARY, startMaster, type MasterProcess } from './helpers/master.js';

const HAS_KUBECTL = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).status === 0;
const NS = 'sa-test';

type Run = { code: number; stdout: string; stderr: string };
function run(file: string, args: string[], env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolve) => {
    execFile(file, args, { env, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

describe('service accounts', () => {
  let master: MasterProcess;
  let admin: ApiClient;
  const minik8s = (args: string[]) => run(process.execPath, [BINARY, ...args], master.env);
  /** A request with only this bearer token (no client certificate). */
  const asToken = async (token: string, method: string, path: string, body?: unknown) => {
    const res = await fetch(`${master.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const whoami = (token: string) =>
    asToken(token, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { kind: 'SelfSubjectReview', apiVersion: 'authentication.k8s.io/v1' });

  before(async () => {
    master = await startMaster({ tls: true, registry: false });
    admin = new ApiClient({ server: master.url, token: master.token, tls: { ca: master.ca! } });
    await admin.create(namespaceKind, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  });
  after(async () => {
    await master?.stop();
  });

  test('every namespace gets a default ServiceAccount, made again when deleted', async () => {
    const defaultSa = () =>
      admin.get(serviceAccountKind, { namespace: NS, name: 'default' }).catch((err) => (err instanceof NotFoundError ? undefined : Promise.reject(err)));
    const first = await waitFor(defaultSa, { timeoutMs: 15_000, description: 'default ServiceAccount in the new namespace' });
    await admin.get(serviceAccountKind, { namespace: 'default', name: 'default' });
    await admin.delete(serviceAccountKind, { namespace: NS, name: 'default' });
    const again = await waitFor(
      async () => {
        const sa = await defaultSa();
        return sa && sa.metadata.uid !== first.metadata.uid ? sa : undefined;
      },
      { timeoutMs: 15_000, description: 'default ServiceAccount made again' },
    );
    assert.ok(again.metadata.uid);
    const table = await minik8s(['get', 'serviceaccounts', '-n', NS]);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /^NAME\s+SECRETS\s+AGE\n/);
    assert.match(table.stdout, /\ndefault\s+0\s+\S+\n/);
  });

  test('pods run as default unless they name another, and one naming a missing account is refused', async () => {
    const pod = (name: string, spec: Record<string, unknown> = {}) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: NS },
      spec: { containers: [{ name: 'app', image: 'busybox', command: ['sleep', '3600'] }], ...spec },
    });
    const created = (await admin.create(podKind, pod('plain'), { namespace: NS })) as Pod;
    assert.equal(created.spec.serviceAccountName, 'default');
    const path = join(master.home, 'ghost.json');
    writeFileSync(path, JSON.stringify(pod('ghost', { serviceAccountName: 'ghost' })));
    const refused = await minik8s(['create', '-f', path]);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /pods "ghost" is forbidden: error looking up service account sa-test\/ghost: serviceaccount "ghost" not found/);
    assert.doesNotMatch(refused.stderr, /\n\s+at /);
  });

  test('admission mounts the kube-api-access volume read-only unless automount is off, and kube-root-ca.crt holds the cluster CA', async () => {
    const pod = (name: string, spec: Record<string, unknown> = {}) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: NS },
      spec: { containers: [{ name: 'app', image: 'busybox', command: ['sleep', '3600'] }], ...spec },
    });
    const mounted = (await admin.create(podKind, pod('mounted'), { namespace: NS })) as Pod;
    const volume = mounted.spec.volumes?.find((v) => /^kube-api-access-[b-z2-9]{5}$/.test(v.name));
    assert.ok(volume, JSON.stringify(mounted.spec.volumes));
    assert.deepEqual(mounted.spec.containers[0]!.volumeMounts, [
      { name: volume.name, readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' },
    ]);
    const off = (await admin.create(podKind, pod('unmounted', { automountServiceAccountToken: false }), { namespace: NS })) as Pod;
    assert.equal(off.spec.volumes, undefined);
    const cm = await waitFor(
      () =>
        admin
          .get(configMapKind, { namespace: NS, name: 'kube-root-ca.crt' })
          .catch((err) => (err instanceof NotFoundError ? undefined : Promise.reject(err))) as Promise<ConfigMap | undefined>,
      { timeoutMs: 10_000, description: 'kube-root-ca.crt' },
    );
    assert.deepEqual(cm.data, { 'ca.crt': master.ca });
    // Deleted, it comes back.
    await admin.delete(configMapKind, { namespace: NS, name: 'kube-root-ca.crt' });
    await waitFor(
      async () => {
        const again = (await admin
          .get(configMapKind, { namespace: NS, name: 'kube-root-ca.crt' })
          .catch((err) => (err instanceof NotFoundError ? undefined : Promise.reject(err)))) as ConfigMap | undefined;
        return again && again.metadata.uid !== cm.metadata.uid ? again : undefined;
      },
      { timeoutMs: 10_000, description: 'kube-root-ca.crt made again' },
    );
  });

  test('minik8s create token: a token that authenticates as the account, which RBAC-less authorization still refuses', async () => {
    const made = await minik8s(['create', 'token', 'default', '-n', NS, '--duration', '15m']);
    assert.equal(made.code, 0, made.stderr);
    const token = made.stdout.trim();
    const claims = decodeJwt(token);
    assert.equal(claims.sub, `system:serviceaccount:${NS}:default`);
    assert.equal(claims.exp! - claims.iat!, 900);
    const me = await whoami(token);
    assert.equal(me.status, 201);
    assert.deepEqual((me.body.status as { userInfo: unknown }).userInfo, {
      username: `system:serviceaccount:${NS}:default`,
      groups: ['system:serviceaccounts', `system:serviceaccounts:${NS}`, 'system:authenticated'],
    });
    const list = await asToken(token, 'GET', `/api/v1/namespaces/${NS}/pods`);
    assert.equal(list.status, 403);
    assert.equal(
      list.body.message,
      `pods is forbidden: User "system:serviceaccount:${NS}:default" cannot list resource "pods" in API group "" in the namespace "${NS}"`,
    );

    const short = await minik8s(['create', 'token', 'default', '-n', NS, '--duration', '5m']);
    assert.notEqual(short.code, 0);
    assert.match(short.stderr, /spec\.expirationSeconds: Invalid value: 300: may not specify a duration less than 10 minutes/);
    const missing = await minik8s(['create', 'token', 'nobody', '-n', NS]);
    assert.notEqual(missing.code, 0);
    assert.match(missing.stderr, /serviceaccounts "nobody" not found/);
  });

  test('a token bound to a pod stops working once the pod is deleted', async () => {
    const pod = (await admin.get(podKind, { namespace: NS, name: 'plain' })) as Pod;
    const answer = (await admin.request('POST', `/api/v1/namespaces/${NS}/serviceaccounts/default/token`, {
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'plain' } } },
    })) as { status: { token: string; expirationTimestamp: string }; spec: { expirationSeconds: number; audiences: string[] } };
    assert.equal(answer.spec.expirationSeconds, 3600);
    assert.deepEqual(answer.spec.audiences, ['https://kubernetes.default.svc.cluster.local']);
    const claim = decodeJwt(answer.status.token)['kubernetes.io'] as { pod: { name: string; uid: string } };
    assert.deepEqual(claim.pod, { name: 'plain', uid: pod.metadata.uid });
    assert.equal((await whoami(answer.status.token)).status, 201);
    await admin.delete(podKind, { namespace: NS, name: 'plain' }, { gracePeriodSeconds: 0 });
    await waitFor(async () => (await whoami(answer.status.token)).status === 401, { timeoutMs: 15_000, description: "the deleted pod's token refused" });
    const refused = await whoami(answer.status.token);
    assert.equal(refused.body.reason, 'Unauthorized');
  });

  test('kubectl create token and kubectl auth whoami', { skip: HAS_KUBECTL ? false : 'kubectl is not on PATH' }, async () => {
    const env = { ...process.env, HOME: master.home };
    const made = await run('kubectl', ['--kubeconfig', master.kubeconfig!, 'create', 'token', 'default', '-n', NS, '--duration', '1h'], env);
    assert.equal(made.code, 0, made.stderr);
    const caPath = join(master.home, 'ca.crt');
    writeFileSync(caPath, master.ca!);
    const who = await run(
      'kubectl',
      ['--kubeconfig', '/dev/null', '--server', master.url, '--certificate-authority', caPath, '--token', made.stdout.trim(), 'auth', 'whoami'],
      env,
    );
    assert.equal(who.code, 0, who.stderr);
    assert.match(who.stdout, new RegExp(`Username\\s+system:serviceaccount:${NS}:default`));
  });
});
