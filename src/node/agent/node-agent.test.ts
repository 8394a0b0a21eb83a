// The node agent's heartbeat against a fake API: after missed heartbeats it reads the Node again, so a Ready that the master marked Unknown gets a new transition time.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Node } from '../../core/api/node.js';
import type { Client } from '../../core/client/client.js';
import { NodeAgent } from './node-agent.js';

const info = { runtimeVersion: 'docker://20.10.24', cpuCores: 2, memoryBytes: 4 * 1024 ** 3, kernelVersion: '6.1', osImage: 'Debian', architecture: 'amd64' };

/** Holds one Node; status patches replace the status, as the API's merge patch does for our whole-status bodies. */
function fakeApi() {
  const api = {
    node: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' }, spec: {} } as Node,
    down: false,
    async patch(_def: unknown, _ref: unknown, body: { metadata?: Node['metadata']; status?: Node['status'] }, options: { subresource?: string } = {}) {
      if (options.subresource === 'status') {
        if (api.down) throw new Error('connect ECONNREFUSED');
        api.node = { ...api.node, status: body.status! };
        return api.node;
      }
      api.node = { ...api.node, metadata: { ...api.node.metadata, ...body.metadata } };
      return api.node;
    },
    async get() {
      return api.node;
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
    assert.equal(ready()?.lastHeartbeatTime, '2026-11-23T10:01:10.000Z');
  });
});
