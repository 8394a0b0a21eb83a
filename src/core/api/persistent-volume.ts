// PersistentVolume (v1, cluster-scoped): a piece of storage an admin or a provisioner made, bound to at most one claim.
import * as v from 'valibot';
import type { KindDefinition } from './kind.js';
import { kindSchema, timestampSchema } from './meta.js';
import { nodeSelectorTermSchema } from './pod.js';
import { parseQuantity, quantitySchema } from './quantity.js';
import { type FieldProblem, withChecks } from './validate.js';

export const ACCESS_MODES = ['ReadWriteOnce', 'ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOncePod'] as const;
export type AccessMode = (typeof ACCESS_MODES)[number];
const SHORT_MODES: Record<string, string> = { ReadWriteOnce: 'RWO', ReadOnlyMany: 'ROX', ReadWriteMany: 'RWX', ReadWriteOncePod: 'RWOP' };

/** kubectl's way of printing access modes: RWO,ROX,RWX,RWOP in that order, each once. */
export function formatAccessModes(modes: readonly string[] | undefined): string {
  return ACCESS_MODES.filter((m) => modes?.includes(m))
    .map((m) => SHORT_MODES[m])
    .join(',');
}

export const accessModesSchema = v.pipe(
  v.array(v.picklist(ACCESS_MODES, 'supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"')),
  v.minLength(1, 'Required value: at least 1 access mode is required'),
  v.check((m) => !m.includes('ReadWriteOncePod') || m.length === 1, 'may not use ReadWriteOncePod with other access modes'),
);

/** A storage size: a non-negative quantity. */
export const storageQuantitySchema = v.pipe(
  quantitySchema,
  v.check((q) => parseQuantity(q) > 0, 'must be greater than zero'),
);

export const objectReferenceSchema = v.strictObject({
  apiVersion: v.optional(v.string()),
  kind: v.optional(v.string()),
  namespace: v.optional(v.string()),
  name: v.optional(v.string()),
  uid: v.optional(v.string()),
  resourceVersion: v.optional(v.string()),
  fieldPath: v.optional(v.string()),
});
export type ObjectReference = v.InferOutput<typeof objectReferenceSchema>;

const absolutePath = v.pipe(
  v.string(),
  v.minLength(1, 'Required value'),
  v.check((p) => p.startsWith('/'), 'must be an absolute path'),
  v.check((p) => !p.split('/').includes('..'), "must not contain '..'"),
);

const PV_SOURCES = ['hostPath', 'local'] as const;

export const persistentVolumeSpecSchema = withChecks(
  v.strictObject({
    capacity: v.strictObject({ storage: storageQuantitySchema }, 'Required value'),
    accessModes: accessModesSchema,
    persistentVolumeReclaimPolicy: v.optional(v.picklist(['Retain', 'Delete', 'Recycle'], 'supported values: "Delete", "Recycle", "Retain"'), 'Retain'),
    storageClassName: v.optional(v.string()),
    volumeMode: v.optional(v.picklist(['Filesystem', 'Block'], 'supported values: "Block", "Filesystem"'), 'Filesystem'),
    volumeAttributesClassName: v.optional(v.string()),
    claimRef: v.optional(objectReferenceSchema),
    mountOptions: v.optional(v.array(v.string())),
    nodeAffinity: v.optional(
      v.strictObject({
        required: v.optional(
          v.strictObject({ nodeSelectorTerms: v.pipe(v.array(nodeSelectorTermSchema), v.minLength(1, 'must have at least one node selector term')) }),
        ),
      }),
    ),
    hostPath: v.optional(
      v.strictObject({
        path: absolutePath,
        type: v.optional(v.picklist(['', 'DirectoryOrCreate', 'Directory', 'FileOrCreate', 'File', 'Socket', 'CharDevice', 'BlockDevice'])),
      }),
    ),
    local: v.optional(v.strictObject({ path: absolutePath, fsType: v.optional(v.string()) })),
  }),
  (spec): FieldProblem[] => {
    const set = PV_SOURCES.filter((k) => spec[k] !== undefined);
    if (set.length === 0) return [{ path: [], reason: 'FieldValueRequired', detail: 'must specify a volume type', value: '' }];
    if (set.length > 1) return [{ path: [set[1]!], reason: 'FieldValueForbidden', detail: 'may not specify more than 1 volume type' }];
    if (spec.local && !spec.nodeAffinity?.required)
      return [{ path: ['nodeAffinity'], reason: 'FieldValueRequired', detail: 'Local volume requires node affinity', value: '' }];
    return [];
  },
);
export type PersistentVolumeSpec = v.InferOutput<typeof persistentVolumeSpecSchema>;

