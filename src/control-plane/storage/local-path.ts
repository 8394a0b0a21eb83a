// The built-in local-path provisioner: the PersistentVolume it makes for a claim, a directory of its own on the node the claim's first pod was scheduled to.
import { posix } from 'node:path';
import type { PersistentVolumeClaim } from '../../core/api/persistent-volume-claim.js';
import { type PersistentVolume, PROVISIONED_BY_ANNOTATION } from '../../core/api/persistent-volume.js';
import { LOCAL_PATH_PROVISIONER, type StorageClass } from '../../core/api/storage-class.js';

/** Where volumes go on the node when the class does not say (its `basePath` parameter). */
export const DEFAULT_LOCAL_PATH_BASE = '/var/lib/minik8s/local-path';

/** Kubernetes' name for a provisioned volume: `pvc-` and the claim's uid, unique and stable across retries. */
export function provisionedVolumeName(claim: PersistentVolumeClaim): string {
  return `pvc-${claim.metadata.uid}`;
}

/**
 * The volume's directory: BASE/<volume>_<namespace>_<claim>, so that an admin looking at the
 * node's disk sees whose data each directory holds; the volume name keeps it unique.
 */
export function localPathDirectory(basePath: string, volumeName: string, claim: PersistentVolumeClaim): string {
  return posix.join(basePath, `${volumeName}_${claim.metadata.namespace}_${claim.metadata.name}`);
}

/** The class's base directory: its `basePath` parameter, which must be absolute. */
export function localPathBase(storageClass: StorageClass): string {
  const base = storageClass.parameters?.basePath;
  return base && posix.isAbsolute(base) && !base.split('/').includes('..') ? posix.normalize(base) : DEFAULT_LOCAL_PATH_BASE;
}

/** The volume made for `claim` on `node`: pinned to the node, pre-bound to the claim, reclaimed as the class says. */
export function localPathVolume(claim: PersistentVolumeClaim, storageClass: StorageClass, node: string): PersistentVolume {
  const name = provisionedVolumeName(claim);
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name, annotations: { [PROVISIONED_BY_ANNOTATION]: LOCAL_PATH_PROVISIONER } },
    spec: {
      capacity: { storage: claim.spec.resources.requests.storage },
      accessModes: [...claim.spec.accessModes],
      persistentVolumeReclaimPolicy: storageClass.reclaimPolicy ?? 'Delete',
      storageClassName: storageClass.metadata.name,
      volumeMode: claim.spec.volumeMode ?? 'Filesystem',
      claimRef: {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        namespace: claim.metadata.namespace,
        name: claim.metadata.name,
        uid: claim.metadata.uid,
      },
      local: { path: localPathDirectory(localPathBase(storageClass), name, claim) },
      nodeAffinity: {
        required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [node] }] }] },
      },
    },
    status: { phase: 'Pending' },
  } as PersistentVolume;
}

/** Whether the volume is one this provisioner made (its directory is then the node's to remove on Delete). */
export function isLocalPathVolume(pv: PersistentVolume): boolean {
  return pv.metadata.annotations?.[PROVISIONED_BY_ANNOTATION] === LOCAL_PATH_PROVISIONER && !!pv.spec.local;
}
