// The binder's decisions, pure: given every volume, claim, class and pod, which claim binds which volume, which volumes to provision, release, reclaim, and which finalizers to add or drop.
import type { KubeObject } from '../../core/api/meta.js';
import {
  BIND_COMPLETED_ANNOTATION,
  type PersistentVolumeClaim,
  PVC_PROTECTION_FINALIZER,
  SELECTED_NODE_ANNOTATION,
} from '../../core/api/persistent-volume-claim.js';
import { type PersistentVolume, type PersistentVolumePhase, PV_PROTECTION_FINALIZER } from '../../core/api/persistent-volume.js';
import type { Pod } from '../../core/api/pod.js';
import { defaultStorageClass, LOCAL_PATH_PROVISIONER, NO_PROVISIONER, type StorageClass } from '../../core/api/storage-class.js';
import { capacityBytes, claimClass, type NodeView, refersTo, volumeFitsNode, volumeMatchesClaim } from './volume-match.js';

/** Kubernetes' wording of the binder's events. */
export const MESSAGES = {
  noClass: 'no persistent volumes available for this claim and no storage class is set',
  noVolume: 'no persistent volumes available for this claim',
  waitForConsumer: 'waiting for first consumer to be created before binding',
  classNotFound: (name: string) => `storageclass.storage.k8s.io "${name}" not found`,
  external: (provisioner: string) =>
    `Waiting for a volume to be created either by the external provisioner '${provisioner}' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.`,
  localNeedsConsumer: `the ${LOCAL_PATH_PROVISIONER} provisioner makes node-local volumes: its StorageClass must have volumeBindingMode WaitForFirstConsumer`,
  localModes: `the ${LOCAL_PATH_PROVISIONER} provisioner supports only the ReadWriteOnce and ReadWriteOncePod access modes`,
  boundElsewhere: (volume: string) => `volume "${volume}" already bound to a different claim.`,
  lost: 'Bound claim has lost its PersistentVolume. Data on the volume is lost!',
  recycle: 'Recycle is not supported: use Delete or Retain',
} as const;

export type BinderAction =
  /** Write the volume's claimRef (and phase Bound). */
  | { type: 'bindVolume'; volume: PersistentVolume; claim: PersistentVolumeClaim }
  /** Write the claim's volumeName, bind-completed annotation and status Bound with the volume's capacity and modes. */
  | { type: 'bindClaim'; claim: PersistentVolumeClaim; volume: PersistentVolume }
  | { type: 'volumePhase'; volume: PersistentVolume; phase: PersistentVolumePhase; message?: string }
  | { type: 'claimLost'; claim: PersistentVolumeClaim }
  /** Make a volume for the claim on the node (local-path). */
  | { type: 'provision'; claim: PersistentVolumeClaim; storageClass: StorageClass; node: string }
  | { type: 'deleteVolume'; volume: PersistentVolume }
  /** Kubernetes' retroactive default class: a claim made before any default existed gets it now. */
  | { type: 'setClass'; claim: PersistentVolumeClaim; className: string }
  | { type: 'finalizers'; object: PersistentVolume | PersistentVolumeClaim; finalizers: string[] }
  | { type: 'event'; object: KubeObject; eventType: 'Normal' | 'Warning'; reason: string; message: string };

export interface BinderInput {
  volumes: readonly PersistentVolume[];
  claims: readonly PersistentVolumeClaim[];
  classes: readonly StorageClass[];
  /** Pods that may use claims: those bound to a node name WaitForFirstConsumer claims' node; any live one keeps a claim protected. */
  pods: readonly Pod[];
  /** Nodes by name, for static volumes' node affinity against a WaitForFirstConsumer claim's node. */
  nodes: ReadonlyMap<string, NodeView>;
}

const byCreation = <T extends KubeObject>(a: T, b: T) =>
  (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') || (a.metadata.name ?? '').localeCompare(b.metadata.name ?? '');

const claimKey = (ns: string | undefined, name: string | undefined) => `${ns ?? ''}/${name ?? ''}`;

function podFinished(pod: Pod): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}

/** The claims each live pod names, by namespace/name, with the pods' nodes. */
function claimUsers(pods: readonly Pod[]): Map<string, Pod[]> {
  const users = new Map<string, Pod[]>();
  for (const pod of pods) {
    if (podFinished(pod)) continue;
    for (const vol of pod.spec.volumes ?? []) {
      const name = vol.persistentVolumeClaim?.claimName;
      if (!name) continue;
      const key = claimKey(pod.metadata.namespace, name);
      users.set(key, [...(users.get(key) ?? []), pod]);
    }
  }
  return users;
}

