// PersistentVolumeClaim (v1): a namespace's request for storage, bound by the binder to one PersistentVolume that pods then mount.
import * as v from 'valibot';
import type { KindDefinition } from './kind.js';
import { conditionSchema, kindSchema } from './meta.js';
import { accessModesSchema, formatAccessModes, storageQuantitySchema } from './persistent-volume.js';
import { quantitySchema } from './quantity.js';
import { labelSelectorSchema } from './selector.js';
import type { FieldProblem } from './validate.js';

export const persistentVolumeClaimSpecSchema = v.strictObject({
  accessModes: accessModesSchema,
  resources: v.strictObject(
    {
      requests: v.strictObject({ storage: storageQuantitySchema }, 'Required value: storage'),
      limits: v.optional(v.strictObject({ storage: v.optional(quantitySchema) })),
    },
    'Required value',
  ),
  // Unset means "the default class" (admission fills it); "" means "no class": only volumes without one.
  storageClassName: v.optional(v.string()),
  volumeName: v.optional(v.string()),
  selector: v.optional(labelSelectorSchema),
  volumeMode: v.optional(v.picklist(['Filesystem', 'Block'], 'supported values: "Block", "Filesystem"'), 'Filesystem'),
  volumeAttributesClassName: v.optional(v.string()),
  dataSource: v.optional(v.strictObject({ apiGroup: v.optional(v.string()), kind: v.string(), name: v.string() })),
});
export type PersistentVolumeClaimSpec = v.InferOutput<typeof persistentVolumeClaimSpecSchema>;

export const persistentVolumeClaimStatusSchema = v.strictObject({
  phase: v.optional(v.picklist(['Pending', 'Bound', 'Lost'])),
  accessModes: v.optional(v.array(v.string())),
  capacity: v.optional(v.strictObject({ storage: v.optional(quantitySchema) })),
  conditions: v.optional(v.array(conditionSchema)),
});

export const persistentVolumeClaimSchema = kindSchema('v1', 'PersistentVolumeClaim', {
  spec: persistentVolumeClaimSpecSchema,
  status: v.optional(persistentVolumeClaimStatusSchema, { phase: 'Pending' }),
});
export type PersistentVolumeClaim = v.InferOutput<typeof persistentVolumeClaimSchema>;

/** The finalizer that keeps a claim a pod uses from going away under the pod. */
export const PVC_PROTECTION_FINALIZER = 'kubernetes.io/pvc-protection';
/** Set on a claim once the binder bound it (Kubernetes' annotation). */
export const BIND_COMPLETED_ANNOTATION = 'pv.kubernetes.io/bind-completed';
/** The node the scheduler chose for the first pod of a WaitForFirstConsumer claim (Kubernetes' annotation). */
export const SELECTED_NODE_ANNOTATION = 'volume.kubernetes.io/selected-node';
/** The provisioner asked to make the claim's volume (Kubernetes' annotation). */
export const STORAGE_PROVISIONER_ANNOTATION = 'volume.kubernetes.io/storage-provisioner';

export const persistentVolumeClaimKind: KindDefinition = {
  kind: 'PersistentVolumeClaim',
  group: '',
  version: 'v1',
  resource: 'persistentvolumeclaims',
  singular: 'persistentvolumeclaim',
  shortNames: ['pvc'],
  namespaced: true,
  schema: persistentVolumeClaimSchema,
  statusSubresource: true,
  validateUpdate(existing, next) {
    // As Kubernetes: once made, a claim's spec may only grow its request and be given a volume (by the binder).
    const before = (existing as PersistentVolumeClaim).spec;
    const after = (next as PersistentVolumeClaim).spec;
    const strip = (s: PersistentVolumeClaimSpec) => ({ ...s, resources: undefined, volumeName: before.volumeName ? s.volumeName : undefined });
    const unchanged = JSON.stringify(strip(before)) === JSON.stringify(strip(after));
    // A claim with no class may be given the default one later (Kubernetes' retroactive default class).
    const classFilled = before.storageClassName === undefined && after.storageClassName !== undefined;
    const sameButClass = JSON.stringify(strip({ ...before, storageClassName: undefined })) === JSON.stringify(strip({ ...after, storageClassName: undefined }));
    const problems: FieldProblem[] = [];
    if (!unchanged && !(classFilled && sameButClass))
      problems.push({
        path: ['spec'],
        reason: 'FieldValueForbidden',
        value: '',
        detail: 'spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims',
      });
    return problems;
  },
  // kubectl's columns: NAME STATUS VOLUME CAPACITY ACCESS MODES STORAGECLASS VOLUMEATTRIBUTESCLASS AGE VOLUMEMODE.
  columns: [
    { name: 'STATUS', value: (o) => (o as PersistentVolumeClaim).status?.phase ?? '' },
    { name: 'VOLUME', value: (o) => (o as PersistentVolumeClaim).spec.volumeName ?? '' },
    { name: 'CAPACITY', value: (o) => String((o as PersistentVolumeClaim).status?.capacity?.storage ?? '') },
    { name: 'ACCESS MODES', value: (o) => formatAccessModes((o as PersistentVolumeClaim).status?.accessModes) },
    { name: 'STORAGECLASS', value: (o) => (o as PersistentVolumeClaim).spec.storageClassName ?? '' },
    { name: 'VOLUMEATTRIBUTESCLASS', value: (o) => (o as PersistentVolumeClaim).spec.volumeAttributesClassName || '<unset>' },
    { name: 'VOLUMEMODE', wide: true, value: (o) => (o as PersistentVolumeClaim).spec.volumeMode ?? 'Filesystem' },
  ],
};
