// Strategic-merge-patch metadata: which lists merge by which key, as Kubernetes declares it on its types (patchStrategy, patchMergeKey), one table per shared type.

/**
 * What a strategic merge patch needs to know about one field. Lists without `merge` are
 * replaced whole, as in a JSON merge patch; maps always merge.
 */
export interface FieldPatchMeta {
  /** patchStrategy "merge": a list of maps merges element by `mergeKey`; a list of scalars merges as a set. */
  merge?: boolean;
  /** patchMergeKey: the field naming a list element (containers by `name`, ports by `containerPort`). */
  mergeKey?: string;
  /** patchStrategy "retainKeys": a `$retainKeys` directive may clear the keys it does not list (volume sources, deployment strategy). */
  retainKeys?: boolean;
  /** The metadata of the field's own fields: of the map, or of each element of the list. */
  fields?: PatchMeta;
}

/** Field name -> its metadata, for one map type (PodSpec, Container, ObjectMeta...). */
export type PatchMeta = Readonly<Record<string, FieldPatchMeta>>;

/** ObjectMeta: finalizers as a set, owner references by uid. */
export const objectMetaPatchMeta: PatchMeta = {
  finalizers: { merge: true },
  ownerReferences: { merge: true, mergeKey: 'uid' },
};

const containerPatchMeta: PatchMeta = {
  ports: { merge: true, mergeKey: 'containerPort' },
  env: { merge: true, mergeKey: 'name' },
  volumeMounts: { merge: true, mergeKey: 'mountPath' },
  volumeDevices: { merge: true, mergeKey: 'devicePath' },
  resizePolicy: { merge: true, mergeKey: 'resourceName' },
};

export const podSpecPatchMeta: PatchMeta = {
  containers: { merge: true, mergeKey: 'name', fields: containerPatchMeta },
  initContainers: { merge: true, mergeKey: 'name', fields: containerPatchMeta },
  ephemeralContainers: { merge: true, mergeKey: 'name', fields: containerPatchMeta },
  volumes: { merge: true, mergeKey: 'name', retainKeys: true },
  imagePullSecrets: { merge: true, mergeKey: 'name' },
  hostAliases: { merge: true, mergeKey: 'ip' },
};

/** status.conditions of most kinds merge by type. */
const conditionsByType: FieldPatchMeta = { merge: true, mergeKey: 'type' };

export const podPatchMeta: PatchMeta = {
  metadata: { fields: objectMetaPatchMeta },
  spec: { fields: podSpecPatchMeta },
  status: { fields: { conditions: conditionsByType, podIPs: { merge: true, mergeKey: 'ip' } } },
};

/** PodTemplateSpec, as embedded by the workload kinds. */
export const podTemplatePatchMeta: FieldPatchMeta = { fields: { metadata: { fields: objectMetaPatchMeta }, spec: { fields: podSpecPatchMeta } } };

/** Deployments, ReplicaSets and the like: the template's pod spec, status conditions by type. */
export function workloadPatchMeta(spec: PatchMeta = {}): PatchMeta {
  return {
    metadata: { fields: objectMetaPatchMeta },
    spec: { fields: { template: podTemplatePatchMeta, ...spec } },
    status: { fields: { conditions: conditionsByType } },
  };
}

export const nodePatchMeta: PatchMeta = {
  metadata: { fields: objectMetaPatchMeta },
  spec: { fields: { podCIDRs: { merge: true } } },
  status: { fields: { conditions: conditionsByType, addresses: { merge: true, mergeKey: 'type' } } },
};

export const servicePatchMeta: PatchMeta = {
  metadata: { fields: objectMetaPatchMeta },
  spec: { fields: { ports: { merge: true, mergeKey: 'port' } } },
  status: { fields: { conditions: conditionsByType } },
};

/** Kinds with no lists of their own to merge: metadata merges as everywhere. */
export const defaultPatchMeta: PatchMeta = {
  metadata: { fields: objectMetaPatchMeta },
  status: { fields: { conditions: conditionsByType } },
};
