// Which volume suits which claim and which node, shared by the binder and the scheduler's volume filter.
import type { PersistentVolumeClaim } from '../../core/api/persistent-volume-claim.js';
import type { PersistentVolume } from '../../core/api/persistent-volume.js';
import { parseQuantity } from '../../core/api/quantity.js';
import { matches, selectorFromLabelSelector } from '../../core/api/selector.js';
import { compileNodeTerm, termMatchesNode } from '../scheduler/filters.js';

/** A node as volume affinity sees it. */
export interface NodeView {
  name: string;
  labels: Readonly<Record<string, string>>;
}

/** The class a claim asks for: '' (no class) when unset, as the binder reads it once admission had its chance. */
export function claimClass(claim: PersistentVolumeClaim): string {
  return claim.spec.storageClassName ?? '';
}

export function volumeClass(pv: PersistentVolume): string {
  return pv.spec.storageClassName ?? '';
}

/** Whether the volume's required node affinity lets it be used on `node` (no affinity: every node). */
export function volumeFitsNode(pv: PersistentVolume, node: NodeView): boolean {
  const terms = pv.spec.nodeAffinity?.required?.nodeSelectorTerms;
  if (!terms) return true;
  return terms.some((t) => termMatchesNode(compileNodeTerm(t), node));
}

/** The bytes a claim asks for (0 when unreadable, which schema validation prevents). */
export function requestedBytes(claim: PersistentVolumeClaim): number {
  try {
    return parseQuantity(claim.spec.resources.requests.storage);
  } catch {
    return 0;
  }
}

export function capacityBytes(pv: PersistentVolume): number {
  try {
    return parseQuantity(pv.spec.capacity.storage);
  } catch {
    return 0;
  }
}

/**
 * Whether `pv` could serve `claim` as Kubernetes' binder judges it: same class, every access mode
 * asked for, enough capacity, same volume mode, labels matching the claim's selector. Whether
 * the volume is free is the caller's business.
 */
export function volumeMatchesClaim(pv: PersistentVolume, claim: PersistentVolumeClaim): boolean {
  if (volumeClass(pv) !== claimClass(claim)) return false;
  if (!claim.spec.accessModes.every((m) => pv.spec.accessModes.includes(m))) return false;
  if (capacityBytes(pv) < requestedBytes(claim)) return false;
  if ((pv.spec.volumeMode ?? 'Filesystem') !== (claim.spec.volumeMode ?? 'Filesystem')) return false;
  if (claim.spec.selector) {
    try {
      if (!matches(selectorFromLabelSelector(claim.spec.selector), pv.metadata.labels)) return false;
    } catch {
      return false;
    }
  }
  return true;
}

/** Whether the volume's claimRef names this claim (by uid when the ref has one, else by namespace and name). */
export function refersTo(pv: PersistentVolume, claim: PersistentVolumeClaim): boolean {
  const ref = pv.spec.claimRef;
  if (!ref?.name || ref.name !== claim.metadata.name || (ref.namespace ?? '') !== (claim.metadata.namespace ?? '')) return false;
  return !ref.uid || ref.uid === claim.metadata.uid;
}
