// Pure decisions of scheduled triggers: which functions' schedules are due now, and when each fires next.
import type { KubeObject } from '../../core/api/meta.js';

/** One `spec.triggers[i].schedule` of one Function. */
export interface ScheduleEntry {
  /** `ns/name#i`: a trigger's identity across changes of its Function. */
  id: string;
  namespace: string;
  function: string;
  schedule: string;
  /** The event the function gets (its request body as JSON); none when absent. */
  data?: unknown;
}

/** When an entry fires next, under the schedule it was planned with. */
export interface Planned {
  schedule: string;
  at: number;
}

interface FunctionWithTriggers extends KubeObject {
  spec?: { triggers?: { schedule?: unknown; data?: unknown }[] };
}

/** A Function's scheduled triggers; one being deleted has none. */
export function scheduleEntries(fn: KubeObject): ScheduleEntry[] {
  const f = fn as FunctionWithTriggers;
  if (f.metadata.deletionTimestamp) return [];
  const namespace = f.metadata.namespace ?? 'default';
  const name = f.metadata.name ?? '';
  const out: ScheduleEntry[] = [];
  (f.spec?.triggers ?? []).forEach((t, i) => {
    if (typeof t?.schedule !== 'string') return;
    out.push({ id: `${namespace}/${name}#${i}`, namespace, function: name, schedule: t.schedule, ...(t.data !== undefined ? { data: t.data } : {}) });
  });
  return out;
}

export interface TickPlan {
  /** Entries to invoke now. */
  due: ScheduleEntry[];
  /** The next time of every entry (entries that are gone are dropped). */
  planned: Map<string, Planned>;
  /** The earliest planned time, when there is one: when to look again. */
  wakeAt?: number;
}

/**
 * One look at the schedules at `now` (ms). An entry fires when the time planned for it under its
 * current schedule has come; it is then planned for the schedule's next time after now, so ticks
 * missed while the master was down or busy fire once, not one by one (no catch-up storm). A new
 * entry, or one whose schedule changed, is planned from now and does not fire at once: after a
 * master restart every trigger waits for its next tick. Planning every entry afresh from now also
 * follows the clock when it is set back.
 */
export function planTicks(
  entries: readonly ScheduleEntry[],
  planned: ReadonlyMap<string, Planned>,
  now: number,
  nextTime: (schedule: string, afterMs: number) => number | undefined,
): TickPlan {
  const due: ScheduleEntry[] = [];
  const next = new Map<string, Planned>();
  let wakeAt: number | undefined;
  for (const entry of entries) {
    const before = planned.get(entry.id);
    if (before && before.schedule === entry.schedule && before.at <= now) due.push(entry);
    const at = nextTime(entry.schedule, now);
    if (at === undefined) continue;
    next.set(entry.id, { schedule: entry.schedule, at });
    if (wakeAt === undefined || at < wakeAt) wakeAt = at;
  }
  return { due, planned: next, ...(wakeAt !== undefined ? { wakeAt } : {}) };
}
