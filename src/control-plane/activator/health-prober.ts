// Probes new function pods' /healthz directly every few ms, as Knative's activator does, so a cold start need not wait for the kubelet's probe and status write.
import http from 'node:http';
import { tracebackWhere } from './fail-fast.js';

export interface ProbeTarget {
  uid: string;
  ip: string;
  port: number;
}

export interface HealthProberOptions {
  /** Between attempts on one pod (Knative probes every ~25 ms; the runtime starts in tens of ms). */
  intervalMs?: number;
  /** One attempt's limit: a pod address with no container behind it yet may not answer at all. */
  attemptTimeoutMs?: number;
  /** Give up on a pod after this long; the kubelet's readiness still counts. */
  giveUpAfterMs?: number;
  onHealthy(uid: string): void;
  /** The runtime answered, but cannot serve: its handler did not import (the body says why). */
  onFailed(uid: string, message: string): void;
}

type Attempt = { type: 'healthy' } | { type: 'failed'; message: string } | { type: 'retry' };

function probeOnce(t: ProbeTarget, timeoutMs: number): Promise<Attempt> {
  return new Promise((resolve) => {
    const req = http.get({ host: t.ip, port: t.port, path: '/healthz', agent: false, timeout: timeoutMs }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        if (text.length < 64 * 1024) text += d;
      });
      res.on('end', () => {
        if (res.statusCode === 200) return resolve({ type: 'healthy' });
        let message = `/healthz answered ${res.statusCode}`;
        try {
          const body = JSON.parse(text) as { error?: unknown; traceback?: unknown };
          // Where it was raised, from the traceback: the line the user has to look at.
          const where = tracebackWhere(typeof body.traceback === 'string' ? body.traceback : undefined);
          if (typeof body.error === 'string') message = where ? `${body.error} (raised at ${where})` : body.error;
        } catch {
          /* not the runtime's JSON */
        }
        // 500 is the runtime saying its handler cannot be loaded; anything else may still come good.
        resolve(res.statusCode === 500 ? { type: 'failed', message } : { type: 'retry' });
      });
      res.on('error', () => resolve({ type: 'retry' }));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve({ type: 'retry' }));
  });
}

export class HealthProber {
  readonly #o: Required<Omit<HealthProberOptions, 'onHealthy' | 'onFailed'>> & Pick<HealthProberOptions, 'onHealthy' | 'onFailed'>;
  readonly #running = new Map<string, AbortController>();
  /** Pods probed to an end (healthy, failed, given up): not probed again while they are still asked for. */
  readonly #done = new Set<string>();

  constructor(options: HealthProberOptions) {
    this.#o = { intervalMs: 10, attemptTimeoutMs: 500, giveUpAfterMs: 120_000, ...options };
  }

  /** Probes exactly these pods: starts loops for new ones, stops those no longer wanted. */
  sync(targets: readonly ProbeTarget[]): void {
    const wanted = new Map(targets.map((t) => [t.uid, t]));
    for (const [uid, stop] of this.#running) {
      if (!wanted.has(uid)) {
        stop.abort();
        this.#running.delete(uid);
      }
    }
    for (const uid of this.#done) if (!wanted.has(uid)) this.#done.delete(uid);
    for (const t of wanted.values()) {
      if (this.#running.has(t.uid) || this.#done.has(t.uid)) continue;
      const stop = new AbortController();
      this.#running.set(t.uid, stop);
      void this.#loop(t, stop.signal);
    }
  }

  get probing(): number {
    return this.#running.size;
  }

  close(): void {
    for (const stop of this.#running.values()) stop.abort();
    this.#running.clear();
    this.#done.clear();
  }

  async #loop(t: ProbeTarget, signal: AbortSignal): Promise<void> {
    const giveUpAt = Date.now() + this.#o.giveUpAfterMs;
    while (!signal.aborted && Date.now() < giveUpAt) {
      const attempt = await probeOnce(t, this.#o.attemptTimeoutMs);
      if (signal.aborted) return;
      if (attempt.type === 'healthy') {
        this.#finish(t.uid);
        this.#o.onHealthy(t.uid);
        return;
      }
      if (attempt.type === 'failed') {
        this.#finish(t.uid);
        this.#o.onFailed(t.uid, attempt.message);
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, this.#o.intervalMs));
    }
    if (!signal.aborted) this.#finish(t.uid);
  }

  #finish(uid: string): void {
    this.#running.delete(uid);
    this.#done.add(uid);
  }
}
