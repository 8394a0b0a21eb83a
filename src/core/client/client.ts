// The one client shape every controller uses, in the master (over the object service) and elsewhere (over HTTP).
import type { KindDefinition } from '../api/kind.js';
import type { KubeObject } from '../api/meta.js';

export interface ObjectRef {
  namespace?: string;
  name: string;
}

export interface ListOptions {
  /** Omit for namespaced kinds to list across all namespaces. */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
}

export interface WatchOptions extends ListOptions {
  /** Resume after this revision; absent (or '0') starts with an ADDED event for every current object. */
  resourceVersion?: string;
  signal?: AbortSignal;
}

export interface ObjectList {
  apiVersion?: string;
  kind?: string;
  metadata: { resourceVersion?: string };
  items: KubeObject[];
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK';

export interface WatchEvent {
  type: WatchEventType;
  object: KubeObject;
}

export type PropagationPolicy = 'Background' | 'Foreground' | 'Orphan';

export interface WriteOptions {
  /** `status` (or `scale`) writes that subresource; absent writes the object. */
  subresource?: string;
}

export interface DeleteOptions {
  /** The delete happens only while the object still has this uid (and resourceVersion): never a namesake's. */
  preconditions?: { uid?: string; resourceVersion?: string };
  propagationPolicy?: PropagationPolicy;
  /** Pods: how long the kubelet gives the containers; 0 removes the object at once. */
  gracePeriodSeconds?: number;
}

/** The namespace a create goes to: the one asked for, else the object's own (as the HTTP client posts to it). */
export function createNamespace(def: KindDefinition, object: unknown, namespace: string | undefined): string | undefined {
  if (!def.namespaced) return undefined;
  return namespace ?? ((object as { metadata?: { namespace?: unknown } })?.metadata?.namespace as string | undefined);
}

/**
 * What a controller may ask of the API, with the same method shapes in every process, so that a
 * controller moves between the master and another process unchanged. Errors are the typed
 * ApiErrors of core/errors.ts (NotFoundError, ConflictError, ...) whichever side answers.
 */
export interface Client {
  get(def: KindDefinition, ref: ObjectRef): Promise<KubeObject>;
  list(def: KindDefinition, options?: ListOptions): Promise<ObjectList>;
  create(def: KindDefinition, object: unknown, options?: { namespace?: string }): Promise<KubeObject>;
  /** A full update; a stale metadata.resourceVersion fails with ConflictError. */
  replace(def: KindDefinition, ref: ObjectRef, object: unknown, options?: WriteOptions): Promise<KubeObject>;
  /** JSON merge patch (RFC 7386): `null` deletes a key, arrays are replaced; a resourceVersion in it is a precondition. */
  patch(def: KindDefinition, ref: ObjectRef, patch: unknown, options?: WriteOptions): Promise<KubeObject>;
  delete(def: KindDefinition, ref: ObjectRef, options?: DeleteOptions): Promise<KubeObject>;
  /** Ordered events after `resourceVersion`; GoneError when it was compacted. Ends when the signal aborts. */
  watch(def: KindDefinition, options?: WatchOptions): AsyncIterable<WatchEvent>;
}
