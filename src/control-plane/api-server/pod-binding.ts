// Binds a pod to a node: one compare-and-swap that sets spec.nodeName and the PodScheduled condition, so no pod is ever bound twice.
import type { KubeObject } from '../../core/api/meta.js';
import { podKind, type Pod } from '../../core/api/pod.js';
import { withPodScheduled } from '../../core/api/pod-scheduled.js';
import { storeKey } from '../../core/api/registry.js';
import { ConflictError, NotFoundError } from '../../core/errors.js';
import type { Store } from '../../core/store/store.js';
import type { ObjectService } from './object-service.js';
import { withResourceVersion } from './objects.js';

export interface BindPodRequest {
  namespace: string;
  name: string;
  nodeName: string;
  /** Binding.metadata.uid: bind only this incarnation of the pod (a pod deleted and made again under the name is another). */
  uid?: string;
  /**
   * The pod as the caller last saw it, with its resourceVersion (the scheduler's informer copy):
   * the first attempt writes against it without reading etcd. A stale copy costs one conflict
   * and a read, never a wrong write.
   */
  seen?: Pod;
}

/** The stored pod with the node set: a new object, the input untouched. */
export function boundPod(pod: Pod, nodeName: string, now: Date): Pod {
  const { resourceVersion: _rv, ...metadata } = pod.metadata;
  return {
    ...pod,
    metadata,
    spec: { ...pod.spec, nodeName },
    status: { ...pod.status, conditions: withPodScheduled(pod.status?.conditions, { status: 'True' }, now) },
  } as Pod;
}

function refuse(pod: Pod, request: BindPodRequest): ConflictError | undefined {
  const { name } = request;
  if (request.uid && pod.metadata.uid !== request.uid) {
    return new ConflictError(
      `Operation cannot be fulfilled on pods/binding "${name}": the UID in the binding (${request.uid}) does not match the pod's (${pod.metadata.uid})`,
      { kind: 'pods', name },
    );
  }
  if (pod.spec.nodeName) return new ConflictError(`pod ${name} is already assigned to node "${pod.spec.nodeName}"`, { kind: 'pods', name });
  if (pod.metadata.deletionTimestamp) return new ConflictError(`pod ${name} is being deleted, cannot be assigned to a host`, { kind: 'pods', name });
  return undefined;
}

/**
 * Assigns the pod to the node. Refuses (409) a pod that already has a node, one being deleted,
 * or another incarnation than `uid`; 404 when there is no such pod. A lost race with another
 * write is retried for as long as the pod stays unbound; one with another binding is a 409.
 */
export async function bindPod(store: Store, request: BindPodRequest, now: () => Date = () => new Date()): Promise<Pod> {
  const key = storeKey(podKind, request.name, request.namespace);
  let current: { value: Pod; revision: number } | undefined;
  const rv = Number(request.seen?.metadata.resourceVersion);
  if (request.seen && Number.isSafeInteger(rv) && rv > 0) current = { value: request.seen, revision: rv };
  for (let attempt = 0; attempt < 32; attempt++) {
    if (!current) {
      try {
        const entry = await store.get<Pod>(key);
        current = { value: entry.value, revision: entry.revision };
      } catch (err) {
        if (err instanceof NotFoundError) throw new NotFoundError(`pods "${request.name}" not found`, { kind: 'pods', name: request.name, cause: err });
        throw err;
      }
    }
    const refusal = refuse(current.value, request);
    if (refusal) throw refusal;
    const next = boundPod(current.value, request.nodeName, now());
    try {
      const revision = await store.update(key, next, current.revision);
      return withResourceVersion(next as KubeObject, revision) as Pod;
    } catch (err) {
      // Someone wrote the pod between our read and our write: read again and judge afresh.
      if (err instanceof ConflictError || err instanceof NotFoundError) {
        current = undefined;
        continue;
      }
      throw err;
    }
  }
  throw new ConflictError(`Operation cannot be fulfilled on pods "${request.name}": too many concurrent writes`, { kind: 'pods', name: request.name });
}

/** What the scheduler binds with: POST pods/NAME/binding for `pod` as it saw it (this uid, against its resourceVersion). */
export type PodBinder = (pod: Pod, nodeName: string) => Promise<Pod>;

/**
 * The master's scheduler binds through this, not its Client: the Client has no subresource
 * create, and a binding is no write of the pod's own (spec.nodeName cannot change by update).
 * Straight to the store, without the HTTP hop, and counted under the service view's client
 * as POST pods/NAME/binding would be.
 */
export function storePodBinder(service: ObjectService, now: () => Date = () => new Date()): PodBinder {
  return (pod, nodeName) =>
    service.counted(
      'create',
      podKind,
      'binding',
      () => bindPod(service.store, { namespace: pod.metadata.namespace!, name: pod.metadata.name!, nodeName, uid: pod.metadata.uid, seen: pod }, now),
      201,
    );
}
