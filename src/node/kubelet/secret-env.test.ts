// withSecretEnv: a container's secretKeyRef env read from the Secret when it starts, not carried in the pod.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Pod } from '../../core/api/pod.js';
import { ContainerStartError } from '../../runtime/provider.js';
import { type PodApi, withSecretEnv } from './pod-sync.js';

const pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', namespace: 'ns', uid: 'u1' },
  spec: {
    containers: [
      {
        name: 'c',
        image: 'busybox',
        env: [
          { name: 'PLAIN', value: 'x' },
          { name: 'TOKEN', valueFrom: { secretKeyRef: { name: 's', key: 'token' } } },
          { name: 'MAYBE', valueFrom: { secretKeyRef: { name: 's', key: 'absent', optional: true } } },
        ],
      },
    ],
  },
} as unknown as Pod;

function api(secrets: Record<string, Record<string, string>>): PodApi & { reads: string[] } {
  const reads: string[] = [];
  return {
    reads,
    updateStatus: async () => {},
    deletePod: async () => {},
    readSecret: async (namespace, name) => {
      reads.push(`${namespace}/${name}`);
      return secrets[`${namespace}/${name}`];
    },
  };
}

test('secretKeyRef env entries become values at start, optional missing keys are left out', async () => {
  const a = api({ 'ns/s': { token: Buffer.from('t0k3n').toString('base64') } });
  const started = await withSecretEnv(pod, 'c', a);
  assert.deepEqual(started.spec.containers[0]!.env, [
    { name: 'PLAIN', value: 'x' },
    { name: 'TOKEN', value: 't0k3n' },
  ]);
  assert.deepEqual(a.reads, ['ns/s'], 'one read per Secret');
  assert.ok(pod.spec.containers[0]!.env![1]!.valueFrom, 'the pod itself is not changed');
});

test('a missing Secret or key fails the start with CreateContainerConfigError', async () => {
  await assert.rejects(
    withSecretEnv(pod, 'c', api({})),
    (err: unknown) => err instanceof ContainerStartError && err.reason === 'CreateContainerConfigError' && /secret "s" not found/.test(err.message),
  );
  await assert.rejects(withSecretEnv(pod, 'c', api({ 'ns/s': {} })), /couldn't find key token in Secret ns\/s/);
});