export const PV_PHASES = ['Pending', 'Available', 'Bound', 'Released', 'Failed'] as const;
export type PersistentVolumePhase = (typeof PV_PHASES)[number];

export const persistentVolumeStatusSchema = v.strictObject({
  phase: v.optional(v.picklist(PV_PHASES)),
  message: v.optional(v.string()),
  reason: v.optional(v.string()),
  lastPhaseTransitionTime: v.optional(timestampSchema),
});
export type PersistentVolumeStatus = v.InferOutput<typeof persistentVolumeStatusSchema>;

export const persistentVolumeSchema = kindSchema('v1', 'PersistentVolume', {
  spec: persistentVolumeSpecSchema,
  // A new volume is Pending until the binder has looked at it, as kube-apiserver stores it.
  status: v.optional(persistentVolumeStatusSchema, { phase: 'Pending' }),
});
export type PersistentVolume = v.InferOutput<typeof persistentVolumeSchema>;

/** The annotation a provisioned volume carries: which provisioner made it (Kubernetes' name). */
export const PROVISIONED_BY_ANNOTATION = 'pv.kubernetes.io/provisioned-by';
/** The finalizer that keeps a volume bound to a claim from going away under it. */
export const PV_PROTECTION_FINALIZER = 'kubernetes.io/pv-protection';

/** The volume's path on its node, whichever source it has. */
export function persistentVolumePath(pv: PersistentVolume): string | undefined {
  return pv.spec.hostPath?.path ?? pv.spec.local?.path;
}

export const persistentVolumeKind: KindDefinition = {
  kind: 'PersistentVolume',
  group: '',
  version: 'v1',
  resource: 'persistentvolumes',
  singular: 'persistentvolume',
  shortNames: ['pv'],
  namespaced: false,
  schema: persistentVolumeSchema,
  statusSubresource: true,
  validateUpdate(existing, next) {
    // As Kubernetes: a volume's source and its node affinity are fixed once made (its capacity may grow, claimRef may be set).
    const before = existing as PersistentVolume;
    const after = next as PersistentVolume;
    const problems: FieldProblem[] = [];
    for (const field of [...PV_SOURCES, 'volumeMode'] as const) {
      if (JSON.stringify(before.spec[field] ?? null) !== JSON.stringify(after.spec[field] ?? null))
        problems.push({ path: ['spec', field], reason: 'FieldValueInvalid', value: after.spec[field] ?? '', detail: 'field is immutable' });
    }
    if (before.spec.nodeAffinity && JSON.stringify(before.spec.nodeAffinity) !== JSON.stringify(after.spec.nodeAffinity ?? null))
      problems.push({ path: ['spec', 'nodeAffinity'], reason: 'FieldValueInvalid', value: '', detail: 'field is immutable once set' });
    return problems;
  },
  // kubectl's columns: NAME CAPACITY ACCESS MODES RECLAIM POLICY STATUS CLAIM STORAGECLASS VOLUMEATTRIBUTESCLASS REASON AGE VOLUMEMODE.
  columns: [
    { name: 'CAPACITY', value: (o) => String((o as PersistentVolume).spec.capacity.storage) },
    { name: 'ACCESS MODES', value: (o) => formatAccessModes((o as PersistentVolume).spec.accessModes) },
    { name: 'RECLAIM POLICY', value: (o) => (o as PersistentVolume).spec.persistentVolumeReclaimPolicy ?? 'Retain' },
    { name: 'STATUS', value: (o) => (o as PersistentVolume).status?.phase ?? '' },
    {
      name: 'CLAIM',
      value: (o) => {
        const ref = (o as PersistentVolume).spec.claimRef;
        return ref?.name ? `${ref.namespace ?? ''}/${ref.name}` : '';
      },
    },
    { name: 'STORAGECLASS', value: (o) => (o as PersistentVolume).spec.storageClassName ?? '' },
    { name: 'VOLUMEATTRIBUTESCLASS', value: (o) => (o as PersistentVolume).spec.volumeAttributesClassName || '<unset>' },
    { name: 'REASON', value: (o) => (o as PersistentVolume).status?.reason ?? '' },
    { name: 'VOLUMEMODE', wide: true, value: (o) => (o as PersistentVolume).spec.volumeMode ?? 'Filesystem' },
  ],
};
