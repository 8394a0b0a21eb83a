// The binder's decisions as a table of volumes x claims, and the local-path provisioner's naming.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PersistentVolumeClaim } from '../../core/api/persistent-volume-claim.js';
import type { PersistentVolume } from '../../core/api/persistent-volume.js';
import type { Pod } from '../../core/api/pod.js';
import type { StorageClass } from '../../core/api/storage-class.js';
import { type BinderAction, MESSAGES, planBinder } from './binder-plan.js';
import { localPathDirectory, localPathVolume, provisionedVolumeName } from './local-path.js';

const pv = (name: string, size: string, extra: Partial<PersistentVolume['spec']> = {}, labels?: Record<string, string>): PersistentVolume =>
  ({
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: {
      name,
      uid: `uid-${name}`,
      creationTimestamp: '2026-01-01T00:00:00Z',
      ...(labels ? { labels } : {}),
      finalizers: ['kubernetes.io/pv-protection'],
    },
    spec: {
      capacity: { storage: size },
      accessModes: ['ReadWriteOnce'],
      persistentVolumeReclaimPolicy: 'Retain',
      hostPath: { path: `/data/${name}` },
      ...extra,
    },
    status: { phase: 'Available' },
  }) as PersistentVolume;

const pvc = (name: string, size: string, extra: Partial<PersistentVolumeClaim['spec']> = {}, at = '2026-01-02T00:00:00Z'): PersistentVolumeClaim =>
  ({
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace: 'ns', uid: `uid-${name}`, creationTimestamp: at, finalizers: ['kubernetes.io/pvc-protection'] },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: size } }, storageClassName: '', ...extra },
    status: { phase: 'Pending' },
  }) as PersistentVolumeClaim;

const sc = (name: string, provisioner: string, mode: 'Immediate' | 'WaitForFirstConsumer', isDefault = false): StorageClass =>
  ({
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: {
      name,
      creationTimestamp: '2026-01-01T00:00:00Z',
      ...(isDefault ? { annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } } : {}),
    },
    provisioner,
    reclaimPolicy: 'Delete',
    volumeBindingMode: mode,
  }) as StorageClass;

const podOn = (node: string | undefined, claim: string): Pod =>
  ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `p-${claim}`, namespace: 'ns' },
    spec: { ...(node ? { nodeName: node } : {}), containers: [], volumes: [{ name: 'v', persistentVolumeClaim: { claimName: claim } }] },
  }) as unknown as Pod;

/** What the plan says about binding, in a compact form: claim -> volume, events as claim:reason. */
function summary(actions: BinderAction[]): string[] {
  return actions.flatMap((a) => {
    if (a.type === 'bindClaim') return [`${a.claim.metadata.name}->${a.volume.metadata.name}`];
    if (a.type === 'event') return [`${a.object.metadata.name}:${a.reason}`];
    if (a.type === 'provision') return [`provision ${a.claim.metadata.name} on ${a.node}`];
    if (a.type === 'deleteVolume') return [`delete ${a.volume.metadata.name}`];
    if (a.type === 'volumePhase') return [`${a.volume.metadata.name}=${a.phase}`];
    if (a.type === 'setClass') return [`${a.claim.metadata.name} class ${a.className}`];
    if (a.type === 'claimLost') return [`${a.claim.metadata.name} lost`];
    return [];
  });
}

const input = (parts: Partial<Parameters<typeof planBinder>[0]>) => ({ volumes: [], claims: [], classes: [], pods: [], nodes: new Map(), ...parts });

