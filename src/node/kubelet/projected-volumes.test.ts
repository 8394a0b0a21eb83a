// volumeFiles: which files configMap, secret, downwardAPI and projected volumes hold (items, modes, optional, Kubernetes' errors), as a table.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Pod, Volume } from '../../core/api/pod.js';
import { type ProjectionObjects, volumeFiles, VolumeSetUpError } from './projected-volumes.js';

const pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', namespace: 'ns', uid: 'u1', labels: { b: '2', a: 'x"y' }, annotations: { note: 'hi' } },
  spec: { containers: [{ name: 'app', image: 'busybox', resources: { limits: { memory: '64Mi', cpu: '250m' } } }] },
} as unknown as Pod;

const objects: ProjectionObjects = {
  configMap: (name) => (name === 'cfg' ? { 'app.conf': Buffer.from('mode=fast\n'), other: Buffer.from('o') } : undefined),
  secret: (name) => (name === 's' ? { password: Buffer.from('hunter2') } : undefined),
};

const files = (vol: object) => volumeFiles({ name: 'v', ...vol } as Volume, pod, objects)?.map((f) => [f.path, f.content.toString(), f.mode.toString(8)]);

describe('volumeFiles', () => {
  const cases: [string, object, [string, string, string][]][] = [
    [
      'a configMap volume: every key at 0644',
      { configMap: { name: 'cfg' } },
      [
        ['app.conf', 'mode=fast\n', '644'],
        ['other', 'o', '644'],
      ],
    ],
    [
      'items pick keys and paths, with their own mode over defaultMode',
      { configMap: { name: 'cfg', defaultMode: 0o600, items: [{ key: 'app.conf', path: 'conf/app.conf', mode: 0o400 }] } },
      [['conf/app.conf', 'mode=fast\n', '400']],
    ],
    ['a secret volume with defaultMode', { secret: { secretName: 's', defaultMode: 0o400 } }, [['password', 'hunter2', '400']]],
    ['an optional missing ConfigMap gives an empty volume', { configMap: { name: 'gone', optional: true } }, []],
    ['an optional missing key is left out', { configMap: { name: 'cfg', optional: true, items: [{ key: 'none', path: 'n' }] } }, []],
    [
      'downwardAPI: names, labels as k="v" lines, one label, resources over a divisor',
      {
        downwardAPI: {
          items: [
            { path: 'name', fieldRef: { fieldPath: 'metadata.name' } },
            { path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } },
            { path: 'a', fieldRef: { fieldPath: "metadata.labels['a']" } },
            { path: 'mem', resourceFieldRef: { containerName: 'app', resource: 'limits.memory', divisor: '1Mi' } },
            { path: 'cpu', resourceFieldRef: { containerName: 'app', resource: 'limits.cpu', divisor: '1m' }, mode: 0o444 },
          ],
        },
      },
      [
        ['a', 'x"y', '644'],
        ['cpu', '250', '444'],
        ['labels', 'a="x\\"y"\nb="2"', '644'],
        ['mem', '64', '644'],
        ['name', 'p', '644'],
      ],
    ],
    [
      'projected: configMap, secret and downwardAPI sources in one dir, defaultMode for all',
      {
        projected: {
          defaultMode: 0o440,
          sources: [
            { configMap: { name: 'cfg', items: [{ key: 'other', path: 'other' }] } },
            { secret: { name: 's' } },
            { downwardAPI: { items: [{ path: 'ns', fieldRef: { fieldPath: 'metadata.namespace' } }] } },
            { serviceAccountToken: { path: 'token' } },
          ],
        },
      },
      [
        ['ns', 'ns', '440'],
        ['other', 'o', '440'],
        ['password', 'hunter2', '440'],
      ],
    ],
  ];
  for (const [what, vol, want] of cases) it(what, () => assert.deepEqual(files(vol), want));

  it('leaves other volume kinds alone', () => assert.equal(files({ emptyDir: {} }), undefined));

  const failures: [string, object, string][] = [
    ['a missing ConfigMap', { configMap: { name: 'gone' } }, 'configmap "gone" not found'],
    ['a missing Secret', { secret: { secretName: 'gone' } }, 'secret "gone" not found'],
    ['a missing item key', { configMap: { name: 'cfg', items: [{ key: 'none', path: 'n' }] } }, 'configmap references non-existent config key: none'],
    ['a missing secret item key', { secret: { secretName: 's', items: [{ key: 'none', path: 'n' }] } }, 'secret references non-existent secret key: none'],
    ['a missing projected ConfigMap', { projected: { sources: [{ configMap: { name: 'gone' } }] } }, 'configmap "gone" not found'],
  ];
  for (const [what, vol, message] of failures) {
    it(`refuses ${what}`, () =>
      assert.throws(
        () => files(vol),
        (err: unknown) => err instanceof VolumeSetUpError && err.message === message,
      ));
  }
});
