// When a heartbeat writes the Node status: on change (heartbeat times aside), every 5 minutes, or always the old way.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { NodeStatus } from '../../core/api/node.js';
import { nodeStatusChanged, shouldReportStatus } from './node-heartbeat.js';

const status = (ready: 'True' | 'False', beat: string, extra: Partial<NodeStatus> = {}): NodeStatus => ({
  capacity: { cpu: '2', memory: '1024Ki', pods: '110' },
  conditions: [{ type: 'Ready', status: ready, reason: 'KubeletReady', lastHeartbeatTime: beat, lastTransitionTime: '2030-01-01T00:00:00.000Z' }],
  ...extra,
});

describe('node status reports', () => {
  const t0 = Date.parse('2030-01-01T00:00:00Z');
  const cases: [string, Parameters<typeof shouldReportStatus>[0], boolean][] = [
    ['never written', { stored: undefined, computed: status('True', 'b'), lastReportAt: undefined, now: t0, leases: true }, true],
    ['only the heartbeat time moved', { stored: status('True', 'a'), computed: status('True', 'b'), lastReportAt: t0, now: t0 + 10_000, leases: true }, false],
    ['Ready changed', { stored: status('True', 'a'), computed: status('False', 'b'), lastReportAt: t0, now: t0 + 10_000, leases: true }, true],
    [
      'capacity changed',
      { stored: status('True', 'a'), computed: status('True', 'b', { capacity: { cpu: '4' } }), lastReportAt: t0, now: t0 + 10_000, leases: true },
      true,
    ],
    [
      'five minutes since the last report',
      { stored: status('True', 'a'), computed: status('True', 'b'), lastReportAt: t0, now: t0 + 300_000, leases: true },
      true,
    ],
    ['the old way, unchanged', { stored: status('True', 'a'), computed: status('True', 'b'), lastReportAt: t0, now: t0 + 10_000, leases: false }, true],
  ];
  for (const [name, input, want] of cases) it(name, () => assert.equal(shouldReportStatus(input), want));

  it('ignores fields the kubelet does not compute and the order of keys', () => {
    const stored = { ...status('True', 'a'), images: [] } as NodeStatus;
    const computed = status('True', 'b');
    const reordered = { conditions: computed.conditions, capacity: { pods: '110', memory: '1024Ki', cpu: '2' } } as NodeStatus;
    assert.equal(nodeStatusChanged(stored, computed), false);
    assert.equal(nodeStatusChanged(stored, reordered), false);
  });
});
