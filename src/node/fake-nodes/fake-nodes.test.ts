// Unit tests for the fake-node host: names, heartbeat spreading, and many nodes over one pod watch against an in-process API server.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nodeKind, type Node } from '../../core/api/node.js';
import { podKind, type Pod } from '../../core/api/pod.js';
import { ApiClient } from '../../core/client/api-client.js';
import { NotFoundError, ServiceUnavailableError } from '../../core/errors.js';
import { MemoryStore } from '../../core/store/memory-store.js';
import { waitFor } from '../../core/wait-for.js';
import { ADMIN_USER, TokenAuthenticator } from '../../control-plane/api-server/auth.js';
import { startApiServer } from '../../control-plane/api-server/server.js';
import { DEFAULT_FAKE_NODE_CAPACITY } from '../worker-config.js';
import { cidrContains } from '../../core/api/ipv4.js';
import { POD_CIDR_RANGE_FULL } from '../../core/api/node.js';
import { StartupError } from '../../core/lifecycle/startup-error.js';
import { type Lease, leaseKind, NODE_LEASE_NAMESPACE } from '../../core/api/lease.js';
import { clusterCIDRBitsFor, FAKE_NODE_LABEL, FakeNodeHost, fakeNodeNames, heartbeatBatches } from './fake-nodes.js';
import type { NodeCredential } from '../agent/node-credential.js';

describe('fakeNodeNames', () => {
  it('numbers the nodes from 0 after the prefix, as kwok does', () => {
    assert.deepEqual(fakeNodeNames('fake-node', 3), ['fake-node-0', 'fake-node-1', 'fake-node-2']);
    assert.deepEqual(fakeNodeNames('x', 0), []);
  });
});

describe('clusterCIDRBitsFor', () => {
  for (const [count, bits] of [
    [1, 24],
    [2, 23],
    [256, 16],
    [257, 15],
    [1000, 14],
    [1024, 14],
    [32_768, 9],
  ] as const) {
    it(`${count} nodes need a /${bits}`, () => assert.equal(clusterCIDRBitsFor(count), bits));
  }
});

describe('heartbeatBatches', () => {
  for (const [count, interval, tick, ticks, sizes] of [
    // 1,000 nodes on 10 s: 100 ticks of 100 ms, 10 nodes each.
    [1000, 10_000, 100, 100, [10]],
    // Fewer nodes than ticks: one node per tick, spread over the whole interval.
    [5, 10_000, 2000, 5, [1]],
    // Uneven: batch sizes differ by one at most.
    [7, 300, 100, 3, [2, 3]],
    [1, 10_000, 10_000, 1, [1]],
  ] as const) {
    it(`${count} nodes every ${interval} ms: ${ticks} ticks of ${tick} ms`, () => {
      const { tickMs, batches } = heartbeatBatches(count, interval);
      assert.equal(tickMs, tick);
      assert.equal(batches.length, ticks);
      assert.deepEqual(
        batches.flat(),
        Array.from({ length: count }, (_, i) => i),
        'every node once, in order',
      );
      assert.deepEqual([...new Set(batches.map((b) => b.length))].sort(), [...sizes]);
    });
  }
});

const TOKEN = 'fake-nodes-test-token';
const NODE_IP = '192.168.60.1';

/** An API server over a MemoryStore; `join` plays the master's join (a Node with a /24) and answers a credential. */
async function startCluster() {
  const authenticator = new TokenAuthenticator();
  authenticator.add(TOKEN, ADMIN_USER);
  const stop = new AbortController();
  const api = await startApiServer({ store: new MemoryStore(), authenticator, address: '127.0.0.1', port: 0, signal: stop.signal });
  const client = new ApiClient({ server: api.url, token: TOKEN });
  let next = 0;
  const join = async (name: string): Promise<NodeCredential> => {
    const podCIDR = `10.200.${next++}.0/24`;
    await client.create(nodeKind, { apiVersion: 'v1', kind: 'Node', metadata: { name }, spec: { podCIDR, podCIDRs: [podCIDR] } });
    return { server: api.url, nodeName: name, token: TOKEN, podCIDR };
  };
  return {
    url: api.url,
    client,
    join,
    async close() {
      client.close();
      stop.abort();
      await api.closed;
    },
  };
}

