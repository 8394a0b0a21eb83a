// run's pod: kubectl run's labels, container name, command or args, and restart policy.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runPod } from './run.js';

describe('run', () => {
  it('builds the pod kubectl run builds', () => {
    assert.deepEqual(runPod({ name: 'x', image: 'busybox', args: ['sleep', '1'], command: true, restart: 'Never', env: ['A=1'], port: '80' }, 'ns'), {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'x', namespace: 'ns', labels: { run: 'x' } },
      spec: {
        containers: [{ name: 'x', image: 'busybox', command: ['sleep', '1'], env: [{ name: 'A', value: '1' }], ports: [{ containerPort: 80 }] }],
        restartPolicy: 'Never',
      },
    });
    const pod = runPod({ name: 'y', image: 'busybox', args: ['a'], env: [], labels: 'app=y,tier=web' }, 'default') as {
      metadata: unknown;
      spec: { containers: unknown[]; restartPolicy: string };
    };
    assert.deepEqual(pod.spec.containers, [{ name: 'y', image: 'busybox', args: ['a'] }]);
    assert.equal(pod.spec.restartPolicy, 'Always');
    assert.deepEqual((pod.metadata as { labels: unknown }).labels, { app: 'y', tier: 'web' });
  });

  it('says what is missing or wrong', () => {
    assert.throws(() => runPod({ name: 'x', args: [], env: [] }, 'd'), /--image is required/);
    assert.throws(() => runPod({ image: 'i', args: [], env: [] }, 'd'), /NAME is required/);
    assert.throws(() => runPod({ name: 'x', image: 'i', restart: 'Sometimes', args: [], env: [] }, 'd'), /invalid restart policy: Sometimes/);
  });
});
