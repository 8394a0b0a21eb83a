// The Event the function autoscaler leaves on a Function when it writes a new scale (ScaledUp, ScaledDown, ScaledToZero).
import { randomBytes } from 'node:crypto';
import type { KubeObject } from '../../core/api/meta.js';
import { timestamp } from '../../core/api/timestamp.js';
import type { ScaleChange } from './function-autoscaler.js';

export const SCALE_EVENT_COMPONENT = 'function-autoscaler';

export function scaleReason(change: Pick<ScaleChange, 'from' | 'to'>): 'ScaledToZero' | 'ScaledUp' | 'ScaledDown' {
  return change.to === 0 ? 'ScaledToZero' : change.to > change.from ? 'ScaledUp' : 'ScaledDown';
}

/**
 * The Event's body, in the shape every master-side recorder writes (reconcilers/record-event.ts):
 * a name of its own per event, the function as the involved object, count 1.
 */
export function scaleEvent(fn: Pick<KubeObject, 'apiVersion' | 'kind' | 'metadata'>, change: ScaleChange, now: Date): Record<string, unknown> {
  const namespace = fn.metadata.namespace ?? 'default';
  const at = timestamp(now);
  return {
    metadata: { name: `${fn.metadata.name}.${randomBytes(8).toString('hex')}`, namespace },
    involvedObject: {
      apiVersion: fn.apiVersion,
      kind: fn.kind,
      name: fn.metadata.name,
      ...(fn.metadata.namespace ? { namespace: fn.metadata.namespace } : {}),
      ...(fn.metadata.uid ? { uid: fn.metadata.uid } : {}),
    },
    reason: scaleReason(change),
    message: `ReplicaSet ${change.replicaSet.metadata.name}: ${change.from} -> ${change.to} (${change.reason})`,
    type: 'Normal',
    source: { component: SCALE_EVENT_COMPONENT },
    firstTimestamp: at,
    lastTimestamp: at,
    count: 1,
    reportingComponent: SCALE_EVENT_COMPONENT,
  };
}
