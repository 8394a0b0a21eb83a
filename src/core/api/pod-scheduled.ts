// The PodScheduled condition as both its writers set it: the binding (True) and the scheduler (False, Unschedulable).
import type { Condition } from './meta.js';
import { timestamp } from './timestamp.js';

/** Conditions with PodScheduled set to `wanted`, keeping the transition time when the status does not change. */
export function withPodScheduled(conditions: readonly Condition[] | undefined, wanted: Omit<Condition, 'type' | 'lastTransitionTime'>, now: Date): Condition[] {
  const list = [...(conditions ?? [])];
  const i = list.findIndex((c) => c.type === 'PodScheduled');
  const old = i >= 0 ? list[i] : undefined;
  const next: Condition = {
    type: 'PodScheduled',
    status: wanted.status,
    ...(wanted.reason ? { reason: wanted.reason } : {}),
    ...(wanted.message ? { message: wanted.message } : {}),
    lastProbeTime: null,
    lastTransitionTime: old && old.status === wanted.status && old.lastTransitionTime ? old.lastTransitionTime : timestamp(now),
  };
  if (i >= 0) list[i] = next;
  else list.push(next);
  return list;
}
