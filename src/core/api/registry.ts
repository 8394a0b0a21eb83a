// The kind registry: every API kind, one line each, and lookups by name, path and apiVersion.
import { apiVersionOf, type KindDefinition } from './kind.js';
import { namespaceKind } from './namespace.js';
import { daemonSetKind } from './daemonset.js';
import { deploymentKind } from './deployment.js';
import { cronJobKind } from './cronjob.js';
import { dnsKind } from './dns.js';
import { endpointsKind } from './endpoints.js';
import { endpointSliceKind } from './endpointslice.js';
import { eventKind } from './event.js';
import { functionKind } from './function.js';
import { functionVersionKind } from './function-version.js';
import { gpuJobKind } from './gpujob.js';
import { ingressKind } from './ingress.js';
import { ingressClassKind } from './ingressclass.js';
import { horizontalPodAutoscalerKind } from './horizontalpodautoscaler.js';
import { jobKind } from './job.js';
import { leaseKind } from './lease.js';
import { certificateSigningRequestKind } from './certificate-signing-request.js';
import { nodeKind } from './node.js';
import { podKind } from './pod.js';
import { persistentVolumeKind } from './persistent-volume.js';
import { persistentVolumeClaimKind } from './persistent-volume-claim.js';
import { storageClassKind } from './storage-class.js';
import { configMapKind } from './configmap.js';
import { podDisruptionBudgetKind } from './poddisruptionbudget.js';
import { clusterRoleBindingKind, clusterRoleKind, roleBindingKind, roleKind } from './rbac.js';
import { replicaSetKind } from './replicaset.js';
import { secretKind } from './secret.js';
import { serviceKind } from './service.js';
import { serviceAccountKind } from './serviceaccount.js';
import { slurmClusterKind } from './slurmcluster.js';
import { workflowKind } from './workflow.js';
import { crdKind } from './crd.js';

/** Adding a kind: write its schema file, then add one line here. */
const builtInKinds: readonly KindDefinition[] = [
  namespaceKind,
  nodeKind,
  podKind,
  serviceKind,
  endpointsKind,
  endpointSliceKind,
  eventKind,
  replicaSetKind,
  deploymentKind,
  horizontalPodAutoscalerKind,
  dnsKind,
  functionKind,
  functionVersionKind,
  workflowKind,
  secretKind,
  configMapKind,
  slurmClusterKind,
  gpuJobKind,
  roleKind,
  clusterRoleKind,
  roleBindingKind,
  clusterRoleBindingKind,
  leaseKind,
  certificateSigningRequestKind,
  jobKind,
  cronJobKind,
  daemonSetKind,
  podDisruptionBudgetKind,
  serviceAccountKind,
  ingressKind,
  ingressClassKind,
  persistentVolumeKind,
  persistentVolumeClaimKind,
  storageClassKind,
  crdKind,
];

/** Every kind served now: the built-in ones, then those CRDs added (a live list: it changes as CRDs come and go). */
const liveKinds: KindDefinition[] = [...builtInKinds];
export const kinds: readonly KindDefinition[] = liveKinds;
const addedBy = new Map<string, readonly KindDefinition[]>();

/**
 * Sets the kinds one source (a CRD, by name) adds, replacing what it added before; an empty list
 * removes them. A kind may not take the place of a built-in one.
 */
export function setAddedKinds(source: string, defs: readonly KindDefinition[]): void {
  for (const old of addedBy.get(source) ?? []) liveKinds.splice(liveKinds.indexOf(old), 1);
  const fresh = defs.filter((d) => !builtInKinds.some((b) => b.group === d.group && b.resource === d.resource));
  if (fresh.length) addedBy.set(source, fresh);
  else addedBy.delete(source);
  liveKinds.push(...fresh);
}

/** Finds a kind by what a user types: kind, plural, singular or short name (case-insensitive), optionally `name.group`. */
export function kindByName(name: string): KindDefinition | undefined {
  const lower = name.toLowerCase();
  const dot = lower.indexOf('.');
  const [base, group] = dot > 0 ? [lower.slice(0, dot), lower.slice(dot + 1)] : [lower, undefined];
  return kinds.find(
    (k) =>
      (group === undefined || k.group === group) &&
      (k.resource === base || k.singular === base || k.kind.toLowerCase() === base || k.shortNames.includes(base)),
  );
}

/** Finds a kind by its place in API paths (`''`/`v1`/`pods`, `apps`/`v1`/`deployments`). */
export function kindByResource(group: string, version: string, resource: string): KindDefinition | undefined {
  return kinds.find((k) => k.group === group && k.version === version && k.resource === resource);
}

/** Finds a kind from an object's `apiVersion` and `kind`. */
export function kindByApiVersion(apiVersion: string, kind: string): KindDefinition | undefined {
  return kinds.find((k) => apiVersionOf(k) === apiVersion && k.kind === kind);
}

/** The base path of a kind's collection: `/api/v1` or `/apis/apps/v1`, plus namespace and resource. */
export function collectionPath(def: KindDefinition, namespace?: string): string {
  const root = def.group ? `/apis/${def.group}/${def.version}` : `/api/${def.version}`;
  return def.namespaced && namespace ? `${root}/namespaces/${encodeURIComponent(namespace)}/${def.resource}` : `${root}/${def.resource}`;
}

/** The path of one object. */
export function objectPath(def: KindDefinition, name: string, namespace?: string): string {
  return `${collectionPath(def, namespace)}/${encodeURIComponent(name)}`;
}

/** The store key of an object: `/registry/{group}/{resource}/{namespace}/{name}` (`core` for the core group). */
export function storeKey(def: KindDefinition, name: string, namespace?: string): string {
  const group = def.group || 'core';
  return def.namespaced ? `/registry/${group}/${def.resource}/${namespace}/${name}` : `/registry/${group}/${def.resource}/${name}`;
}

/** The store prefix of a kind's objects, in one namespace or in all. */
export function storePrefix(def: KindDefinition, namespace?: string): string {
  const group = def.group || 'core';
  return def.namespaced && namespace ? `/registry/${group}/${def.resource}/${namespace}/` : `/registry/${group}/${def.resource}/`;
}
