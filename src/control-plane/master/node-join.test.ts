// Joins on a memory store: the Node and its pod CIDR, re-joins, concurrent joins, bad names, a full range, and the release when a Node is deleted.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { nodeKind, type Node } from '../../core/api/node.js';
import { ForbiddenError, InvalidError, ServiceUnavailableError } from '../../core/errors.js';
import { MemoryStore } from '../../core/store/memory-store.js';
import { waitFor } from '../../core/wait-for.js';
import { LocalClient } from '../api-server/local-client.js';
import { ObjectService } from '../api-server/object-service.js';
import { controllerFixture } from '../reconcilers/controller-fixture.js';
import { NodeCleanup } from './node-cleanup.js';
import { NodeCredentials } from './node-credentials.js';
import { nodePodCIDR, NodeRegistrar, validateNodeName } from './node-join.js';
import { PodCIDRAllocator } from './pod-cidr.js';

function setup(clusterCIDR = '10.244.0.0/16', controlPlaneNodeName?: string) {
  const store = new MemoryStore();
  const service = new ObjectService({ store });
  const allocator = new PodCIDRAllocator({ store, clusterCIDR });
  const credentials = new NodeCredentials({ store });
  const registrar = new NodeRegistrar({ service, allocator, credentials, controlPlaneNodeName });
  const node = async (name: string) => (await service.get(nodeKind, undefined, name)) as Node;
  return { store, service, allocator, credentials, registrar, node };
}

describe('validateNodeName', () => {
  it('accepts DNS-1123 subdomains and refuses the rest with 422 causes', () => {
    for (const ok of ['n1', 'node-1.example.com', 'a'.repeat(253)]) assert.equal(validateNodeName(ok), ok);
    const cases: [unknown, string, RegExp][] = [
      [undefined, 'FieldValueRequired', /nodeName: Required value/],
      ['', 'FieldValueRequired', /Required value/],
      [5, 'FieldValueTypeInvalid', /must be a string/],
      [{ a: 1 }, 'FieldValueTypeInvalid', /must be a string/],
      ['N1', 'FieldValueInvalid', /RFC 1123 subdomain/],
      ['-n', 'FieldValueInvalid', /RFC 1123 subdomain/],
      ['n_1', 'FieldValueInvalid', /RFC 1123 subdomain/],
      ['n/1', 'FieldValueInvalid', /RFC 1123 subdomain/],
      ['a'.repeat(254), 'FieldValueInvalid', /no more than 253/],
    ];
    for (const [value, reason, message] of cases) {
      assert.throws(
        () => validateNodeName(value),
        (err: unknown) => {
          assert.ok(err instanceof InvalidError, String(value));
          assert.equal(err.details.causes?.[0]?.reason, reason);
          assert.equal(err.details.causes?.[0]?.field, 'nodeName');
          assert.match(err.message, message);
          return true;
        },
      );
    }
  });
});

describe('NodeRegistrar', () => {
  it('creates the Node with the lowest free /24 and a credential', async () => {
    const { registrar, credentials, node } = setup();
    const a = await registrar.join('n1');
    assert.equal(a.podCIDR, '10.244.0.0/24');
    assert.equal(a.created, true);
    assert.deepEqual((await node('n1')).spec, { podCIDR: '10.244.0.0/24', podCIDRs: ['10.244.0.0/24'] });
    assert.equal((await credentials.authenticate(a.token))?.name, 'system:node:n1');
    const b = await registrar.join('n2');
    assert.equal(b.podCIDR, '10.244.1.0/24');
  });

  it('re-joins keep the podCIDR and replace the credential', async () => {
    const { registrar, credentials, node } = setup();
    const first = await registrar.join('n1');
    await registrar.join('n2');
    const again = await registrar.join('n1');
    assert.equal(again.created, false);
    assert.equal(again.podCIDR, first.podCIDR);
    assert.equal(nodePodCIDR(await node('n1')), first.podCIDR);
    assert.equal(await credentials.authenticate(first.token), undefined);
    assert.ok(await credentials.authenticate(again.token));
  });

  it('gives a Node that has none a range, and keeps a range set by hand', async () => {
    const { registrar, service, allocator, node } = setup();
    await service.create(nodeKind, undefined, { metadata: { name: 'bare' } });
    await service.create(nodeKind, undefined, { metadata: { name: 'manual' }, spec: { podCIDR: '10.244.0.0/24' } });
    const bare = await registrar.join('bare');
    assert.equal(bare.podCIDR, '10.244.1.0/24', 'the range set by hand on another Node is taken');
    assert.deepEqual((await node('bare')).spec?.podCIDRs, ['10.244.1.0/24']);
    const manual = await registrar.join('manual');
    assert.equal(manual.podCIDR, '10.244.0.0/24');
    assert.deepEqual((await allocator.list()).map((r) => `${r.cidr}=${r.nodeName}`).sort(), ['10.244.0.0/24=manual', '10.244.1.0/24=bare']);
  });

  it('never gives two concurrent joins the same range', async () => {
    const { registrar, allocator } = setup();
    const results = await Promise.all(Array.from({ length: 16 }, (_, i) => registrar.join(`n${i}`)));
    assert.equal(new Set(results.map((r) => r.podCIDR)).size, 16);
    assert.equal((await allocator.list()).length, 16);
  });

  it('refuses bad names without writing, and a full range with 503', async () => {
    const { registrar, store } = setup('10.9.0.0/23');
    const before = await store.currentRevision();
    await assert.rejects(registrar.join('Bad_Name'), InvalidError);
    assert.equal(await store.currentRevision(), before, 'nothing was written');
    await registrar.join('a');
    await registrar.join('b');
    const at = await store.currentRevision();
    await assert.rejects(registrar.join('c'), (err: unknown) => err instanceof ServiceUnavailableError && /no pod CIDR left for node "c"/.test(err.message));
    assert.equal(await store.currentRevision(), at, 'no Node without a range');
  });

  it('releases the range and the credential of a deleted Node, and nothing while it exists', async () => {
    const { registrar, service, allocator, credentials } = setup();
    const n1 = await registrar.join('n1');
    assert.equal(await registrar.releaseIfGone('n1'), undefined);
    await service.delete(nodeKind, undefined, 'n1');
    assert.deepEqual(await registrar.releaseIfGone('n1'), { freed: ['10.244.0.0/24'], revoked: true });
    assert.equal(await credentials.authenticate(n1.token), undefined);
    assert.deepEqual(await allocator.list(), []);
    assert.equal((await registrar.join('n2')).podCIDR, '10.244.0.0/24', 'the freed range is given again');
  });
});

