// What the function autoscaler's Event on a Function says when it writes a new scale (ScaledUp, ScaledDown, ScaledToZero); recordEvent writes it.
import type { ScaleChange } from './function-autoscaler.js';

export const SCALE_EVENT_COMPONENT = 'function-autoscaler';

export function scaleReason(change: Pick<ScaleChange, 'from' | 'to'>): 'ScaledToZero' | 'ScaledUp' | 'ScaledDown' {
  return change.to === 0 ? 'ScaledToZero' : change.to > change.from ? 'ScaledUp' : 'ScaledDown';
}

export function scaleMessage(change: Pick<ScaleChange, 'replicaSet' | 'from' | 'to' | 'reason'>): string {
  return `ReplicaSet ${change.replicaSet.metadata.name}: ${change.from} -> ${change.to} (${change.reason})`;
}
