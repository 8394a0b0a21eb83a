// Unit tests for describe node: requests and limits per pod, the node's tables as kubectl lays them out.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { nodeKind, type Node } from '../core/api/node.js';
import type { Pod } from '../core/api/pod.js';
import { renderObject } from './describe.js';
import { podResources } from './describe-node.js';

const now = new Date('2026-11-23T12:00:00Z');

const pod = (name: string, resources: Record<string, Record<string, string>>[], phase = 'Running') =>
  ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', creationTimestamp: '2026-11-23T11:55:00Z' },
    spec: { nodeName: 'n1', containers: resources.map((r, i) => ({ name: `c${i}`, image: 'busybox', resources: r })) },
    status: { phase },
  }) as unknown as Pod;

const node = {
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name: 'n1', labels: { 'node-role.kubernetes.io/control-plane': '' }, creationTimestamp: '2026-11-23T10:00:00Z' },
  spec: { podCIDR: '10.244.1.0/24', podCIDRs: ['10.244.1.0/24'], taints: [{ key: 'gpu', value: 'yes', effect: 'NoSchedule' }] },
  status: {
    capacity: { cpu: '2', memory: '4Gi', pods: '110' },
    allocatable: { cpu: '2', memory: '4Gi', pods: '110' },
    conditions: [
      {
        type: 'Ready',
        status: 'True',
        reason: 'KubeletReady',
        message: 'kubelet is posting ready status',
        lastHeartbeatTime: '2026-11-23T11:59:50Z',
        lastTransitionTime: '2026-11-23T10:00:00Z',
      },
    ],
    addresses: [
      { type: 'InternalIP', address: '10.0.0.5' },
      { type: 'Hostname', address: 'n1' },
    ],
    nodeInfo: { kernelVersion: '6.1.0', containerRuntimeVersion: 'docker://20.10.24' },
  },
} as unknown as Node;

describe('podResources', () => {
  it('sums containers, and takes a limit as the request where none is given', () => {
    assert.deepEqual(
      podResources(pod('p', [{ requests: { cpu: '100m', memory: '32Mi' }, limits: { cpu: '250m', memory: '64Mi' } }, { limits: { cpu: '1', memory: '1Gi' } }])),
      {
        cpuRequests: 1100,
        cpuLimits: 1250,
        memoryRequests: 32 * 2 ** 20 + 2 ** 30,
        memoryLimits: 64 * 2 ** 20 + 2 ** 30,
      },
    );
    assert.deepEqual(podResources(pod('p', [{}])), { cpuRequests: 0, cpuLimits: 0, memoryRequests: 0, memoryLimits: 0 });
  });
});

describe('describe node', () => {
  it('shows roles, taints, conditions, addresses, capacity, system info, pods and allocated resources', () => {
    const pods = [
      pod('web', [{ requests: { cpu: '100m', memory: '32Mi' }, limits: { cpu: '250m', memory: '64Mi' } }]),
      pod('done', [{ requests: { cpu: '1' } }], 'Succeeded'),
    ];
    const text = renderObject(nodeKind, node as never, { pods, now });
    assert.match(text, /^Name:\s+n1\n/);
    assert.match(text, /\nRoles:\s+control-plane\n/);
    assert.match(text, /\nTaints:\s+gpu=yes:NoSchedule\n/);
    assert.match(
      text,
      /\n {2}Ready\s+True\s+Mon, 23 Nov 2026 11:59:50 \+0000\s+Mon, 23 Nov 2026 10:00:00 \+0000\s+KubeletReady\s+kubelet is posting ready status\n/,
    );
    assert.match(text, /\n {2}InternalIP:\s+10\.0\.0\.5\n/);
    assert.match(text, /\nCapacity:\n {2}cpu:\s+2\n {2}memory:\s+4Gi\n {2}pods:\s+110\n/);
    assert.match(text, /\n {2}Container Runtime Version:\s+docker:\/\/20\.10\.24\n/);
    assert.match(text, /\nPodCIDR:\s+10\.244\.1\.0\/24\n/);
    // The finished pod is left out of both the list and the totals.
    assert.match(text, /\nNon-terminated Pods:\s+\(1 in total\)\n/);
    assert.match(text, /\n {2}default\s+web\s+100m \(5%\)\s+250m \(12%\)\s+32Mi \(0%\)\s+64Mi \(1%\)\s+5m\n/);
    assert.match(text, /\n {2}cpu\s+100m \(5%\)\s+250m \(12%\)\n {2}memory\s+32Mi \(0%\)\s+64Mi \(1%\)\n/);
    assert.doesNotMatch(text, /\bdone\b/);
  });
});
