// Service account admission of pods and the controller's plan, as tables.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../../core/api/meta.js';
import type { Namespace } from '../../core/api/namespace.js';
import type { Pod } from '../../core/api/pod.js';
import { ForbiddenError } from '../../core/errors.js';
import { admitPodServiceAccount, SERVICE_ACCOUNT_MOUNT_PATH } from './admission.js';
import { planServiceAccounts } from './controller.js';

function pod(spec: Partial<Pod['spec']> = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: 'team' },
    spec: { containers: [{ name: 'app', image: 'busybox' }], ...spec },
  } as Pod;
}

const accounts = (list: Record<string, { automountServiceAccountToken?: boolean }>) => ({
  serviceAccount: async (_ns: string, name: string): Promise<KubeObject | undefined> =>
    list[name] ? ({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace: 'team' }, ...list[name] } as KubeObject) : undefined,
  random: () => 0,
});

describe('admitPodServiceAccount', () => {
  it('runs a pod naming none as default, with the kube-api-access volume mounted read-only in every container', async () => {
    const admitted = await admitPodServiceAccount(
      pod({ initContainers: [{ name: 'init', image: 'busybox' }] } as Partial<Pod['spec']>),
      accounts({ default: {} }),
    );
    assert.equal(admitted.spec.serviceAccountName, 'default');
    assert.equal(admitted.spec.serviceAccount, 'default');
    const volume = admitted.spec.volumes?.[0] as unknown as { name: string; projected: { sources: Record<string, unknown>[] } };
    assert.equal(volume.name, 'kube-api-access-bbbbb');
    assert.deepEqual(volume.projected.sources[0], { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } });
    assert.deepEqual(volume.projected.sources[1], { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } });
    assert.deepEqual(volume.projected.sources[2], {
      downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] },
    });
    for (const c of [...admitted.spec.containers, ...(admitted.spec.initContainers ?? [])]) {
      assert.deepEqual(c.volumeMounts, [{ name: 'kube-api-access-bbbbb', readOnly: true, mountPath: SERVICE_ACCOUNT_MOUNT_PATH }]);
    }
  });

  it("refuses a pod naming a missing account in Kubernetes' words", async () => {
    await assert.rejects(
      admitPodServiceAccount(pod({ serviceAccountName: 'robot' }), accounts({ default: {} })),
      (err: Error) =>
        err instanceof ForbiddenError &&
        err.message === 'pods "web" is forbidden: error looking up service account team/robot: serviceaccount "robot" not found',
    );
  });

  const cases: [string, Partial<Pod['spec']>, Record<string, { automountServiceAccountToken?: boolean }>, boolean][] = [
    ['automount off on the account', { serviceAccountName: 'robot' }, { robot: { automountServiceAccountToken: false } }, false],
    ['automount off on the pod', { automountServiceAccountToken: false }, { default: {} }, false],
    [
      'the pod overrides the account',
      { serviceAccountName: 'robot', automountServiceAccountToken: true },
      { robot: { automountServiceAccountToken: false } },
      true,
    ],
    ['a default not made yet', {}, {}, true],
  ];
  for (const [name, spec, list, mounted] of cases) {
    it(`mounts the token: ${name} -> ${mounted}`, async () => {
      const admitted = await admitPodServiceAccount(pod(spec), accounts(list));
      assert.equal((admitted.spec.volumes ?? []).length, mounted ? 1 : 0);
    });
  }

  it('keeps what a container already mounts at the path', async () => {
    const own = { name: 'mine', mountPath: SERVICE_ACCOUNT_MOUNT_PATH };
    const admitted = await admitPodServiceAccount(
      pod({ volumes: [{ name: 'mine', emptyDir: {} }], containers: [{ name: 'app', image: 'busybox', volumeMounts: [own] }] } as Partial<Pod['spec']>),
      accounts({ default: {} }),
    );
    assert.deepEqual(admitted.spec.containers[0]!.volumeMounts, [own]);
  });
});

describe('planServiceAccounts', () => {
  const ns = (extra: Partial<Namespace['metadata']> = {}) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team', ...extra } }) as Namespace;
  it('makes default where it is missing, and nothing in a namespace gone or going', () => {
    assert.deepEqual(planServiceAccounts(ns(), new Set()), ['default']);
    assert.deepEqual(planServiceAccounts(ns(), new Set(['default'])), []);
    assert.deepEqual(planServiceAccounts(ns({ deletionTimestamp: '2026-01-01T00:00:00Z' }), new Set()), []);
    assert.deepEqual(planServiceAccounts(undefined, new Set()), []);
  });
});
