// Unit tests for the Node status and registration patch the kubelet posts.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { nodeMetaPatch, nodeStatus, type NodeStatusInput } from './node-status.js';

const input: NodeStatusInput = {
  info: {
    runtimeVersion: 'docker://20.10.24',
    cpuCores: 2,
    memoryBytes: 8 * 1024 ** 3,
    kernelVersion: '6.1.0',
    osImage: 'Debian GNU/Linux 12 (bookworm)',
    architecture: 'amd64',
  },
  nodeIP: '10.0.0.5',
  hostname: 'n1',
  kubeletPort: 10250,
  now: new Date('2026-11-23T10:00:00Z'),
};

describe('nodeStatus', () => {
  it('reports capacity, allocatable less the reserve, addresses, endpoints and node info', () => {
    const s = nodeStatus(input);
    assert.deepEqual(s.capacity, { cpu: '2', memory: '8388608Ki', pods: '110' });
    // 5% of 8 GiB = 409.6 MiB kept back.
    assert.deepEqual(s.allocatable, { cpu: '2', memory: `${Math.floor((8 * 1024 ** 3 - Math.floor(8 * 1024 ** 3 * 0.05)) / 1024)}Ki`, pods: '110' });
    assert.deepEqual(s.addresses, [
      { type: 'InternalIP', address: '10.0.0.5' },
      { type: 'Hostname', address: 'n1' },
    ]);
    assert.deepEqual(s.daemonEndpoints, { kubeletEndpoint: { Port: 10250 } });
    assert.equal(s.nodeInfo?.containerRuntimeVersion, 'docker://20.10.24');
    assert.equal(s.nodeInfo?.architecture, 'amd64');
    assert.equal(s.nodeInfo?.operatingSystem, 'linux');
  });

  it('is not Ready while the container runtime is down, and Ready again (with a new transition time) once it answers', () => {
    const up = nodeStatus(input);
    const down = nodeStatus({ ...input, now: new Date('2026-11-23T10:00:10Z'), previous: up, runtimeError: 'connect ENOENT /var/run/docker.sock' });
    const notReady = down.conditions?.find((c) => c.type === 'Ready');
    assert.equal(notReady?.status, 'False');
    assert.equal(notReady?.reason, 'KubeletNotReady');
    assert.equal(notReady?.message, 'container runtime is down: connect ENOENT /var/run/docker.sock');
    assert.equal(notReady?.lastTransitionTime, '2026-11-23T10:00:10.000Z');
    assert.deepEqual(down.capacity, up.capacity, 'the last known capacity stays');
    const back = nodeStatus({ ...input, now: new Date('2026-11-23T10:00:20Z'), previous: down });
    const ready = back.conditions?.find((c) => c.type === 'Ready');
    assert.equal(ready?.status, 'True');
    assert.equal(ready?.lastTransitionTime, '2026-11-23T10:00:20.000Z');
  });

  it('caps the memory reserve at 1 GiB', () => {
    const s = nodeStatus({ ...input, info: { ...input.info, memoryBytes: 64 * 1024 ** 3 } });
    assert.equal(s.allocatable?.memory, `${63 * 1024 * 1024}Ki`);
  });

  it('is Ready with no pressure, and keeps lastTransitionTime while a condition does not change', () => {
    const first = nodeStatus(input);
    const ready = first.conditions?.find((c) => c.type === 'Ready');
    assert.equal(ready?.status, 'True');
    assert.equal(ready?.reason, 'KubeletReady');
    assert.deepEqual(
      first.conditions?.filter((c) => c.type !== 'Ready').map((c) => c.status),
      ['False', 'False', 'False'],
    );
    const later = nodeStatus({ ...input, now: new Date('2026-11-23T10:00:10Z'), previous: first });
    const again = later.conditions?.find((c) => c.type === 'Ready');
    assert.equal(again?.lastHeartbeatTime, '2026-11-23T10:00:10.000Z');
    assert.equal(again?.lastTransitionTime, '2026-11-23T10:00:00.000Z');
  });

  it('starts a new transition when the previous Ready was not True (a node back from NotReady)', () => {
    const previous = { conditions: [{ type: 'Ready', status: 'Unknown' as const, lastTransitionTime: '2026-11-23T09:00:00.000Z' }] };
    const s = nodeStatus({ ...input, previous });
    assert.equal(s.conditions?.find((c) => c.type === 'Ready')?.lastTransitionTime, '2026-11-23T10:00:00.000Z');
  });
});

describe('nodeMetaPatch', () => {
  it('sets the well-known labels and lets --labels override them, leaving out labels node restriction refuses', () => {
    const p = nodeMetaPatch({
      nodeName: 'n1',
      architecture: 'amd64',
      labels: { disk: 'ssd', 'kubernetes.io/os': 'linux', 'node-role.kubernetes.io/worker': '' },
    });
    assert.deepEqual(p, {
      metadata: { labels: { 'kubernetes.io/hostname': 'n1', 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64', disk: 'ssd' } },
    });
  });
});
