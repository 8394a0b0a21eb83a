// Node heartbeats as Leases on a real master with a real (fake-provider) worker: the Lease appears and is renewed, the Node status is not rewritten by heartbeats, a stopped worker's node goes NotReady, and kubectl shows it all.
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Lease, leaseKind, NODE_LEASE_NAMESPACE, nodeLease } from '../src/core/api/lease.js';
import { nodeKind, type Node } from '../src/core/api/node.js';
import { ApiClient } from '../src/core/client/api-client.js';
import { ForbiddenError } from '../src/core/errors.js';
import { waitFor } from '../src/core/wait-for.js';
import { obtainNodeCredential } from '../src/node/agent/node-credential.js';
import { startFakeWorker, type FakeWorker } from './helpers/fake-worker.js';
import { startMaster, type MasterProcess } from './helpers/master.js';

const HAS_KUBECTL = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).status === 0;
const NODE = 'lease-w1';
/** Short, so that a stopped worker is noticed within seconds (Kubernetes' 40 s otherwise). */
const GRACE_SECONDS = 6;

function kubectl(master: MasterProcess, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      'kubectl',
      ['--kubeconfig', master.kubeconfig!, ...args],
      { env: { ...process.env, HOME: master.home }, timeout: 60_000 },
      (err, stdout, stderr) => {
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
      },
    );
  });
}

