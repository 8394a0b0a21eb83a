// autoscaling/v1 Scale: the `/scale` subresource view of a workload (ReplicaSet, Deployment).
import type { SubresourceDefinition } from './kind.js';
import type { KubeObject } from './meta.js';
import { formatSelector, selectorFromLabelSelector, type LabelSelector } from './selector.js';

/** Declared in a kind's `subresources`: the kind has spec.replicas, spec.selector and status.replicas, and is served a Scale. */
export const SCALE_SUBRESOURCE: SubresourceDefinition = {
  name: 'scale',
  group: 'autoscaling',
  version: 'v1',
  kind: 'Scale',
  verbs: ['get', 'patch', 'update'],
};

export interface Scale {
  apiVersion: 'autoscaling/v1';
  kind: 'Scale';
  metadata: { name?: string; namespace?: string; uid?: string; resourceVersion?: string; creationTimestamp?: string | null };
  spec: { replicas: number };
  status: { replicas: number; selector?: string };
}

/** A scalable object as the Scale it presents. */
interface Scalable extends KubeObject {
  spec: { replicas?: number; selector?: LabelSelector };
  status?: { replicas?: number };
}

export function scaleOf(obj: KubeObject): Scale {
  const o = obj as Scalable;
  let selector: string | undefined;
  try {
    selector = o.spec.selector ? formatSelector(selectorFromLabelSelector(o.spec.selector)) : undefined;
  } catch {
    selector = undefined;
  }
  const { name, namespace, uid, resourceVersion, creationTimestamp } = o.metadata;
  return {
    apiVersion: 'autoscaling/v1',
    kind: 'Scale',
    metadata: { name, namespace, uid, resourceVersion, creationTimestamp },
    spec: { replicas: o.spec.replicas ?? 0 },
    status: { replicas: o.status?.replicas ?? 0, ...(selector !== undefined ? { selector } : {}) },
  };
}

/** The problem with a Scale's spec.replicas, or undefined when it is a whole number of at least 0. */
export function scaleReplicasProblem(value: unknown): string | undefined {
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) return `spec.replicas: Invalid value: ${JSON.stringify(value) ?? 'null'}: must be an integer`;
  if (value < 0) return `spec.replicas: Invalid value: ${value}: must be greater than or equal to 0`;
  return undefined;
}
