// StorageClass (storage.k8s.io/v1): names the provisioner that makes volumes for claims of the class, its reclaim policy and when claims bind.
import * as v from 'valibot';
import type { KindDefinition } from './kind.js';
import { kindSchema, mapSchema } from './meta.js';
import type { FieldProblem } from './validate.js';

/** The annotation that makes a class the default for claims naming none (Kubernetes' name). */
export const DEFAULT_STORAGE_CLASS_ANNOTATION = 'storageclass.kubernetes.io/is-default-class';
/** The built-in provisioner: a directory per volume on the node the first pod using the claim is scheduled to. */
export const LOCAL_PATH_PROVISIONER = 'minik8s.io/local-path';
/** The provisioner name of classes for statically made volumes only (Kubernetes' name). */
export const NO_PROVISIONER = 'kubernetes.io/no-provisioner';
/** The class the master creates when there is none: local-path, the default, WaitForFirstConsumer. */
export const LOCAL_PATH_CLASS = 'local-path';

const RECLAIM = ['Retain', 'Delete', 'Recycle'] as const;
const BINDING_MODES = ['Immediate', 'WaitForFirstConsumer'] as const;
/** Kubernetes' rule for a provisioner name: a qualified name such as `kubernetes.io/aws-ebs`. */
const PROVISIONER = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

export const storageClassSchema = kindSchema('storage.k8s.io/v1', 'StorageClass', {
  provisioner: v.pipe(
    v.string('Required value'),
    v.minLength(1, 'Required value'),
    v.regex(PROVISIONER, 'must be a qualified name such as "example.com/my-provisioner"'),
  ),
  parameters: v.optional(mapSchema(v.string(), v.string())),
  reclaimPolicy: v.optional(v.picklist(RECLAIM), 'Delete'),
  volumeBindingMode: v.optional(v.picklist(BINDING_MODES), 'Immediate'),
  allowVolumeExpansion: v.optional(v.boolean()),
  mountOptions: v.optional(v.array(v.string())),
  allowedTopologies: v.optional(
    v.array(
      v.strictObject({
        matchLabelExpressions: v.optional(v.array(v.strictObject({ key: v.string(), values: v.array(v.string()) }))),
      }),
    ),
  ),
});
export type StorageClass = v.InferOutput<typeof storageClassSchema>;

/** Whether the class carries the default-class annotation set to "true". */
export function isDefaultStorageClass(c: StorageClass): boolean {
  return c.metadata.annotations?.[DEFAULT_STORAGE_CLASS_ANNOTATION] === 'true';
}

/**
 * The default class among `classes`: as Kubernetes, when several are marked the newest wins
 * (ties by name), so that adding a new default takes effect without unmarking the old one first.
 */
export function defaultStorageClass(classes: readonly StorageClass[]): StorageClass | undefined {
  const marked = classes.filter(isDefaultStorageClass);
  marked.sort(
    (a, b) =>
      (b.metadata.creationTimestamp ?? '').localeCompare(a.metadata.creationTimestamp ?? '') || (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''),
  );
  return marked[0];
}

/** The class the master creates at start when no class of that name exists. */
export function localPathStorageClass(): StorageClass {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name: LOCAL_PATH_CLASS, annotations: { [DEFAULT_STORAGE_CLASS_ANNOTATION]: 'true' } },
    provisioner: LOCAL_PATH_PROVISIONER,
    reclaimPolicy: 'Delete',
    volumeBindingMode: 'WaitForFirstConsumer',
  } as StorageClass;
}

const IMMUTABLE = ['provisioner', 'parameters', 'reclaimPolicy', 'volumeBindingMode'] as const;

export const storageClassKind: KindDefinition = {
  kind: 'StorageClass',
  group: 'storage.k8s.io',
  version: 'v1',
  resource: 'storageclasses',
  singular: 'storageclass',
  shortNames: ['sc'],
  namespaced: false,
  schema: storageClassSchema,
  statusSubresource: false,
  validateUpdate(existing, next) {
    // As Kubernetes: what a class promises its volumes cannot change under them.
    const problems: FieldProblem[] = [];
    for (const field of IMMUTABLE) {
      const before = (existing as StorageClass)[field];
      const after = (next as StorageClass)[field];
      if (JSON.stringify(before ?? null) !== JSON.stringify(after ?? null))
        problems.push({ path: [field], reason: 'FieldValueForbidden', detail: `updates to ${field} are forbidden.` });
    }
    return problems;
  },
  // kubectl's columns: NAME PROVISIONER RECLAIMPOLICY VOLUMEBINDINGMODE ALLOWVOLUMEEXPANSION AGE.
  columns: [
    { name: 'PROVISIONER', value: (o) => (o as StorageClass).provisioner },
    { name: 'RECLAIMPOLICY', value: (o) => (o as StorageClass).reclaimPolicy ?? 'Delete' },
    { name: 'VOLUMEBINDINGMODE', value: (o) => (o as StorageClass).volumeBindingMode ?? 'Immediate' },
    { name: 'ALLOWVOLUMEEXPANSION', value: (o) => String((o as StorageClass).allowVolumeExpansion ?? false) },
  ],
};
