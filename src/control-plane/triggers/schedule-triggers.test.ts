// ScheduleTriggers on a memory store with a fake clock: a Function's schedule is called through the invoker at its tick (trigger schedule, with its data), and follows the Function's changes.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { functionKind } from '../../core/api/function.js';
import { InformerFactory } from '../../core/controller/informer-factory.js';
import { MemoryStore } from '../../core/store/memory-store.js';
import { waitFor } from '../../core/wait-for.js';
import type { FunctionInvoker, InvokeRequest, InvokeResult } from '../activator/invoker.js';
import { LocalClient } from '../api-server/local-client.js';
import { ObjectService } from '../api-server/object-service.js';
import { ensureSystemNamespaces } from '../api-server/server.js';
import { ScheduleTriggers } from './schedule-triggers.js';

/** A clock that moves only when told; sleepers wake when it passes their time or their signal aborts. */
class FakeClock {
  t: number;
  readonly sleeps: number[] = [];
  #sleepers: { until: number; resolve: () => void }[] = [];

  constructor(start: Date) {
    this.t = start.getTime();
  }

  now = (): Date => new Date(this.t);

  sleep = (ms: number, signal: AbortSignal): Promise<void> => {
    this.sleeps.push(ms);
    return new Promise((resolve) => {
      const sleeper = { until: this.t + ms, resolve };
      this.#sleepers.push(sleeper);
      signal.addEventListener('abort', () => resolve(), { once: true });
    });
  };

  set(date: Date): void {
    this.t = date.getTime();
    for (const s of this.#sleepers.filter((x) => x.until <= this.t)) s.resolve();
    this.#sleepers = this.#sleepers.filter((x) => x.until > this.t);
  }
}

class RecordingInvoker implements FunctionInvoker {
  readonly calls: InvokeRequest[] = [];
  async invoke(req: InvokeRequest): Promise<InvokeResult> {
    this.calls.push(req);
    return { status: 200, headers: {}, body: Buffer.from('null'), invocationId: String(this.calls.length) };
  }
}

describe('ScheduleTriggers', () => {
  it('calls a function at each tick of its schedule, from the next tick on, and follows changes', async () => {
    const service = new ObjectService({ store: new MemoryStore() });
    await ensureSystemNamespaces(service);
    const code = { files: { 'handler.py': 'def handler(event, context):\n    return event\n' } };
    await service.create(functionKind, 'default', {
      metadata: { name: 'tick' },
      spec: { code, triggers: [{ schedule: '* * * * *', data: { hello: 'cron' } }] },
    });
    const clock = new FakeClock(new Date(2024, 0, 1, 10, 0, 30));
    const invoker = new RecordingInvoker();
    const informers = new InformerFactory({ client: new LocalClient(service) });
    const triggers = new ScheduleTriggers({ informers, invoker, now: clock.now, sleep: clock.sleep });
    const ac = new AbortController();
    const informing = informers.start(ac.signal);
    const running = triggers.start(ac.signal);
    try {
      await waitFor(() => triggers.planned.get('default/tick#0')?.at === new Date(2024, 0, 1, 10, 1, 0).getTime(), { description: 'the first tick planned' });
      assert.equal(invoker.calls.length, 0, 'nothing fires at start');
      assert.equal(clock.sleeps.at(-1), 30_000);

      clock.set(new Date(2024, 0, 1, 10, 1, 0));
      await waitFor(() => invoker.calls.length === 1, { description: 'the 10:01 call' });
      const call = invoker.calls[0]!;
      assert.deepEqual([call.namespace, call.name, call.trigger, call.method], ['default', 'tick', 'schedule', 'POST']);
      assert.deepEqual(JSON.parse((call.body as Buffer).toString()), { hello: 'cron' });

      // Ten minutes pass at once (a busy or suspended master): one call, not ten.
      clock.set(new Date(2024, 0, 1, 10, 11, 5));
      await waitFor(() => invoker.calls.length === 2, { description: 'one catch-up call' });
      await waitFor(() => triggers.planned.get('default/tick#0')?.at === new Date(2024, 0, 1, 10, 12, 0).getTime(), { description: 'the 10:12 tick planned' });

      // A new schedule replaces the old one; removing the triggers stops the calls.
      await service.patch(functionKind, 'default', 'tick', { spec: { triggers: [{ schedule: '0 * * * *' }] } });
      await waitFor(() => triggers.planned.get('default/tick#0')?.schedule === '0 * * * *', { description: 'the new schedule planned' });
      assert.equal(triggers.planned.get('default/tick#0')!.at, new Date(2024, 0, 1, 11, 0, 0).getTime());
      await service.patch(functionKind, 'default', 'tick', { spec: { triggers: null } });
      await waitFor(() => triggers.planned.size === 0, { description: 'no trigger planned' });
      clock.set(new Date(2024, 0, 1, 12, 0, 0));
      assert.equal(invoker.calls.length, 2);
    } finally {
      ac.abort();
      await Promise.all([running, informing]);
    }
  });
});
