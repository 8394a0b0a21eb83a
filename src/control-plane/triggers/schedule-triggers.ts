// Scheduled triggers, in the master: invokes each Function with spec.triggers[].schedule through the activator at every tick of its cron schedule.
import { abortableSleep } from '../../core/abortable-sleep.js';
import { nextCronTime } from '../../core/api/cron.js';
import { functionKind } from '../../core/api/function.js';
import type { KubeObject } from '../../core/api/meta.js';
import type { InformerFactory } from '../../core/controller/informer-factory.js';
import type { Informer } from '../../core/controller/informer.js';
import type { FunctionInvoker } from '../activator/invoker.js';
import { planTicks, scheduleEntries, type Planned, type ScheduleEntry } from './schedule-plan.js';

export interface ScheduleTriggersOptions {
  /** Where the Function informer comes from (the process starts it); the calls go through the invoker, not the API. */
  informers: InformerFactory;
  invoker: FunctionInvoker;
  now?: () => Date;
  /** Waits until the next tick; settles early when `signal` aborts (default: a real timer). */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** The longest sleep between looks (default 60 s), so a clock set forward is noticed. */
  maxSleepMs?: number;
  log?: (message: string) => void;
}

/** The next time a schedule fires after `afterMs`, as ms; undefined for one that never does (or does not parse). */
export function nextTickMs(schedule: string, afterMs: number): number | undefined {
  try {
    return nextCronTime(schedule, new Date(afterMs))?.getTime();
  } catch {
    return undefined;
  }
}

export class ScheduleTriggers {
  readonly informer: Informer<KubeObject>;
  readonly #o: ScheduleTriggersOptions;
  readonly #now: () => Date;
  readonly #sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  readonly #log: (message: string) => void;
  /** Triggers whose last call has not answered yet: a slow function is not called again on top of itself. */
  readonly #inFlight = new Set<string>();
  readonly #calls = new Set<Promise<void>>();
  #planned = new Map<string, Planned>();
  /** Ends the current sleep: a Function changed, so schedules are looked at again. */
  #wake = new AbortController();

  constructor(options: ScheduleTriggersOptions) {
    this.#o = options;
    this.#now = options.now ?? (() => new Date());
    this.#sleep = options.sleep ?? abortableSleep;
    this.#log = options.log ?? (() => {});
    this.informer = options.informers.informer(functionKind);
    const changed = () => this.#wake.abort();
    this.informer.addHandlers({ onAdd: changed, onUpdate: changed, onDelete: changed });
  }

  /** When each trigger fires next (for tests and logs). */
  get planned(): ReadonlyMap<string, Planned> {
    return this.#planned;
  }

  async start(signal: AbortSignal): Promise<void> {
    await Promise.race([this.informer.whenSynced(), new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }))]);
    const maxSleep = this.#o.maxSleepMs ?? 60_000;
    while (!signal.aborted) {
      this.#wake = new AbortController();
      const now = this.#now().getTime();
      const plan = planTicks(this.informer.list().flatMap(scheduleEntries), this.#planned, now, nextTickMs);
      this.#planned = plan.planned;
      for (const entry of plan.due) this.#fire(entry, signal);
      const wait = Math.min(maxSleep, Math.max(0, (plan.wakeAt ?? Infinity) - now));
      await this.#sleep(wait, AbortSignal.any([signal, this.#wake.signal]));
    }
    await Promise.all([...this.#calls]);
  }

  #fire(entry: ScheduleEntry, signal: AbortSignal): void {
    if (this.#inFlight.has(entry.id)) {
      this.#log(`schedule: ${entry.namespace}/${entry.function} (${entry.schedule}): the previous call has not answered yet; this tick is skipped`);
      return;
    }
    this.#inFlight.add(entry.id);
    const call = (async () => {
      try {
        const res = await this.#o.invoker.invoke({
          namespace: entry.namespace,
          name: entry.function,
          method: 'POST',
          trigger: 'schedule',
          // A call waiting on a cold start does not hold up the master's shutdown.
          signal,
          ...(entry.data !== undefined ? { body: Buffer.from(JSON.stringify(entry.data)), headers: { 'content-type': 'application/json' } } : {}),
        });
        if (res.status >= 400)
          this.#log(`schedule: ${entry.namespace}/${entry.function} (${entry.schedule}) answered ${res.status} (invocation ${res.invocationId})`);
      } catch (err) {
        this.#log(`schedule: calling ${entry.namespace}/${entry.function} (${entry.schedule}) failed: ${err instanceof Error ? err.message : String(err)}`);
      } finally {
        this.#inFlight.delete(entry.id);
      }
    })();
    this.#calls.add(call);
    void call.finally(() => this.#calls.delete(call));
  }
}