describe('planBinder', () => {
  const cases: { name: string; in: Partial<Parameters<typeof planBinder>[0]>; want: string[] }[] = [
    {
      name: 'smallest volume that fits wins',
      in: { volumes: [pv('big', '10Gi'), pv('small', '1Gi'), pv('tiny', '100Mi')], claims: [pvc('c', '500Mi')] },
      want: ['c->small'],
    },
    {
      name: 'access modes must all be offered',
      in: {
        volumes: [pv('rwo', '1Gi'), pv('rwx', '1Gi', { accessModes: ['ReadWriteOnce', 'ReadWriteMany'] })],
        claims: [pvc('c', '1Gi', { accessModes: ['ReadWriteMany'] })],
      },
      want: ['c->rwx'],
    },
    {
      name: 'class must be equal ("" only takes volumes without one)',
      in: {
        volumes: [pv('fast', '1Gi', { storageClassName: 'fast' }), pv('none', '5Gi')],
        claims: [pvc('a', '1Gi', { storageClassName: 'fast' }), pvc('b', '1Gi')],
      },
      want: ['a->fast', 'b->none'],
    },
    {
      name: 'selector filters by labels',
      in: {
        volumes: [pv('x', '1Gi', {}, { tier: 'x' }), pv('y', '2Gi', {}, { tier: 'y' })],
        claims: [pvc('c', '1Gi', { selector: { matchLabels: { tier: 'y' } } })],
      },
      want: ['c->y'],
    },
    { name: 'no volume and no class', in: { volumes: [pv('small', '1Gi')], claims: [pvc('c', '2Gi')] }, want: ['c:FailedBinding'] },
    {
      name: 'one volume, two claims: the older claim gets it',
      in: { volumes: [pv('only', '1Gi')], claims: [pvc('young', '1Gi', {}, '2026-01-03T00:00:00Z'), pvc('old', '1Gi', {}, '2026-01-02T00:00:00Z')] },
      want: ['old->only', 'young:FailedBinding'],
    },
    {
      name: 'volumeName pre-binding takes that volume even if a smaller one fits',
      in: { volumes: [pv('small', '1Gi'), pv('named', '5Gi')], claims: [pvc('c', '1Gi', { volumeName: 'named' })] },
      want: ['c->named'],
    },
    {
      name: 'a volume bound elsewhere is refused',
      in: {
        volumes: [pv('v', '1Gi', { claimRef: { namespace: 'ns', name: 'other', uid: 'uid-other' } })],
        claims: [pvc('c', '1Gi', { volumeName: 'v' }), pvc('other', '1Gi', { volumeName: 'v' })],
      },
      want: ['c:FailedBinding', 'other->v', 'v=Bound'],
    },
    {
      name: 'WaitForFirstConsumer waits for a scheduled pod',
      in: {
        classes: [sc('local', 'minik8s.io/local-path', 'WaitForFirstConsumer')],
        claims: [pvc('c', '1Gi', { storageClassName: 'local' })],
        pods: [podOn(undefined, 'c')],
      },
      want: ['c:WaitForFirstConsumer'],
    },
    {
      name: "WaitForFirstConsumer provisions on the pod's node",
      in: {
        classes: [sc('local', 'minik8s.io/local-path', 'WaitForFirstConsumer')],
        claims: [pvc('c', '1Gi', { storageClassName: 'local' })],
        pods: [podOn('n2', 'c')],
      },
      want: ['provision c on n2'],
    },
    {
      name: "WaitForFirstConsumer takes a static volume on the pod's node",
      in: {
        classes: [sc('disk', 'kubernetes.io/no-provisioner', 'WaitForFirstConsumer')],
        volumes: [
          pv('on-n1', '1Gi', {
            storageClassName: 'disk',
            nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['n1'] }] }] } },
          }),
          pv('on-n2', '1Gi', {
            storageClassName: 'disk',
            nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['n2'] }] }] } },
          }),
        ],
        claims: [pvc('c', '1Gi', { storageClassName: 'disk' })],
        pods: [podOn('n2', 'c')],
      },
      want: ['c->on-n2'],
    },
    {
      name: 'an unknown class',
      in: { claims: [pvc('c', '1Gi', { storageClassName: 'gold' })] },
      want: ['c:ProvisioningFailed'],
    },
    {
      name: 'an external provisioner is waited for',
      in: { classes: [sc('ebs', 'ebs.csi.aws.com', 'Immediate')], claims: [pvc('c', '1Gi', { storageClassName: 'ebs' })] },
      want: ['c:ExternalProvisioning'],
    },
    {
      name: 'a claim without a class gets the default one',
      in: { classes: [sc('local', 'minik8s.io/local-path', 'WaitForFirstConsumer', true)], claims: [pvc('c', '1Gi', { storageClassName: undefined })] },
      want: ['c class local'],
    },
    {
      name: 'Retain: the volume of a deleted claim is Released and kept',
      in: { volumes: [{ ...pv('v', '1Gi', { claimRef: { namespace: 'ns', name: 'gone', uid: 'uid-gone' } }), status: { phase: 'Bound' } }] },
      want: ['v=Released'],
    },
    {
      name: 'Delete: the volume of a deleted claim is Released and deleted',
      in: {
        volumes: [
          {
            ...pv('v', '1Gi', { persistentVolumeReclaimPolicy: 'Delete', claimRef: { namespace: 'ns', name: 'gone', uid: 'uid-gone' } }),
            status: { phase: 'Bound' },
          },
        ],
      },
      want: ['v=Released', 'delete v'],
    },
    {
      name: 'a claim whose volume vanished is Lost',
      in: { claims: [{ ...pvc('c', '1Gi', { volumeName: 'v' }), status: { phase: 'Bound' } }] },
      want: ['c lost', 'c:ClaimLost'],
    },
    {
      name: 'a claim replaced under the same name does not keep the old volume',
      in: {
        volumes: [{ ...pv('v', '1Gi', { claimRef: { namespace: 'ns', name: 'c', uid: 'uid-old' } }), status: { phase: 'Bound' } }],
        claims: [pvc('c', '1Gi')],
      },
      want: ['c:FailedBinding', 'v=Released'],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const got = summary(planBinder(input(c.in)));
      assert.deepEqual(got, c.want);
    });
  }

  it('FailedBinding says there is no class, in Kubernetes words', () => {
    const ev = planBinder(input({ claims: [pvc('c', '1Gi')] })).find((a) => a.type === 'event');
    assert.equal(ev?.type === 'event' && ev.message, MESSAGES.noClass);
  });

  it('protection finalizers: added to new objects, kept while in use, dropped after', () => {
    const fresh = { ...pvc('c', '1Gi'), metadata: { ...pvc('c', '1Gi').metadata, finalizers: [] } };
    const add = planBinder(input({ claims: [fresh] })).find((a) => a.type === 'finalizers');
    assert.deepEqual(add?.type === 'finalizers' && add.finalizers, ['kubernetes.io/pvc-protection']);
    const deleting = { ...pvc('c', '1Gi'), metadata: { ...pvc('c', '1Gi').metadata, deletionTimestamp: '2026-01-05T00:00:00Z' } };
    assert.equal(
      planBinder(input({ claims: [deleting], pods: [podOn('n1', 'c')] })).some((a) => a.type === 'finalizers'),
      false,
      'a claim a pod uses keeps its finalizer',
    );
    const drop = planBinder(input({ claims: [deleting] })).find((a) => a.type === 'finalizers');
    assert.deepEqual(drop?.type === 'finalizers' && drop.finalizers, []);
    const boundVolume = {
      ...pv('v', '1Gi', { claimRef: { namespace: 'ns', name: 'c', uid: 'uid-c' } }),
      metadata: { ...pv('v', '1Gi').metadata, deletionTimestamp: 'x' },
    };
    const claim = { ...pvc('c', '1Gi', { volumeName: 'v' }), status: { phase: 'Bound' as const } };
    assert.equal(
      planBinder(input({ volumes: [boundVolume], claims: [claim] })).some((a) => a.type === 'finalizers' && a.object === boundVolume),
      false,
      'a bound volume keeps its finalizer',
    );
  });
});

