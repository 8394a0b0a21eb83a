// Which of a workload's pods logs reads: kubectl's preference order.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Pod } from '../core/api/pod.js';
import { byLoggingPreference } from './logs-target.js';

function pod(name: string, phase: string, options: { ready?: boolean; node?: string; created?: string } = {}): Pod {
  return {
    metadata: { name, creationTimestamp: options.created ?? '2024-01-01T00:00:00Z' },
    spec: { containers: [], ...(options.node ? { nodeName: options.node } : {}) },
    status: { phase, conditions: [{ type: 'Ready', status: options.ready ? 'True' : 'False' }] },
  } as unknown as Pod;
}

describe('logs pod choice', () => {
  it('prefers scheduled, running, ready, then newest pods', () => {
    const pods = [
      pod('pending', 'Pending', { node: 'n' }),
      pod('unscheduled', 'Pending'),
      pod('running-old', 'Running', { node: 'n', ready: true }),
      pod('running-new', 'Running', { node: 'n', ready: true, created: '2024-02-01T00:00:00Z' }),
      pod('running-unready', 'Running', { node: 'n' }),
    ];
    assert.deepEqual(
      pods.sort(byLoggingPreference).map((p) => p.metadata.name),
      ['running-new', 'running-old', 'running-unready', 'pending', 'unscheduled'],
    );
  });
});