describe('node leases', () => {
  let master: MasterProcess;
  let worker: FakeWorker | undefined;
  let client: ApiClient;
  const dirs: string[] = [];
  const getNode = async () => (await client.get(nodeKind, { name: NODE })) as Node;
  const getLease = async () => (await client.get(leaseKind, { namespace: NODE_LEASE_NAMESPACE, name: NODE })) as Lease;

  before(async () => {
    master = await startMaster({ tls: true, registry: false, extraArgs: ['--node-monitor-grace-period', String(GRACE_SECONDS)] });
    client = new ApiClient({ server: master.url, token: master.token, tls: { ca: master.ca! } });
    // Heartbeats every second: ten in the time a kubelet makes one.
    worker = await startFakeWorker({ master, args: ['--name', NODE, '--provider=fake', '--fake-node-heartbeat', '1'], readyNodes: 1, namePrefix: NODE });
  });
  after(async () => {
    await worker?.stop();
    client?.close();
    await master?.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  test('the worker keeps a Lease named after its node in kube-node-lease, owned by the Node, and renews it', async () => {
    const node = await getNode();
    const lease = await waitFor(() => getLease().catch(() => undefined), { timeoutMs: 10_000, description: "the node's Lease" });
    assert.equal(lease.spec?.holderIdentity, NODE);
    assert.equal(lease.spec?.leaseDurationSeconds, 40);
    assert.match(lease.spec?.renewTime ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/, 'a MicroTime');
    assert.deepEqual(lease.metadata.ownerReferences, [{ apiVersion: 'v1', kind: 'Node', name: NODE, uid: node.metadata.uid }]);
    await waitFor(async () => ((await getLease()).spec?.renewTime ?? '') > lease.spec!.renewTime!, { timeoutMs: 10_000, description: 'a renewal' });
  });

  test('heartbeats renew the Lease but do not rewrite the Node status', async () => {
    const nodeVersions = new Set([(await getNode()).metadata.resourceVersion]);
    const renewals = new Set([(await getLease()).spec?.renewTime]);
    // Eight heartbeats (one a second), the Node looked at meanwhile.
    await waitFor(
      async () => {
        nodeVersions.add((await getNode()).metadata.resourceVersion);
        renewals.add((await getLease()).spec?.renewTime);
        return renewals.size > 8;
      },
      { timeoutMs: 30_000, intervalMs: 250, description: 'eight Lease renewals' },
    );
    assert.equal(nodeVersions.size, 1, `the Node was rewritten ${nodeVersions.size - 1} times during ${renewals.size - 1} heartbeats`);
    assert.equal((await getNode()).status?.conditions?.find((c) => c.type === 'Ready')?.status, 'True', 'the Lease alone keeps it Ready');
  });

  test("a node may write its own Lease and no other node's: 403", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'minik8s-lease-intruder-'));
    dirs.push(dataDir);
    const ac = new AbortController();
    const credential = await obtainNodeCredential({
      server: master.url,
      nodeName: 'lease-intruder',
      joinToken: master.joinToken,
      dataDir,
      signal: ac.signal,
      log: () => {},
    });
    const intruder = new ApiClient({ server: master.url, token: credential.token, tls: { ca: credential.ca ?? master.ca! } });
    try {
      const own = (await intruder.create(leaseKind, nodeLease({ nodeName: 'lease-intruder', now: new Date() }), { namespace: NODE_LEASE_NAMESPACE })) as Lease;
      assert.equal(own.spec?.holderIdentity, 'lease-intruder');
      const other = await getLease();
      await assert.rejects(
        intruder.replace(leaseKind, { namespace: NODE_LEASE_NAMESPACE, name: NODE }, { ...other, spec: { ...other.spec, holderIdentity: 'lease-intruder' } }),
        (err: unknown) => err instanceof ForbiddenError && /can only access node lease with the same name as the requesting node/.test(err.message),
      );
      await assert.rejects(
        intruder.create(leaseKind, nodeLease({ nodeName: 'lease-elsewhere', now: new Date() }), { namespace: NODE_LEASE_NAMESPACE }),
        (err: unknown) => err instanceof ForbiddenError && /User "system:node:lease-intruder" cannot create resource "leases"/.test(err.message),
      );
      assert.equal((await getLease()).spec?.holderIdentity, NODE);
    } finally {
      intruder.close();
      await client.delete(nodeKind, { name: 'lease-intruder' });
    }
  });

  test('kubectl get leases -A lists the node Lease; describe node shows it without a warning', { skip: !HAS_KUBECTL && 'kubectl is not on PATH' }, async () => {
    const get = await kubectl(master, ['get', 'leases', '-A']);
    assert.equal(get.code, 0, get.stderr);
    assert.match(get.stdout, /^NAMESPACE\s+NAME\s+HOLDER\s+AGE$/m);
    assert.match(get.stdout, new RegExp(`^kube-node-lease\\s+${NODE}\\s+${NODE}\\s+\\S+$`, 'm'));
    const describeNode = await kubectl(master, ['describe', 'node', NODE]);
    assert.equal(describeNode.code, 0, describeNode.stderr);
    assert.equal(describeNode.stderr, '', 'no warning');
    assert.match(describeNode.stdout, new RegExp(`^Lease:\\s*\\n\\s+HolderIdentity:\\s+${NODE}$`, 'm'));
    assert.match(describeNode.stdout, /^\s+RenewTime:\s+\w{3}, \d\d \w{3} \d{4}/m);
  });

  test("kubectl auth can-i --list prints the caller's rules", { skip: !HAS_KUBECTL && 'kubectl is not on PATH' }, async () => {
    const list = await kubectl(master, ['auth', 'can-i', '--list']);
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /^Resources\s+Non-Resource URLs\s+Resource Names\s+Verbs$/m);
    assert.match(list.stdout, /^\*\.\*\s+\[\]\s+\[\]\s+\[\*\]$/m);
  });

  test("a stopped worker's node goes NotReady once its Lease is no longer renewed", async () => {
    await worker!.stop();
    worker = undefined;
    const node = await waitFor(
      async () => {
        const n = await getNode();
        // The conditions and the taints are two writes: both, in either order.
        const unknown = n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'Unknown');
        const tainted = n.spec?.taints?.some((t) => t.key === 'node.kubernetes.io/unreachable' && t.effect === 'NoExecute');
        return unknown && tainted ? n : undefined;
      },
      { timeoutMs: (GRACE_SECONDS + 20) * 1000, description: 'the node to go Unknown and be tainted unreachable' },
    );
    assert.equal(node.status?.conditions?.find((c) => c.type === 'Ready')?.reason, 'NodeStatusUnknown');
    if (HAS_KUBECTL) {
      const nodes = await kubectl(master, ['get', 'node', NODE]);
      assert.match(nodes.stdout, new RegExp(`^${NODE}\\s+NotReady\\s`, 'm'));
    }
  });
});
