// Pure rules for server-owned object fields: what create, update, status writes and delete may change.
import { randomBytes, randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { KindDefinition } from '../../core/api/kind.js';
import type { KubeObject, ObjectMeta } from '../../core/api/meta.js';
import { timestamp } from '../../core/api/timestamp.js';
import { BadRequestError } from '../../core/errors.js';

/** `pods`, or `deployments.apps` for kinds outside the core group (as Kubernetes names them in messages). */
export function qualifiedResource(def: KindDefinition): string {
  return def.group ? `${def.resource}.${def.group}` : def.resource;
}

/** Lower-case alphanumerics without vowels, as Kubernetes uses for generateName suffixes. */
const SUFFIX_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

export function generateNameSuffix(length = 5): string {
  const bytes = randomBytes(length);
  let out = '';
  for (const b of bytes) out += SUFFIX_ALPHABET[b % SUFFIX_ALPHABET.length];
  return out;
}

/** Top-level fields other than the type and object metadata and status: the "spec" for change detection. */
function specPart(obj: Record<string, unknown>): Record<string, unknown> {
  const { apiVersion: _a, kind: _k, metadata: _m, status: _s, ...rest } = obj;
  return rest;
}

export interface RequestScope {
  def: KindDefinition;
  /** Namespace from the path (namespaced kinds only). */
  namespace?: string;
  /** Name from the path (updates only). */
  name?: string;
}

/** Checks apiVersion/kind/namespace/name of a body against the path and fills what is missing. */
export function reconcileIdentity(scope: RequestScope, body: Record<string, unknown>, apiVersion: string): Record<string, unknown> {
  const { def } = scope;
  if (body.apiVersion !== undefined && body.apiVersion !== apiVersion) {
    throw new BadRequestError(`the API version in the data (${String(body.apiVersion)}) does not match the expected API version (${apiVersion})`);
  }
  if (body.kind !== undefined && body.kind !== def.kind) {
    throw new BadRequestError(`the kind in the data (${String(body.kind)}) does not match the expected kind (${def.kind})`);
  }
  const rawMeta = body.metadata;
  if (rawMeta !== undefined && (typeof rawMeta !== 'object' || rawMeta === null || Array.isArray(rawMeta))) {
    throw new BadRequestError('metadata must be an object');
  }
  const metadata: Record<string, unknown> = { ...(rawMeta as Record<string, unknown> | undefined) };
  if (def.namespaced) {
    if (metadata.namespace !== undefined && metadata.namespace !== '' && metadata.namespace !== scope.namespace) {
      throw new BadRequestError('the namespace of the provided object does not match the namespace sent on the request');
    }
    metadata.namespace = scope.namespace;
  } else {
    delete metadata.namespace;
  }
  if (scope.name !== undefined) {
    if (metadata.name !== undefined && metadata.name !== scope.name) {
      throw new BadRequestError(`the name of the object (${String(metadata.name)}) does not match the name on the URL (${scope.name})`);
    }
    metadata.name = scope.name;
  }
  return { ...body, apiVersion, kind: def.kind, metadata };
}

/** Fields the server sets on create: uid, creation time, generation; status starts empty. */
export function prepareCreate(def: KindDefinition, body: Record<string, unknown>, now: Date): Record<string, unknown> {
  const meta = { ...(body.metadata as Record<string, unknown>) };
  if (meta.resourceVersion !== undefined && meta.resourceVersion !== '') {
    throw new BadRequestError('resourceVersion should not be set on objects to be created');
  }
  if ((meta.name === undefined || meta.name === '') && typeof meta.generateName === 'string' && meta.generateName !== '') {
    meta.name = `${meta.generateName}${generateNameSuffix()}`;
  }
  delete meta.resourceVersion;
  delete meta.deletionTimestamp;
  delete meta.deletionGracePeriodSeconds;
  meta.uid = randomUUID();
  meta.creationTimestamp = timestamp(now);
  meta.generation = 1;
  const out: Record<string, unknown> = { ...body, metadata: meta };
  // Status is written only through /status; a create may not smuggle one in.
  if (def.statusSubresource) delete out.status;
  return out;
}

/**
 * A spec write (PUT or PATCH on the object): keeps server-owned metadata and, for kinds
 * with a status subresource, the old status; bumps generation when the spec changed.
 */
export function prepareUpdate(def: KindDefinition, existing: KubeObject, body: Record<string, unknown>): Record<string, unknown> {
  const old = existing.metadata;
  const meta: Record<string, unknown> = { ...(body.metadata as Record<string, unknown>) };
  meta.uid = old.uid;
  meta.creationTimestamp = old.creationTimestamp;
  meta.generation = old.generation ?? 1;
  if (old.deletionTimestamp) {
    meta.deletionTimestamp = old.deletionTimestamp;
    if (old.deletionGracePeriodSeconds !== undefined) meta.deletionGracePeriodSeconds = old.deletionGracePeriodSeconds;
  } else {
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
  }
  delete meta.resourceVersion;
  if (meta.generateName === undefined && old.generateName !== undefined) meta.generateName = old.generateName;
  const out: Record<string, unknown> = { ...body, metadata: meta };
  if (def.statusSubresource) {
    if (existing.status === undefined) delete out.status;
    else out.status = existing.status;
  }
  if (!isDeepStrictEqual(specPart(out), specPart(existing as Record<string, unknown>))) {
    meta.generation = (old.generation ?? 1) + 1;
  }
  return out;
}

/** A write to /status: only status changes; everything else stays as stored. */
export function prepareStatusUpdate(existing: KubeObject, body: Record<string, unknown>): Record<string, unknown> {
  const { resourceVersion: _rv, ...meta } = existing.metadata;
  const out: Record<string, unknown> = { ...existing, metadata: meta };
  if (body.status === undefined) delete out.status;
  else out.status = body.status;
  return out;
}

/** True once an object marked for deletion has no finalizers left: the store entry can go. */
export function readyToRemove(obj: KubeObject): boolean {
  if (!obj.metadata.deletionTimestamp) return false;
  if (obj.metadata.finalizers?.length) return false;
  const specFinalizers = (obj.spec as { finalizers?: string[] } | undefined)?.finalizers;
  return obj.kind !== 'Namespace' || !specFinalizers?.length;
}

/**
 * Marks an object for deletion (finalizers or a pod's graceful termination pending). As in
 * Kubernetes, deletionTimestamp is when the grace period ends; a later delete may shorten it.
 */
export function markDeleting(obj: KubeObject, now: Date, gracePeriodSeconds = 0): Record<string, unknown> {
  const { resourceVersion: _rv, ...meta } = obj.metadata;
  const metadata: ObjectMeta = { ...meta };
  const shorter = gracePeriodSeconds < (metadata.deletionGracePeriodSeconds ?? Infinity);
  if (!metadata.deletionTimestamp || shorter) {
    metadata.deletionTimestamp = timestamp(new Date(now.getTime() + gracePeriodSeconds * 1000));
    metadata.deletionGracePeriodSeconds = gracePeriodSeconds;
  }
  const out: Record<string, unknown> = { ...obj, metadata };
  if (obj.kind === 'Namespace' && !obj.metadata.deletionTimestamp) {
    // The namespace reconciler empties it, then drops the `kubernetes` finalizer.
    const spec = (obj.spec ?? {}) as { finalizers?: string[] };
    out.spec = { ...spec, finalizers: [...new Set([...(spec.finalizers ?? []), 'kubernetes'])] };
    out.status = { ...(obj.status as object | undefined), phase: 'Terminating' };
  }
  return out;
}

/** Adds the resourceVersion (the store revision) to an object on its way out. */
export function withResourceVersion<T extends KubeObject>(value: T, revision: number): T {
  return { ...value, metadata: { ...value.metadata, resourceVersion: String(revision) } };
}

/** Deep equality used to skip no-op writes (Kubernetes does not bump resourceVersion for them). */
export function sameObject(a: unknown, b: unknown): boolean {
  return isDeepStrictEqual(a, b);
}