/** The node a WaitForFirstConsumer claim is for: the scheduler's choice for its first pod. */
export function selectedNode(claim: PersistentVolumeClaim, users: readonly Pod[]): string | undefined {
  return claim.metadata.annotations?.[SELECTED_NODE_ANNOTATION] ?? users.find((p) => p.spec.nodeName && !p.metadata.deletionTimestamp)?.spec.nodeName;
}

function withFinalizer(obj: KubeObject, finalizer: string, wanted: boolean): string[] | undefined {
  const now = obj.metadata.finalizers ?? [];
  const has = now.includes(finalizer);
  if (has === wanted) return undefined;
  return wanted ? [...now, finalizer] : now.filter((f) => f !== finalizer);
}

/**
 * One pass of Kubernetes' PV controller over the whole cluster. Claims are served oldest first;
 * a volume matched in this pass is not offered to a later claim. Among free volumes a claim takes
 * the smallest that fits (ties by name), so big volumes stay for big claims.
 */
export function planBinder(input: BinderInput): BinderAction[] {
  const actions: BinderAction[] = [];
  const classes = new Map(input.classes.map((c) => [c.metadata.name!, c]));
  const users = claimUsers(input.pods);
  const claimsByKey = new Map(input.claims.map((c) => [claimKey(c.metadata.namespace, c.metadata.name), c]));
  const volumesByName = new Map(input.volumes.map((v) => [v.metadata.name!, v]));
  // Volumes a claim already names are nobody else's, whichever claim is looked at first.
  const taken = new Set<string>(input.claims.flatMap((c) => (c.spec.volumeName ? [c.spec.volumeName] : [])));
  const fallbackClass = defaultStorageClass(input.classes);
  const event = (object: KubeObject, eventType: 'Normal' | 'Warning', reason: string, message: string) =>
    actions.push({ type: 'event', object, eventType, reason, message });

  for (const claim of [...input.claims].sort(byCreation)) {
    const deleting = !!claim.metadata.deletionTimestamp;
    const inUse = (users.get(claimKey(claim.metadata.namespace, claim.metadata.name)) ?? []).length > 0;
    // Protection: kept while a live pod names it; added to every claim that is not on its way out.
    const fin = withFinalizer(claim, PVC_PROTECTION_FINALIZER, deleting ? inUse : true);
    if (fin) actions.push({ type: 'finalizers', object: claim, finalizers: fin });

    const bound = claim.spec.volumeName ? volumesByName.get(claim.spec.volumeName) : undefined;
    if (claim.spec.volumeName) {
      if (!bound) {
        if (claim.status?.phase === 'Bound') {
          actions.push({ type: 'claimLost', claim });
          event(claim, 'Warning', 'ClaimLost', MESSAGES.lost);
        }
        continue;
      }
      if (!bound.spec.claimRef) actions.push({ type: 'bindVolume', volume: bound, claim });
      else if (!refersTo(bound, claim)) {
        event(claim, 'Warning', 'FailedBinding', MESSAGES.boundElsewhere(bound.metadata.name!));
        continue;
      }
      if (claim.status?.phase !== 'Bound') actions.push({ type: 'bindClaim', claim, volume: bound });
      continue;
    }
    if (deleting) continue;

    if (claim.spec.storageClassName === undefined && fallbackClass) {
      actions.push({ type: 'setClass', claim, className: fallbackClass.metadata.name! });
      continue;
    }

    // A volume an admin (or a provisioner) made for this very claim.
    const prebound = input.volumes.find((v) => !taken.has(v.metadata.name!) && refersTo(v, claim) && !v.metadata.deletionTimestamp);
    const className = claimClass(claim);
    const storageClass = className ? classes.get(className) : undefined;
    const waits = storageClass?.volumeBindingMode === 'WaitForFirstConsumer';
    const node = waits ? selectedNode(claim, users.get(claimKey(claim.metadata.namespace, claim.metadata.name)) ?? []) : undefined;
    const nodeView = node ? (input.nodes.get(node) ?? { name: node, labels: { 'kubernetes.io/hostname': node } }) : undefined;
    let chosen = prebound;
    if (!chosen && (!waits || nodeView)) {
      const candidates = input.volumes.filter(
        (v) =>
          !taken.has(v.metadata.name!) &&
          !v.spec.claimRef &&
          !v.metadata.deletionTimestamp &&
          (v.status?.phase === 'Available' || v.status?.phase === 'Pending' || v.status?.phase === undefined) &&
          volumeMatchesClaim(v, claim) &&
          (!nodeView || volumeFitsNode(v, nodeView)),
      );
      candidates.sort((a, b) => capacityBytes(a) - capacityBytes(b) || a.metadata.name!.localeCompare(b.metadata.name!));
      chosen = candidates[0];
    }
    if (chosen) {
      taken.add(chosen.metadata.name!);
      if (!chosen.spec.claimRef?.uid) actions.push({ type: 'bindVolume', volume: chosen, claim });
      actions.push({ type: 'bindClaim', claim, volume: chosen });
      continue;
    }

    // Nothing to bind: say why, and provision where a class says how.
    if (!className) event(claim, 'Normal', 'FailedBinding', MESSAGES.noClass);
    else if (!storageClass) event(claim, 'Warning', 'ProvisioningFailed', MESSAGES.classNotFound(className));
    else if (waits && !node) event(claim, 'Normal', 'WaitForFirstConsumer', MESSAGES.waitForConsumer);
    else if (storageClass.provisioner === NO_PROVISIONER) event(claim, 'Normal', 'FailedBinding', MESSAGES.noVolume);
    else if (storageClass.provisioner === LOCAL_PATH_PROVISIONER) {
      if (!node) event(claim, 'Warning', 'ProvisioningFailed', MESSAGES.localNeedsConsumer);
      else if (claim.spec.accessModes.some((m) => m !== 'ReadWriteOnce' && m !== 'ReadWriteOncePod'))
        event(claim, 'Warning', 'ProvisioningFailed', MESSAGES.localModes);
      else actions.push({ type: 'provision', claim, storageClass, node });
    } else event(claim, 'Normal', 'ExternalProvisioning', MESSAGES.external(storageClass.provisioner));
  }

  for (const volume of [...input.volumes].sort(byCreation)) {
    const ref = volume.spec.claimRef;
    const claim = ref?.name ? claimsByKey.get(claimKey(ref.namespace, ref.name)) : undefined;
    const claimGone = !!ref?.uid && (!claim || claim.metadata.uid !== ref.uid);
    const boundNow = !!ref && !claimGone && !!claim;
    // Protection: a volume stays while a claim is bound to it.
    const fin = withFinalizer(volume, PV_PROTECTION_FINALIZER, volume.metadata.deletionTimestamp ? boundNow : true);
    if (fin) actions.push({ type: 'finalizers', object: volume, finalizers: fin });
    if (actions.some((a) => a.type === 'bindVolume' && a.volume === volume)) continue;
    if (!ref) {
      if (volume.status?.phase !== 'Available' && !taken.has(volume.metadata.name!)) actions.push({ type: 'volumePhase', volume, phase: 'Available' });
      continue;
    }
    if (!claimGone) {
      // Bound once the claim names it; a claimRef without a uid is an admin's reservation, Available until then.
      const phase: PersistentVolumePhase = claim?.spec.volumeName === volume.metadata.name ? 'Bound' : ref.uid ? 'Bound' : 'Available';
      if (volume.status?.phase !== phase && volume.status?.phase !== 'Failed') actions.push({ type: 'volumePhase', volume, phase });
      continue;
    }
    // Its claim is gone: released, then reclaimed as its policy says.
    const policy = volume.spec.persistentVolumeReclaimPolicy ?? 'Retain';
    if (policy === 'Recycle') {
      if (volume.status?.phase !== 'Failed') {
        actions.push({ type: 'volumePhase', volume, phase: 'Failed', message: MESSAGES.recycle });
        event(volume, 'Warning', 'VolumeFailedRecycle', MESSAGES.recycle);
      }
      continue;
    }
    if (volume.status?.phase !== 'Released' && volume.status?.phase !== 'Failed') actions.push({ type: 'volumePhase', volume, phase: 'Released' });
    if (policy === 'Delete' && !volume.metadata.deletionTimestamp) actions.push({ type: 'deleteVolume', volume });
  }
  return actions;
}

/** The claim's bind-completed annotation, as the binder writes it. */
export const BOUND_ANNOTATIONS = { [BIND_COMPLETED_ANNOTATION]: 'yes' } as const;
