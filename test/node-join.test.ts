// Nodes joining a real master: join tokens, node credentials and what they may do, pod CIDRs across restarts and deletions, token review, the CLI's join tokens.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { join } from 'node:path';
import { waitFor } from '../src/core/wait-for.js';
import { cidrContains } from '../src/core/api/ipv4.js';
import type { Node } from '../src/core/api/node.js';
import type { Pod } from '../src/core/api/pod.js';
import type { Status } from '../src/core/errors.js';
import { parsePinnedJoinToken } from '../src/core/pki/join-token-pin.js';
import { issueServerCert, loadOrCreateCa } from '../src/core/pki/pki.js';
import { BINARY, QUIET_LEASES, startMaster, type MasterProcess } from './helpers/master.js';

const JOIN = '/apis/minik8s.io/v1/join';
const MERGE = 'application/merge-patch+json';

/** An answer, its body as the caller says it is (the text where it is not JSON). */
interface Answer<T = unknown> {
  status: number;
  body: T;
}

/** What the join endpoint answers a node it lets in. */
interface Joined {
  token: string;
  podCIDR: string;
  registryPort?: number;
}

describe('node join', () => {
  let master: MasterProcess;

  const call = async <T = unknown>(method: string, path: string, token: string, body?: unknown, contentType = 'application/json'): Promise<Answer<T>> => {
    const res = await fetch(`${master.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': contentType },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      /* not JSON */
    }
    return { status: res.status, body: parsed as T };
  };
  // Each name's machine has one node password, as a worker keeps it in its data dir.
  const joinAs = <T = Status>(nodeName: unknown, token = master.joinSecret, nodePassword = `password-of-node-${String(nodeName)}`) =>
    call<T>('POST', JOIN, token, { apiVersion: 'minik8s.io/v1', kind: 'JoinRequest', nodeName, nodePassword });
  const joined = async (nodeName: string, token = master.joinSecret): Promise<Joined> => {
    const res = await joinAs<Joined>(nodeName, token);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body;
  };
  const admin = <T = unknown>(method: string, path: string, body?: unknown, contentType?: string) => call<T>(method, path, master.token, body, contentType);
  const revision = async () => ((await admin('GET', '/api/v1/namespaces')).body as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
  const cli = (args: string[]) => spawnSync(process.execPath, [BINARY, ...args], { env: master.env, encoding: 'utf8', timeout: 60_000 });

  before(async () => {
    // Lease renewals would move the revision the refused joins must leave alone.
    master = await startMaster({ extraArgs: QUIET_LEASES });
  });
  after(async () => {
    await master?.stop();
  });

  it('announces the join token and keeps it in DATA_DIR/join-token (0600)', async () => {
    // K10<the cluster CA's hash>::id.secret: a worker checks the master by the hash before sending the secret.
    assert.match(master.joinToken, /^K10[0-9a-f]{64}::[a-z0-9]{6}\.[a-z0-9]{16}$/);
    assert.match(master.joinSecret, /^[a-z0-9]{6}\.[a-z0-9]{16}$/);
    assert.equal(statSync(join(master.dataDir, 'join-token')).mode & 0o777, 0o600);
    assert.match(master.output(), new RegExp(`join token in ${join(master.dataDir, 'join-token')}`));
    assert.ok(master.output().includes(`join a worker: run the command in ${join(master.dataDir, 'join-command')} there`), master.output());
    assert.equal(master.output().includes(master.joinSecret), false, 'the banner does not print the join token');
    assert.match(master.output(), new RegExp(`registry 127\\.0\\.0\\.1:${master.registryPort}`));
    assert.equal((await fetch(`${master.registryUrl}/v2/`)).status, 200, 'the managed registry serves');
  });

  it('refuses unknown join tokens with 401', async () => {
    for (const token of ['abcdef.0123456789abcdef', 'not-a-token', `${master.joinSecret.slice(0, 7)}${'0'.repeat(16)}`]) {
      const res = await joinAs('n-bad', token);
      assert.equal(res.status, 401, token);
      assert.equal(res.body.kind, 'Status');
    }
    assert.equal((await admin('GET', '/api/v1/nodes/n-bad')).status, 404, 'no Node made');
  });

  it('joins: a credential, a Node with a /24 of the cluster CIDR, and the registry port; two nodes never share a range', async () => {
    const a = await joined('n1');
    const b = await joined('n2');
    assert.match(a.token, /^[0-9a-f]{64}$/);
    assert.equal(a.registryPort, master.registryPort);
    for (const [name, answer] of [
      ['n1', a],
      ['n2', b],
    ] as const) {
      assert.match(answer.podCIDR, /\/24$/);
      assert.ok(cidrContains(master.clusterCIDR, answer.podCIDR), `${answer.podCIDR} in ${master.clusterCIDR}`);
      const node = await admin<Node>('GET', `/api/v1/nodes/${name}`);
      assert.equal(node.status, 200);
      assert.equal(node.body.spec.podCIDR, answer.podCIDR);
      assert.deepEqual(node.body.spec.podCIDRs, [answer.podCIDR]);
    }
    assert.notEqual(a.podCIDR, b.podCIDR);
  });

  it('gives concurrent joins distinct ranges', async () => {
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => joined(`burst-${i}`)));
    const all = [
      ...answers.map((x) => x.podCIDR),
      (await admin<Node>('GET', '/api/v1/nodes/n1')).body.spec.podCIDR,
      (await admin<Node>('GET', '/api/v1/nodes/n2')).body.spec.podCIDR,
    ];
    assert.equal(new Set(all).size, all.length, all.join(' '));
  });

  it('refuses malformed joins with a 4xx Status and writes nothing', async () => {
    const cases: [unknown, number, string?][] = [
      ['', 400],
      ['{', 400],
      ['[1]', 400],
      ['null', 400],
      ['"n1"', 400],
      [{ apiVersion: 'minik8s.io/v1', kind: 'JoinRequest' }, 422],
      [{ nodeName: '' }, 422],
      [{ nodeName: 'UPPER' }, 422],
      [{ nodeName: 'a'.repeat(254) }, 422],
      [{ nodeName: ['n1'] }, 422],
      [{ nodeName: '../etc' }, 422],
      [{ nodeName: 'n 1' }, 422],
      [{ nodeName: 'n9', spec: {} }, 400],
      [{ apiVersion: 'v1', nodeName: 'n9' }, 400],
      [{ kind: 'Node', nodeName: 'n9' }, 400],
      [{ nodeName: 'n9' }, 415, 'text/plain'],
      [{ metadata: { name: 'n9' } }, 400],
    ];
    for (const [body, status, contentType] of cases) {
      const before = await revision();
      const res = await call<Status>('POST', JOIN, master.joinSecret, body, contentType);
      assert.equal(res.status, status, `${JSON.stringify(body)}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.kind, 'Status');
      assert.equal(res.body.code, status);
      assert.ok(!/\n\s+at /.test(JSON.stringify(res.body)), 'no stack trace');
      assert.equal(await revision(), before, `nothing written for ${JSON.stringify(body)}`);
    }
    assert.equal((await admin('GET', JOIN)).status, 405);
  });

  it('lets the join token do nothing but join', async () => {
    const res = await call<Status>('GET', '/api/v1/pods', master.joinSecret);
    assert.equal(res.status, 403);
    assert.match(res.body.message, /^pods is forbidden: User "system:bootstrap:[a-z0-9]{6}" cannot list resource "pods" in API group "" at the cluster scope/);
    assert.equal((await call('GET', '/api/v1/nodes/n1', master.joinSecret)).status, 403);
    assert.equal((await call('POST', '/apis/minik8s.io/v1/jointokens', master.joinSecret, {})).status, 403);
  });

  it('lets a node write its own Node and the status of its own pods, and nothing else', async () => {
    const n1 = (await joined('n1')).token;
    const status = { status: { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady' }] } };
    const own = await call<Node>('PATCH', '/api/v1/nodes/n1/status', n1, status, MERGE);
    assert.equal(own.status, 200, JSON.stringify(own.body));
    assert.equal(own.body.status.conditions![0].type, 'Ready');
    const other = await call<Status>('PATCH', '/api/v1/nodes/n2/status', n1, status, MERGE);
    assert.equal(other.status, 403);
    assert.match(
      other.body.message,
      /^nodes "n2" is forbidden: User "system:node:n1" cannot patch resource "nodes\/status" in API group "" at the cluster scope/,
    );
    assert.equal((await call('DELETE', '/api/v1/nodes/n1', n1)).status, 403);
    // Its own labels are the node's to set; roles, taints and its pod range are not (node restriction).
    const labelled = await call<Node>('PATCH', '/api/v1/nodes/n1', n1, { metadata: { labels: { disk: 'ssd' } } }, MERGE);
    assert.equal(labelled.status, 200, JSON.stringify(labelled.body));
    const cidr = labelled.body.spec.podCIDR;
    const same = await call('PATCH', '/api/v1/nodes/n1', n1, { spec: { podCIDR: cidr } }, MERGE);
    assert.equal(same.status, 200, 'restating the range it holds is no change');
    const grab = await call<Status>('PATCH', '/api/v1/nodes/n1', n1, { spec: { podCIDR: '10.99.0.0/24', podCIDRs: ['10.99.0.0/24'] } }, MERGE);
    assert.equal(grab.status, 403);
    assert.equal(grab.body.message, 'nodes "n1" is forbidden: node "n1" is not allowed to modify pod CIDR');
    assert.equal((await admin<Node>('GET', '/api/v1/nodes/n1')).body.spec.podCIDR, cidr);

    const pod = (name: string, nodeName: string) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name },
      spec: { nodeName, containers: [{ name: 'c', image: 'busybox:1.35' }] },
    });
    const create = await call<Status>('POST', '/api/v1/namespaces/default/pods', n1, pod('by-node', 'n1'));
    assert.equal(create.status, 403);
    assert.match(create.body.message, /^pods is forbidden: User "system:node:n1" cannot create resource "pods"/);
    assert.equal((await admin('POST', '/api/v1/namespaces/default/pods', pod('on-n1', 'n1'))).status, 201);
    assert.equal((await admin('POST', '/api/v1/namespaces/default/pods', pod('on-n2', 'n2'))).status, 201);
    const running = { status: { phase: 'Running' } };
    const theirs = await call<Status>('PATCH', '/api/v1/namespaces/default/pods/on-n2/status', n1, running, MERGE);
    assert.equal(theirs.status, 403);
    assert.match(
      theirs.body.message,
      /^pods "on-n2" is forbidden: User "system:node:n1" cannot patch resource "pods\/status" in API group "" in the namespace "default"/,
    );
    const mine = await call<Pod>('PATCH', '/api/v1/namespaces/default/pods/on-n1/status', n1, running, MERGE);
    assert.equal(mine.status, 200, JSON.stringify(mine.body));
    assert.equal(mine.body.status.phase, 'Running');
    assert.equal((await call('PATCH', '/api/v1/namespaces/default/pods/on-n1', n1, { metadata: { labels: { a: 'b' } } }, MERGE)).status, 403, 'no spec writes');
    assert.equal((await call('DELETE', '/api/v1/namespaces/default/pods/on-n2', n1)).status, 403);
    assert.equal((await call('GET', '/api/v1/namespaces/default/pods/on-n2', n1)).status, 200, 'nodes read everything');
    assert.equal(
      (
        await call('POST', '/api/v1/namespaces/default/services', n1, {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name: 's' },
          spec: { ports: [{ port: 80 }] },
        })
      ).status,
      403,
    );
  });

  it("keeps a node from changing what is not its own on its Node (node restriction), with Kubernetes' words", async () => {
    const n = (await joined('restricted')).token;
    assert.equal((await admin('PATCH', '/api/v1/nodes/restricted', { spec: { taints: [{ key: 'dedicated', effect: 'NoSchedule' }] } }, MERGE)).status, 200);
    const refused = async (path: string, body: unknown, message: string) => {
      const res = await call<Status>('PATCH', path, n, body, MERGE);
      assert.equal(res.status, 403, JSON.stringify(body));
      assert.equal(res.body.reason, 'Forbidden');
      assert.equal(res.body.message, `nodes "restricted" is forbidden: ${message}`);
    };
    await refused(
      '/api/v1/nodes/restricted',
      { metadata: { labels: { 'node-role.kubernetes.io/control-plane': '' } } },
      'node "restricted" is not allowed to modify labels: node-role.kubernetes.io/control-plane',
    );
    await refused(
      '/api/v1/nodes/restricted',
      { metadata: { labels: { 'node-restriction.kubernetes.io/pool': 'a' } } },
      'node "restricted" is not allowed to modify labels: node-restriction.kubernetes.io/pool',
    );
    await refused('/api/v1/nodes/restricted', { spec: { taints: null } }, 'node "restricted" is not allowed to modify taints');
    await refused('/api/v1/nodes/restricted', { spec: { unschedulable: true } }, 'node "restricted" is not allowed to modify unschedulable');
    await refused('/api/v1/nodes/restricted', { metadata: { finalizers: ['example.com/hold'] } }, 'node "restricted" is not allowed to modify finalizers');
    // Every patch type is judged by the Node it would leave: JSON patches and strategic merge patches get no further.
    const jsonPatch = (ops: unknown[]) => call<Status>('PATCH', '/api/v1/nodes/restricted', n, ops, 'application/json-patch+json');
    const viaJsonPatch = await jsonPatch([{ op: 'remove', path: '/spec/taints' }]);
    assert.equal(viaJsonPatch.status, 403, JSON.stringify(viaJsonPatch.body));
    assert.equal(viaJsonPatch.body.message, 'nodes "restricted" is forbidden: node "restricted" is not allowed to modify taints');
    const roleByJsonPatch = await jsonPatch([{ op: 'add', path: '/metadata/labels', value: { 'node-role.kubernetes.io/control-plane': '' } }]);
    assert.equal(roleByJsonPatch.status, 403);
    const viaStrategic = await call<Status>(
      'PATCH',
      '/api/v1/nodes/restricted',
      n,
      { metadata: { labels: { 'node-role.kubernetes.io/control-plane': '' } } },
      'application/strategic-merge-patch+json',
    );
    assert.equal(viaStrategic.status, 403);
    assert.equal((await jsonPatch([{ op: 'add', path: '/metadata/labels', value: { rack: 'r1' } }])).status, 200, 'its own label, by JSON patch');
    // A PUT of the whole object is judged the same way.
    const stored = (await call<Node>('GET', '/api/v1/nodes/restricted', n)).body;
    const put = await call<Status>('PUT', '/api/v1/nodes/restricted', n, { ...stored, spec: { ...stored.spec, taints: [] } });
    assert.equal(put.status, 403);
    assert.match(put.body.message, /not allowed to modify taints/);
    // What stays its own: its other labels; and the admin's taint is still there.
    assert.equal((await call('PATCH', '/api/v1/nodes/restricted', n, { metadata: { labels: { disk: 'ssd' } } }, MERGE)).status, 200);
    assert.deepEqual((await admin<Node>('GET', '/api/v1/nodes/restricted')).body.spec.taints, [{ key: 'dedicated', effect: 'NoSchedule' }]);
    // The admin deletes it without waiting on a finalizer the node would have added.
    assert.equal((await admin('DELETE', '/api/v1/nodes/restricted')).status, 200);
    assert.equal((await admin('GET', '/api/v1/nodes/restricted')).status, 404);
  });

  it('never hands a node a token through an address it reports (the master shows its client certificate only), and refuses a moved kubelet port (defect 1)', async () => {
    const n = (await joined('lure')).token;
    // The node's own listener, where it wants the master to call: with a serving certificate of the cluster CA for its name,
    // as its kubelet has (the master calls no kubelet whose certificate it cannot check).
    const ca = await loadOrCreateCa({ dir: join(master.dataDir, 'pki') });
    const cert = await issueServerCert(ca, { commonName: 'system:node:lure', dnsNames: ['lure'] });
    const seen: { authorization?: string; peer?: string }[] = [];
    const listener = createHttpsServer({ cert: cert.certPem, key: cert.keyPem, ca: ca.certPem, requestCert: true, rejectUnauthorized: false }, (req, res) => {
      seen.push({ authorization: req.headers.authorization, peer: String((req.socket as TLSSocket).getPeerCertificate().subject?.CN) });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    const port = (listener.address() as AddressInfo).port;
    try {
      // Its first status names its kubelet (loopback is its true address: this master listens on loopback).
      const first = {
        status: {
          conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady' }],
          addresses: [{ type: 'InternalIP', address: '127.0.0.1' }],
          daemonEndpoints: { kubeletEndpoint: { Port: port } },
        },
      };
      assert.equal((await call('PATCH', '/api/v1/nodes/lure/status', n, first, MERGE)).status, 200);
      await admin('GET', '/apis/metrics.k8s.io/v1beta1/nodes/lure');
      assert.ok(seen.length > 0, 'the master called the reported address');
      for (const request of seen) assert.deepEqual(request, { authorization: undefined, peer: 'kube-apiserver-kubelet-client' });
      // Once registered, the node may not move its kubelet, nor report an address the master must not call.
      const moved = await call<Status>(
        'PATCH',
        '/api/v1/nodes/lure/status',
        n,
        { status: { daemonEndpoints: { kubeletEndpoint: { Port: port + 1 } } } },
        MERGE,
      );
      assert.equal(moved.status, 403);
      assert.equal(moved.body.message, `nodes "lure" is forbidden: node "lure" is not allowed to change its kubelet port from ${port} to ${port + 1}`);
      for (const address of ['0.0.0.0', '169.254.169.254']) {
        const res = await call<Status>('PATCH', '/api/v1/nodes/lure/status', n, { status: { addresses: [{ type: 'InternalIP', address }] } }, MERGE);
        assert.equal(res.status, 403, address);
        assert.match(res.body.message, new RegExp(`node "lure" is not allowed to report InternalIP ${address.replace(/\./g, '\\.')}`));
      }
    } finally {
      listener.close();
    }
  });

  it('binds a node name to its node password: a second join with another password is refused and the real node keeps working (defect 6)', async () => {
    const real = await joined('owned');
    const intruder = await joinAs('owned', master.joinSecret, 'the-intruders-own-password');
    assert.equal(intruder.status, 403);
    assert.match(intruder.body.message, /^node "owned" has already joined with another node password/);
    assert.equal((await call('GET', '/api/v1/nodes/owned', real.token)).status, 200, "the real node's credential still works");
    assert.equal((await call('PATCH', '/api/v1/nodes/owned/status', real.token, { status: { phase: 'Running' } }, MERGE)).status, 200);
    // Deleting the Node (an admin's act) frees the name for another machine.
    assert.equal((await admin('DELETE', '/api/v1/nodes/owned')).status, 200);
    await waitFor(async () => (await joinAs('owned', master.joinSecret, 'the-intruders-own-password')).status === 200, {
      timeoutMs: 10_000,
      description: 'the name to be free once the Node is gone',
    });
  });

  it('answers token reviews for node credentials', async () => {
    const n1 = (await joined('n1')).token;
    const review = (token: string) => ({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } });
    const res = await call<{ status: unknown }>('POST', '/apis/authentication.k8s.io/v1/tokenreviews', n1, review(n1));
    assert.equal(res.status, 201);
    assert.deepEqual(res.body.status, { authenticated: true, user: { username: 'system:node:n1', groups: ['system:nodes'] } });
    assert.deepEqual((await admin<{ status: unknown }>('POST', '/apis/authentication.k8s.io/v1/tokenreviews', review('f'.repeat(64)))).body.status, {
      authenticated: false,
    });
  });

  it('keeps pod CIDRs and credentials across a master crash', async () => {
    const before = await joined('survivor');
    await master.kill();
    await master.restart();
    const node = await admin<Node>('GET', '/api/v1/nodes/survivor');
    assert.equal(node.body.spec.podCIDR, before.podCIDR);
    assert.equal((await call('GET', '/api/v1/nodes/survivor', before.token)).status, 200, 'the credential still works');
    assert.equal((await call('PATCH', '/api/v1/nodes/survivor/status', before.token, { status: { phase: 'Running' } }, MERGE)).status, 200);
    const fresh = await joined('after-restart');
    const taken = (await admin<{ items: Node[] }>('GET', '/api/v1/nodes')).body.items
      .filter((n) => n.metadata.name !== 'after-restart')
      .map((n) => n.spec.podCIDR);
    assert.ok(!taken.includes(fresh.podCIDR), `${fresh.podCIDR} was not given before`);
  });

  it('frees the range and revokes the credential of a deleted node', async () => {
    const gone = await joined('doomed');
    const r = cli(['delete', 'node', 'doomed']);
    assert.equal(r.status, 0, r.stderr);
    await waitFor(async () => (await call('GET', '/api/v1/nodes', gone.token)).status === 401, {
      timeoutMs: 10_000,
      description: "the deleted node's credential to be revoked",
    });
    const next = await joined('heir');
    assert.equal(next.podCIDR, gone.podCIDR, 'the freed range is the lowest free one');

    // Through the API too.
    const also = await joined('doomed-2');
    assert.equal((await admin('DELETE', '/api/v1/nodes/doomed-2')).status, 200);
    await waitFor(async () => (await call('GET', '/api/v1/nodes', also.token)).status === 401, { timeoutMs: 10_000, description: 'doomed-2 revoked' });
  });

  it('makes join tokens with the CLI that join, and revokes them', async () => {
    const made = cli(['token', 'create', '--ttl', '1h', '--description', 'integration']);
    assert.equal(made.status, 0, made.stderr);
    // Over HTTPS the token pins the cluster CA (K10<hash>::id.secret); the join endpoint takes its id.secret.
    assert.match(made.stdout, /^K10[0-9a-f]{64}::[a-z0-9]{6}\.[a-z0-9]{16}\n$/);
    const token = parsePinnedJoinToken(made.stdout).token;
    const listed = cli(['token', 'list']);
    assert.equal(listed.status, 0, listed.stderr);
    assert.match(listed.stdout, new RegExp(`^${token.slice(0, 6)}\\s+(59m|60m|1h)\\s+\\S+\\s+integration$`, 'm'));
    assert.equal(listed.stdout.includes(token.slice(7)), false, 'no secrets listed');
    await joined('cli-node', token);
    const deleted = cli(['token', 'delete', token.slice(0, 6)]);
    assert.equal(deleted.status, 0, deleted.stderr);
    assert.equal((await joinAs('cli-node-2', token)).status, 401);
    const again = cli(['token', 'delete', token.slice(0, 6)]);
    assert.equal(again.status, 1);
    assert.match(again.stderr, /^Error from server \(NotFound\): jointokens.minik8s.io "[a-z0-9]{6}" not found/);
  });
});