async function getPod(client: ApiClient, name: string): Promise<Pod | undefined> {
  try {
    return (await client.get(podKind, { namespace: 'default', name })) as Pod;
  } catch (err) {
    if (err instanceof NotFoundError) return undefined;
    throw err;
  }
}

describe('FakeNodeHost', () => {
  it('registers every node with its label and capacity, heartbeats, and runs pods bound to them to Running with an address of their /24', async () => {
    const cluster = await startCluster();
    const stop = new AbortController();
    const logs: string[] = [];
    const names = fakeNodeNames('kwok', 20);
    const host = new FakeNodeHost({
      server: cluster.url,
      names,
      nodeIP: NODE_IP,
      capacity: { ...DEFAULT_FAKE_NODE_CAPACITY, pods: 50 },
      labels: { zone: 'a' },
      taints: [],
      kubeletPort: 10250,
      dataDir: '/nonexistent',
      heartbeatIntervalMs: 200,
      requestConcurrency: 4,
      syncWorkers: 4,
      obtainCredential: (name) => cluster.join(name),
      log: (m) => logs.push(m),
    });
    const running = host.start(stop.signal);
    try {
      await Promise.race([
        running,
        waitFor(() => logs.some((l) => l.includes('syncing pods')), { timeoutMs: 10_000, description: 'the fake nodes to register' }),
      ]);
      const nodes = (await cluster.client.list(nodeKind)).items as Node[];
      assert.equal(nodes.length, 20);
      for (const node of nodes) {
        assert.equal(node.metadata.labels?.[FAKE_NODE_LABEL], 'true');
        assert.equal(node.metadata.labels?.zone, 'a');
        assert.equal(node.metadata.labels?.['kubernetes.io/hostname'], node.metadata.name);
        assert.deepEqual(node.status?.capacity, { cpu: '32', memory: `${256 * 1024 * 1024}Ki`, pods: '50' });
        assert.deepEqual(node.status?.allocatable, node.status?.capacity, 'a fake node keeps nothing back');
        assert.equal(node.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'True');
        assert.equal(node.status?.nodeInfo?.containerRuntimeVersion, 'fake://minik8s');
      }

      // Heartbeats keep coming, as Leases: every node's renewTime moves on, while its status is not rewritten (nothing in it changed).
      const leases = async () =>
        ((await cluster.client.list(leaseKind, { namespace: NODE_LEASE_NAMESPACE })).items as Lease[]).filter((l) => names.includes(l.metadata.name!));
      const first = await leases();
      assert.equal(first.length, 20);
      for (const l of first) assert.equal(l.spec?.holderIdentity, l.metadata.name);
      const before = new Map(first.map((l) => [l.metadata.name!, l.spec?.renewTime ?? '']));
      await waitFor(async () => (await leases()).every((l) => (l.spec?.renewTime ?? '') > before.get(l.metadata.name!)!), {
        timeoutMs: 5000,
        description: 'every fake node to renew its Lease',
      });
      const versions = new Map(nodes.map((n) => [n.metadata.name!, n.metadata.resourceVersion]));
      assert.ok(
        ((await cluster.client.list(nodeKind)).items as Node[]).every((n) => versions.get(n.metadata.name!) === n.metadata.resourceVersion),
        'no Node status rewritten by heartbeats alone',
      );

      // Two pods on each of three nodes.
      const placed = ['kwok-0', 'kwok-0', 'kwok-7', 'kwok-7', 'kwok-19', 'kwok-19'];
      await Promise.all(
        placed.map((nodeName, i) =>
          cluster.client.create(
            podKind,
            {
              apiVersion: 'v1',
              kind: 'Pod',
              metadata: { name: `p${i}` },
              spec: {
                nodeName,
                containers: [
                  { name: 'app', image: 'busybox:1.36' },
                  { name: 'side', image: 'busybox:1.36' },
                ],
              },
            },
            { namespace: 'default' },
          ),
        ),
      );
      const cidrOf = new Map(((await cluster.client.list(nodeKind)).items as Node[]).map((n) => [n.metadata.name!, n.spec!.podCIDR!]));
      const pods: Pod[] = await waitFor(
        async () => {
          const got = await Promise.all(placed.map((_, i) => getPod(cluster.client, `p${i}`)));
          const ready = got.every((p) => p?.status?.phase === 'Running' && p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
          return ready ? (got as Pod[]) : undefined;
        },
        { timeoutMs: 5000, description: 'the pods to run' },
      );
      for (const pod of pods) {
        assert.ok(cidrContains(cidrOf.get(pod.spec.nodeName!)!, `${pod.status!.podIP}/32`), `${pod.status!.podIP} in ${cidrOf.get(pod.spec.nodeName!)}`);
        assert.equal(pod.status!.hostIP, NODE_IP);
        assert.deepEqual(
          pod.status!.containerStatuses?.map((c) => [c.name, c.ready, Boolean(c.state?.running)]),
          [
            ['app', true, true],
            ['side', true, true],
          ],
        );
      }
      assert.equal(new Set(pods.map((p) => p.status!.podIP)).size, pods.length, 'no two pods share an address');

      // A pod for no node of ours is left alone.
      await cluster.client.create(
        podKind,
        { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'elsewhere' }, spec: { nodeName: 'real-node', containers: [{ name: 'app', image: 'x' }] } },
        { namespace: 'default' },
      );

      // Graceful deletion: the fake node stops the pod and removes the object.
      await Promise.all(placed.map((_, i) => cluster.client.delete(podKind, { namespace: 'default', name: `p${i}` })));
      await waitFor(async () => (await Promise.all(placed.map((_, i) => getPod(cluster.client, `p${i}`)))).every((p) => p === undefined), {
        timeoutMs: 5000,
        description: 'the deleted pods to be gone',
      });
      await host.whenIdle();
      assert.equal((await getPod(cluster.client, 'elsewhere'))?.status?.containerStatuses, undefined, "another node's pod is not touched");
      // A new pod on a node reuses a freed address rather than running out of the /24.
      await cluster.client.create(
        podKind,
        { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'again' }, spec: { nodeName: 'kwok-0', containers: [{ name: 'app', image: 'x' }] } },
        { namespace: 'default' },
      );
      const again = await waitFor(async () => (await getPod(cluster.client, 'again'))?.status?.podIP, {
        timeoutMs: 5000,
        description: "the new pod's address",
      });
      assert.equal(again, pods[0]!.status!.podIP, "the lowest free address of the node's /24");
      // A heartbeat round that only skipped nodes still posting the last one (a loaded machine, 200 ms rounds) failed nothing.
      assert.deepEqual(
        logs.filter((l) => /failed|retrying/.test(l) && !/heartbeat round \d+: 0 failed,/.test(l)),
        [],
      );
    } finally {
      stop.abort();
      await running;
      await cluster.close();
    }
  });

  it('stops with how large a cluster CIDR the nodes need when the master has no /24 left', async () => {
    const full = new ServiceUnavailableError('no pod CIDR left for node "kwok-3": all 256 /24 ranges of the cluster CIDR 10.244.0.0/16 are allocated', {
      causes: [{ reason: POD_CIDR_RANGE_FULL, message: 'full' }],
    });
    const host = new FakeNodeHost({
      server: 'http://127.0.0.1:1',
      names: fakeNodeNames('kwok', 1000),
      nodeIP: NODE_IP,
      capacity: DEFAULT_FAKE_NODE_CAPACITY,
      labels: {},
      taints: [],
      kubeletPort: 10250,
      dataDir: '/nonexistent',
      obtainCredential: async (name) => {
        throw new StartupError(`the master refused to join node "${name}": ${full.message}`, { cause: full });
      },
    });
    await assert.rejects(
      host.start(new AbortController().signal),
      (err: Error) =>
        err instanceof StartupError &&
        /no pod CIDR left .*\(1000 fake nodes need a \/24 each: start the master with --cluster-cidr of \/14 or larger, e\.g\. 10\.128\.0\.0\/9\)/.test(
          err.message,
        ),
    );
  });
});