describe('local-path provisioner', () => {
  it('names the volume after the claim uid and its directory after volume, namespace and claim', () => {
    const claim = pvc('data', '1Gi', { storageClassName: 'local' });
    assert.equal(provisionedVolumeName(claim), 'pvc-uid-data');
    assert.equal(localPathDirectory('/srv/vols', 'pvc-uid-data', claim), '/srv/vols/pvc-uid-data_ns_data');
  });

  it("makes a volume pinned to the node, pre-bound to the claim, with the class's reclaim policy and base path", () => {
    const cls = { ...sc('local', 'minik8s.io/local-path', 'WaitForFirstConsumer'), parameters: { basePath: '/srv/vols/' } };
    const v = localPathVolume(pvc('data', '2Gi', { storageClassName: 'local' }), cls, 'n3');
    assert.equal(v.spec.local?.path, '/srv/vols/pvc-uid-data_ns_data');
    assert.equal(v.spec.persistentVolumeReclaimPolicy, 'Delete');
    assert.equal(v.spec.capacity.storage, '2Gi');
    assert.deepEqual(v.spec.claimRef, { apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace: 'ns', name: 'data', uid: 'uid-data' });
    assert.deepEqual(v.spec.nodeAffinity?.required?.nodeSelectorTerms[0]?.matchExpressions?.[0]?.values, ['n3']);
  });

  it('ignores a relative or climbing base path', () => {
    const cls = { ...sc('local', 'minik8s.io/local-path', 'WaitForFirstConsumer'), parameters: { basePath: '../etc' } };
    assert.equal(localPathVolume(pvc('d', '1Gi'), cls, 'n').spec.local?.path.startsWith('/var/lib/minik8s/local-path/'), true);
  });
});
