// RBAC on a real TLS master: bootstrap roles, users with certificates from `minik8s certificate issue`, the default roles against a verb matrix, escalation refused, impersonation, and stock kubectl with a user's kubeconfig.
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parse } from 'yaml';
import { ApiClient } from '../src/core/client/api-client.js';
import { waitFor } from '../src/core/wait-for.js';
import { BINARY, startMaster, type MasterProcess } from './helpers/master.js';

const HAS_KUBECTL = spawnSync('kubectl', ['version', '--client', '-o', 'json'], { encoding: 'utf8' }).status === 0;
const NS = 'rbac-team';
const RBAC = '/apis/rbac.authorization.k8s.io/v1';

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { env, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

interface User {
  name: string;
  kubeconfigPath: string;
  client: ApiClient;
}

describe('RBAC on a real master', () => {
  let master: MasterProcess;
  let admin: ApiClient;
  let dir: string;
  const users = new Map<string, User>();
  const minik8s = (args: string[], env: NodeJS.ProcessEnv = master.env) => run(process.execPath, [BINARY, ...args], env);

  /** `minik8s certificate issue NAME -o kubeconfig` on the master's data dir, and a client that presents the certificate. */
  async function issueUser(name: string, groups: string[] = []): Promise<User> {
    const r = await minik8s(['certificate', 'issue', name, ...groups.flatMap((g) => ['--group', g]), '--data-dir', master.dataDir, '-o', 'kubeconfig']);
    assert.equal(r.code, 0, r.stderr);
    const kubeconfigPath = join(dir, `${name}.kubeconfig`);
    writeFileSync(kubeconfigPath, r.stdout, { mode: 0o600 });
    const config = parse(r.stdout) as {
      clusters: { cluster: { server: string; 'certificate-authority-data': string } }[];
      users: { user: Record<string, string> }[];
    };
    const from64 = (s: string) => Buffer.from(s, 'base64').toString('utf8');
    const u = config.users[0]!.user;
    assert.equal(u.token, undefined, 'a user kubeconfig carries no token');
    const client = new ApiClient({
      server: config.clusters[0]!.cluster.server,
      tls: {
        ca: from64(config.clusters[0]!.cluster['certificate-authority-data']),
        cert: from64(u['client-certificate-data']!),
        key: from64(u['client-key-data']!),
      },
    });
    const user = { name, kubeconfigPath, client };
    users.set(name, user);
    return user;
  }

  async function bind(name: string, role: string, subject: { kind: string; name: string }, namespace = NS): Promise<void> {
    await admin.request('POST', `${RBAC}/namespaces/${namespace}/rolebindings`, {
      body: {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', ...subject }],
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
      },
    });
  }

  /** Asks the server, as admin, whether `user` may do this (the same chain that judges requests). */
  async function allowed(user: string, groups: string[], verb: string, resource: string, extra: Record<string, string> = {}): Promise<boolean> {
    const dot = resource.indexOf('.');
    const [res, group] = dot < 0 ? [resource, ''] : [resource.slice(0, dot), resource.slice(dot + 1)];
    const [plain, subresource] = res.split('/') as [string, string?];
    const review = (await admin.request('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      body: {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: { user, groups, resourceAttributes: { verb, group, resource: plain, ...(subresource ? { subresource } : {}), namespace: NS, ...extra } },
      },
    })) as { status: { allowed: boolean } };
    return review.status.allowed;
  }

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'minik8s-rbac-'));
    master = await startMaster({ tls: true, registry: false });
    admin = new ApiClient({ server: master.url, token: master.token, tls: { ca: master.ca } });
    await admin.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } });
  });
  after(async () => {
    for (const u of users.values()) u.client.close();
    admin?.close();
    await master?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('the master bootstraps the default ClusterRoles and fills the aggregated ones', async () => {
    for (const name of ['cluster-admin', 'admin', 'edit', 'view', 'system:basic-user', 'system:discovery', 'system:kube-scheduler']) {
      const role = (await admin.request('GET', `${RBAC}/clusterroles/${encodeURIComponent(name)}`)) as { metadata: { annotations?: Record<string, string> } };
      assert.equal(role.metadata.annotations?.['rbac.authorization.kubernetes.io/autoupdate'], 'true', name);
    }
    // view gets system:aggregate-to-view's rules; edit view's and its own.
    const view = await waitFor(
      async () => {
        const r = (await admin.request('GET', `${RBAC}/clusterroles/view`)) as { rules?: { resources?: string[] }[] };
        return r.rules?.some((rule) => rule.resources?.includes('pods')) ? r : undefined;
      },
      { timeoutMs: 20_000, description: 'view aggregated' },
    );
    assert.ok(!view.rules!.some((r) => r.resources?.includes('secrets')), 'view never reads Secrets');
    const crb = (await admin.request('GET', `${RBAC}/clusterrolebindings/cluster-admin`)) as { subjects: { name: string }[] };
    assert.deepEqual(
      crb.subjects.map((s) => s.name),
      ['system:masters'],
    );
  });

  test('each default role against a verb matrix (SubjectAccessReview, the chain that judges requests)', async () => {
    for (const role of ['view', 'edit', 'admin', 'cluster-admin']) await bind(`matrix-${role}`, role, { kind: 'User', name: `matrix-${role}` });
    const matrix: [string, string, Record<string, boolean>][] = [
      ['get', 'pods', { view: true, edit: true, admin: true, 'cluster-admin': true }],
      ['list', 'deployments.apps', { view: true, edit: true, admin: true, 'cluster-admin': true }],
      ['create', 'pods', { view: false, edit: true, admin: true, 'cluster-admin': true }],
      ['delete', 'deployments.apps', { view: false, edit: true, admin: true, 'cluster-admin': true }],
      ['get', 'secrets', { view: false, edit: true, admin: true, 'cluster-admin': true }],
      ['create', 'pods/exec', { view: false, edit: true, admin: true, 'cluster-admin': true }],
      ['create', 'rolebindings.rbac.authorization.k8s.io', { view: false, edit: false, admin: true, 'cluster-admin': true }],
      ['escalate', 'roles.rbac.authorization.k8s.io', { view: false, edit: false, admin: false, 'cluster-admin': true }],
    ];
    // The bindings reach the authorizer through its informers: wait for the last one.
    await waitFor(async () => (await allowed('matrix-cluster-admin', [], 'escalate', 'roles.rbac.authorization.k8s.io')) || undefined, {
      timeoutMs: 10_000,
      description: 'bindings seen',
    });
    const wrong: string[] = [];
    for (const [verb, resource, expected] of matrix) {
      for (const [role, want] of Object.entries(expected)) {
        const got = await allowed(`matrix-${role}`, [], verb, resource);
        if (got !== want) wrong.push(`${role} ${verb} ${resource}: got ${got}, want ${want}`);
      }
    }
    // A RoleBinding grants in its namespace only, even of cluster-admin.
    assert.equal(await allowed('matrix-cluster-admin', [], 'get', 'pods', { namespace: 'default' }), false);
    assert.deepEqual(wrong, []);
  });

  test('a user certificate with view lists but cannot create (403 with the message); unbound it lists nothing', async () => {
    const alice = await issueUser('alice', ['rbac-testers']);
    await assert.rejects(alice.client.request('GET', `/api/v1/namespaces/${NS}/pods`), {
      message: `pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "${NS}"`,
    });
    await bind('alice-view', 'view', { kind: 'Group', name: 'rbac-testers' });
    await waitFor(
      async () =>
        alice.client.request('GET', `/api/v1/namespaces/${NS}/pods`).then(
          () => true,
          () => undefined,
        ),
      {
        timeoutMs: 10_000,
        description: 'alice lists pods',
      },
    );
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'busybox' }] } };
    await assert.rejects(alice.client.request('POST', `/api/v1/namespaces/${NS}/pods`, { body: pod }), {
      message: `pods is forbidden: User "alice" cannot create resource "pods" in API group "" in the namespace "${NS}"`,
    });
    await assert.rejects(alice.client.request('GET', '/api/v1/nodes'), {
      message: 'nodes is forbidden: User "alice" cannot list resource "nodes" in API group "" at the cluster scope',
    });
    await assert.rejects(alice.client.request('GET', `/api/v1/namespaces/${NS}/pods/p/log`), {
      message: `pods "p" is forbidden: User "alice" cannot get resource "pods/log" in API group "" in the namespace "${NS}"`,
    });
    // Her own can-i, answered by the same chain.
    // Her kubeconfig only: not the admin's server and token the helper's environment names.
    const { MINIK8S_SERVER: _server, MINIK8S_TOKEN: _token, ...rest } = master.env;
    const env = { ...rest, KUBECONFIG: alice.kubeconfigPath };
    const yes = await minik8s(['auth', 'can-i', 'list', 'pods', '-n', NS], env);
    assert.equal(yes.stdout.trim(), 'yes', yes.stderr);
    const no = await minik8s(['auth', 'can-i', 'create', 'pods', '-n', NS], env);
    assert.equal(no.code, 1);
    assert.equal(no.stdout.trim(), 'no');
  });

  test('kubectl with the issued kubeconfig: get works, create is refused with the message', {
    skip: HAS_KUBECTL ? false : 'kubectl is not on PATH',
  }, async () => {
    const alice = users.get('alice') ?? (await issueUser('alice', ['rbac-testers']));
    const env = { ...process.env, HOME: master.home };
    const got = await run('kubectl', ['--kubeconfig', alice.kubeconfigPath, 'get', 'pods', '-n', NS], env);
    assert.equal(got.code, 0, got.stderr);
    const created = await run('kubectl', ['--kubeconfig', alice.kubeconfigPath, 'run', 'x', '--image=busybox', '-n', NS], env);
    assert.notEqual(created.code, 0);
    assert.match(created.stderr, /pods is forbidden: User "alice" cannot create resource "pods" in API group "" in the namespace "rbac-team"/);
  });

  test('escalation is refused: a namespace admin grants only what it holds', async () => {
    const bob = await issueUser('bob');
    await bind('bob-admin', 'admin', { kind: 'User', name: 'bob' });
    const role = (name: string, rules: unknown[]) => ({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name }, rules });
    const podReader = role('pod-reader', [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }]);
    await waitFor(
      async () =>
        bob.client.request('POST', `${RBAC}/namespaces/${NS}/roles`, { body: podReader }).then(
          () => true,
          () => undefined,
        ),
      {
        timeoutMs: 10_000,
        description: 'bob creates a role he holds',
      },
    );
    await assert.rejects(
      bob.client.request('POST', `${RBAC}/namespaces/${NS}/roles`, { body: role('node-lister', [{ apiGroups: [''], resources: ['nodes'], verbs: ['list'] }]) }),
      (err: Error) => {
        assert.equal(
          err.message,
          'roles.rbac.authorization.k8s.io "node-lister" is forbidden: user "bob" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["nodes"], Verbs:["list"]}',
        );
        return true;
      },
    );
    // Binding cluster-admin would hand out what bob lacks (non-resource URLs, every group).
    const crb = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'grab' },
      subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'bob' }],
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
    };
    await assert.rejects(
      bob.client.request('POST', `${RBAC}/namespaces/${NS}/rolebindings`, { body: crb }),
      /is attempting to grant RBAC permissions not currently held/,
    );
    // Nothing was written.
    await assert.rejects(admin.request('GET', `${RBAC}/namespaces/${NS}/rolebindings/grab`), /not found/);
    // Patching his Role into one he does not hold is refused the same way.
    await assert.rejects(
      bob.client.request('PATCH', `${RBAC}/namespaces/${NS}/roles/pod-reader`, {
        body: { rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }] },
        contentType: 'application/merge-patch+json',
      }),
      /is attempting to grant RBAC permissions not currently held/,
    );
    // edit is within admin: bob may hand it to a teammate.
    await bob.client.request('POST', `${RBAC}/namespaces/${NS}/rolebindings`, {
      body: {
        ...crb,
        metadata: { name: 'carol-edit' },
        subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'carol' }],
        roleRef: { ...crb.roleRef, name: 'edit' },
      },
    });
  });

  test('impersonation: admins ask as another user; a user without the impersonate verb is refused', async () => {
    const asAlice = { 'impersonate-user': 'alice', 'impersonate-group': 'rbac-testers' };
    await admin.request('GET', `/api/v1/namespaces/${NS}/pods`, { headers: asAlice });
    await assert.rejects(admin.request('GET', '/api/v1/nodes', { headers: asAlice }), {
      message: 'nodes is forbidden: User "alice" cannot list resource "nodes" in API group "" at the cluster scope',
    });
    const canI = await minik8s(['auth', 'can-i', 'create', 'pods', '-n', NS, '--as', 'alice', '--as-group', 'rbac-testers']);
    assert.equal(canI.stdout.trim(), 'no');
    assert.equal(canI.code, 1);
    const alice = users.get('alice') ?? (await issueUser('alice', ['rbac-testers']));
    await assert.rejects(alice.client.request('GET', `/api/v1/namespaces/${NS}/pods`, { headers: { 'impersonate-user': 'bob' } }), {
      message: 'users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope',
    });
  });

  test('a node identity keeps the Node rules only; SubjectAccessReview is for admins', async () => {
    const node = ['system:nodes'];
    assert.equal(await allowed('system:node:n1', node, 'list', 'pods'), true);
    assert.equal(await allowed('system:node:n1', node, 'create', 'pods'), false);
    assert.equal(await allowed('system:node:n1', node, 'delete', 'nodes', { namespace: '' }), false);
    assert.equal(await allowed('system:node:n1', node, 'get', 'pods/log', { name: 'p' }), false);
    const alice = users.get('alice') ?? (await issueUser('alice', ['rbac-testers']));
    await assert.rejects(
      alice.client.request('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SubjectAccessReview',
          spec: { user: 'x', resourceAttributes: { verb: 'get', resource: 'pods' } },
        },
      }),
      {
        message:
          'subjectaccessreviews.authorization.k8s.io is forbidden: User "alice" cannot create resource "subjectaccessreviews" in API group "authorization.k8s.io" at the cluster scope',
      },
    );
  });
});
