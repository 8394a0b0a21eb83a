// set image/env: container updates, kubectl's errors, and --list's format.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { deploymentKind } from '../core/api/deployment.js';
import { podKind } from '../core/api/pod.js';
import { serviceKind } from '../core/api/service.js';
import { listEnv, podSpecPath, updateEnv, updateImages } from './set.js';

describe('set image and env', () => {
  it('finds the pod spec of pods and workloads, and refuses other kinds', () => {
    assert.deepEqual(podSpecPath(podKind), ['spec']);
    assert.deepEqual(podSpecPath(deploymentKind), ['spec', 'template', 'spec']);
    assert.throws(() => podSpecPath(serviceKind), /does not have a pod template/);
  });

  it('sets images by container name or *, and names an unknown container', () => {
    const spec = {
      containers: [
        { name: 'a', image: 'x:1' },
        { name: 'b', image: 'y:1' },
      ],
    };
    assert.deepEqual(updateImages(spec, [['b', 'y:2']]), {
      containers: [
        { name: 'a', image: 'x:1' },
        { name: 'b', image: 'y:2' },
      ],
      changed: true,
    });
    assert.equal(
      updateImages(spec, [['*', 'z']]).containers.every((c) => c.image === 'z'),
      true,
    );
    assert.equal(updateImages(spec, [['a', 'x:1']]).changed, false);
    assert.throws(() => updateImages(spec, [['c', 'z']]), { message: 'unable to find container named "c"' });
  });

  it('sets, replaces and removes variables in order', () => {
    const { env, changed } = updateEnv(
      [
        { name: 'A', value: '1' },
        { name: 'B', value: '2' },
      ],
      [
        ['B', '3'],
        ['C', '4'],
      ],
      ['A'],
    );
    assert.equal(changed, true);
    assert.deepEqual(env, [
      { name: 'B', value: '3' },
      { name: 'C', value: '4' },
    ]);
    assert.equal(updateEnv([{ name: 'A', value: '1' }], [['A', '1']], ['Z']).changed, false);
  });

  it('lists as kubectl set env --list does', () => {
    assert.equal(
      listEnv('Deployment', 'web', {
        name: 'nginx',
        env: [
          { name: 'A', value: '1' },
          { name: 'P', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
        ],
      }),
      '# Deployment web, container nginx\nA=1\n# P from field path metadata.name\n',
    );
  });
});
