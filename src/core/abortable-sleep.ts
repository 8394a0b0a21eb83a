// A sleep that ends early when its signal aborts: how long-running loops wait between rounds and still stop at once.

/** setTimeout takes at most 2^31-1 ms; longer waits (a workflow's Wait of a month) are slept in pieces. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Resolves after `ms`, or early when `signal` aborts (never rejects). */
export async function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  let left = ms;
  while (left > 0 && !signal.aborted) {
    const chunk = Math.min(left, MAX_TIMER_MS);
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, chunk);
      signal.addEventListener('abort', done, { once: true });
    });
    left -= chunk;
  }
}
