// The node agent's heartbeats against a fake API: a Lease renewed every 10 s, the Node status written on change or every 5 minutes (stepped with a manual clock), and a Ready the master marked Unknown written back with a new transition time.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KindDefinition } from '../../core/api/kind.js';
import type { Lease } from '../../core/api/lease.js';
import type { Node } from '../../core/api/node.js';
import type { Client } from '../../core/client/client.js';
import { NotFoundError } from '../../core/errors.js';
import { ManualClock } from '../kubelet/clock.js';
import { NodeAgent } from './node-agent.js';

const info = { runtimeVersion: 'docker://20.10.24', cpuCores: 2, memoryBytes: 4 * 1024 ** 3, kernelVersion: '6.1', osImage: 'Debian', architecture: 'amd64' };

/** Holds one Node; status patches replace the status, as the API's merge patch does for our whole-status bodies. */
function fakeApi() {
  const api = {
    node: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1', uid: 'uid-n1' }, spec: {} } as Node,
    lease: undefined as Lease | undefined,
    down: false,
    writes: { lease: 0, status: 0 },
    async patch(_def: unknown, _ref: unknown, body: { metadata?: Node['metadata']; status?: Node['status'] }, options: { subresource?: string } = {}) {
      if (options.subresource === 'status') {
        if (api.down) throw new Error('connect ECONNREFUSED');
        api.writes.status++;
        api.node = { ...api.node, status: body.status! };
        return api.node;
      }
      api.node = { ...api.node, metadata: { ...api.node.metadata, ...body.metadata } };
      return api.node;
    },
    async get(def: KindDefinition) {
      if (def.kind === 'Node') return api.node;
      if (!api.lease) throw new NotFoundError('leases "n1" not found');
      return api.lease;
    },
    async create(_def: KindDefinition, lease: Lease) {
      if (api.down) throw new Error('connect ECONNREFUSED');
      api.writes.lease++;
      api.lease = { ...lease, metadata: { ...lease.metadata, resourceVersion: '1' } };
      return api.lease;
    },
    async replace(_def: KindDefinition, _ref: unknown, lease: Lease) {
      if (api.down) throw new Error('connect ECONNREFUSED');
      api.writes.lease++;
      api.lease = { ...lease, metadata: { ...lease.metadata, resourceVersion: String(Number(lease.metadata.resourceVersion) + 1) } };
      return api.lease;
    },
  };
  return api;
}

describe('NodeAgent heartbeat', () => {
  it("moves Ready's lastTransitionTime when it comes back after the master marked the node Unknown", async () => {
    const api = fakeApi();
    let now = new Date('2026-11-23T10:00:00Z');
    const agent = new NodeAgent({
      client: api as unknown as Client,
      nodeName: 'n1',
      nodeIP: '10.0.0.5',
      kubeletPort: 10250,
      labels: {},
      info: async () => info,
      now: () => now,
      log: () => {},
    });
    await agent.register();
    const ready = () => api.node.status?.conditions?.find((c) => c.type === 'Ready');
    assert.equal(ready()?.lastTransitionTime, '2026-11-23T10:00:00.000Z');

    api.down = true;
    now = new Date('2026-11-23T10:00:10Z');
    await assert.rejects(agent.heartbeat());
    // The master's node lifecycle marks it Unknown meanwhile.
    api.node = {
      ...api.node,
      status: {
        ...api.node.status,
        conditions: api.node.status!.conditions!.map((c) =>
          c.type === 'Ready' ? { ...c, status: 'Unknown', reason: 'NodeStatusUnknown', lastTransitionTime: '2026-11-23T10:00:45.000Z' } : c,
        ),
      },
    };
    api.down = false;
    now = new Date('2026-11-23T10:01:00Z');
    await agent.heartbeat();
    assert.equal(ready()?.status, 'True');
    assert.equal(ready()?.lastTransitionTime, '2026-11-23T10:01:00.000Z');

    // Heartbeats in a row keep the transition time.
    now = new Date('2026-11-23T10:01:10Z');
    await agent.heartbeat();
    assert.equal(ready()?.lastTransitionTime, '2026-11-23T10:01:00.000Z');
    // Nothing changed: the Lease carried that heartbeat, the status keeps the last one written.
    assert.equal(ready()?.lastHeartbeatTime, '2026-11-23T10:01:00.000Z');
    assert.equal(api.lease?.spec?.renewTime, '2026-11-23T10:01:10.000000Z');
  });

  it('renews the Lease every 10 s and writes an unchanged status only every 5 minutes', async () => {
    const api = fakeApi();
    const clock = new ManualClock('2026-11-23T10:00:00Z');
    const agent = new NodeAgent({
      client: api as unknown as Client,
      nodeName: 'n1',
      nodeIP: '10.0.0.5',
      kubeletPort: 10250,
      labels: {},
      info: async () => info,
      clock,
      log: () => {},
    });
    await agent.register();
    assert.deepEqual(api.writes, { lease: 1, status: 1 });
    assert.deepEqual(api.lease?.metadata.ownerReferences, [{ apiVersion: 'v1', kind: 'Node', name: 'n1', uid: 'uid-n1' }]);
    assert.equal(api.lease?.spec?.holderIdentity, 'n1');
    assert.equal(api.lease?.spec?.leaseDurationSeconds, 40);
    const ac = new AbortController();
    const running = agent.start(ac.signal);
    // 29 heartbeats: 4 minutes 50 seconds, nothing changed.
    for (let i = 0; i < 29; i++) await clock.advance(10_000);
    assert.deepEqual(api.writes, { lease: 30, status: 1 });
    assert.equal(api.lease?.spec?.renewTime, '2026-11-23T10:04:50.000000Z');
    // The 30th: five minutes since the last report.
    await clock.advance(10_000);
    assert.deepEqual(api.writes, { lease: 31, status: 2 });
    // A change (the master marked it Unknown) is written at the next heartbeat.
    api.node = {
      ...api.node,
      status: { ...api.node.status, conditions: api.node.status!.conditions!.map((c) => (c.type === 'Ready' ? { ...c, status: 'Unknown' } : c)) },
    };
    await clock.advance(10_000);
    assert.deepEqual(api.writes, { lease: 32, status: 3 });
    assert.equal(api.node.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'True');
    ac.abort();
    await running;
  });

  it('writes the status at every heartbeat the old way (no Lease)', async () => {
    const api = fakeApi();
    const clock = new ManualClock('2026-11-23T10:00:00Z');
    const agent = new NodeAgent({
      client: api as unknown as Client,
      nodeName: 'n1',
      nodeIP: '10.0.0.5',
      kubeletPort: 10250,
      labels: {},
      info: async () => info,
      clock,
      leases: false,
      log: () => {},
    });
    await agent.register();
    const ac = new AbortController();
    const running = agent.start(ac.signal);
    for (let i = 0; i < 6; i++) await clock.advance(10_000);
    assert.deepEqual(api.writes, { lease: 0, status: 7 });
    ac.abort();
    await running;
  });
});
