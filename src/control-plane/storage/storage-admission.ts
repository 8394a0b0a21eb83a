// Storage at the API's door: Kubernetes' DefaultStorageClass admission (a claim naming no class gets the default one) and the master's local-path class, made at start when missing.
import type { KubeObject } from '../../core/api/meta.js';
import type { PersistentVolumeClaim } from '../../core/api/persistent-volume-claim.js';
import { defaultStorageClass, LOCAL_PATH_CLASS, localPathStorageClass, type StorageClass, storageClassKind } from '../../core/api/storage-class.js';
import { AlreadyExistsError, NotFoundError } from '../../core/errors.js';
import type { ObjectService } from '../api-server/object-service.js';

/**
 * The claim as stored: with the default class filled in when it names none. A claim with
 * `storageClassName: ""` asked for no class and keeps it; with no default class the claim is
 * left alone (the binder gives it the default later, if one appears: Kubernetes' retroactive assignment).
 */
export function defaultClassAdmission(service: Pick<ObjectService, 'list'>): (claim: KubeObject) => Promise<KubeObject> {
  return async (obj) => {
    const claim = obj as PersistentVolumeClaim;
    if (claim.spec.storageClassName !== undefined) return obj;
    const classes = (await service.list(storageClassKind, undefined)).items as StorageClass[];
    const chosen = defaultStorageClass(classes);
    return chosen ? ({ ...claim, spec: { ...claim.spec, storageClassName: chosen.metadata.name } } as KubeObject) : obj;
  };
}

/** Creates the local-path class when absent; one that exists is the admin's and stays as it is. */
export async function ensureLocalPathClass(options: { service: ObjectService; log?: (message: string) => void }): Promise<void> {
  try {
    await options.service.get(storageClassKind, undefined, LOCAL_PATH_CLASS);
    return;
  } catch (err) {
    if (!(err instanceof NotFoundError)) throw err;
  }
  try {
    await options.service.create(storageClassKind, undefined, localPathStorageClass() as unknown as Record<string, unknown>);
    options.log?.(`created storageclass ${LOCAL_PATH_CLASS} (the default class)`);
  } catch (err) {
    if (!(err instanceof AlreadyExistsError)) throw err;
  }
}