describe('NodeRegistrar node passwords', () => {
  it('refuses a join for a bound name with another password or none, and keeps the real node working', async () => {
    const { registrar, credentials, service } = setup();
    const real = await registrar.join('n2', { password: 'real-password-0123456789' });
    for (const password of ['intruder-password-98765', undefined]) {
      await assert.rejects(
        registrar.join('n2', { password }),
        (err: unknown) => err instanceof ForbiddenError && err.code === 403 && /node "n2" has already joined with another node password/.test(err.message),
      );
    }
    assert.deepEqual(await credentials.authenticate(real.token), { name: 'system:node:n2', groups: ['system:nodes'] });
    // The real node may join again (its credential lost), and deleting the Node frees the name.
    const again = await registrar.join('n2', { password: 'real-password-0123456789' });
    assert.equal(again.podCIDR, real.podCIDR);
    await service.delete(nodeKind, undefined, 'n2');
    await registrar.releaseIfGone('n2');
    assert.equal((await registrar.join('n2', { password: 'a-new-machine-password-1' })).created, true);
  });

  it("creates the Node with the join's labels and taints, the control-plane role only for the master's own node", async () => {
    const { registrar, node } = setup('10.244.0.0/16', 'master-node');
    await registrar.join('w1', { labels: { gpu: 'a100', 'kubernetes.io/arch': 'amd64' }, taints: [{ key: 'dedicated', value: 'ml', effect: 'NoSchedule' }] });
    const w1 = await node('w1');
    assert.deepEqual(w1.metadata.labels, { gpu: 'a100', 'kubernetes.io/arch': 'amd64' });
    assert.deepEqual(w1.spec?.taints, [{ key: 'dedicated', value: 'ml', effect: 'NoSchedule' }]);
    await registrar.join('master-node');
    assert.deepEqual((await node('master-node')).metadata.labels, { 'node-role.kubernetes.io/control-plane': '' });
    await assert.rejects(
      registrar.join('w2', { labels: { 'node-role.kubernetes.io/control-plane': '' } }),
      (err: unknown) =>
        err instanceof ForbiddenError && /node "w2" is not allowed to set the following labels: node-role\.kubernetes\.io\/control-plane/.test(err.message),
    );
  });
});

describe('NodeCleanup', () => {
  it('releases whatever way a Node goes, and at start for Nodes deleted while it was not running', async () => {
    const { registrar, service, allocator, credentials } = setup();
    const stop = new AbortController();
    const n1 = await registrar.join('n1');
    const n2 = await registrar.join('n2');
    // Deleted before the cleanup runs: found by the sweep at start.
    await service.delete(nodeKind, undefined, 'n2');
    const { informers, run } = controllerFixture(new LocalClient(service));
    const running = run(stop.signal, new NodeCleanup({ informers, registrar }));
    try {
      await waitFor(async () => (await allocator.list()).every((r) => r.nodeName !== 'n2'), { timeoutMs: 5000, description: 'n2 released at start' });
      assert.equal(await credentials.authenticate(n2.token), undefined);
      assert.ok(await credentials.authenticate(n1.token));
      await service.delete(nodeKind, undefined, 'n1');
      await waitFor(async () => (await credentials.authenticate(n1.token)) === undefined, { timeoutMs: 5000, description: 'n1 revoked' });
      assert.deepEqual(await allocator.list(), []);
    } finally {
      stop.abort();
      await running;
    }
  });
});
